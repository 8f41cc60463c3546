/**
 * The race of a cancel and a run's end, made deterministic, against any store: the cancel
 * arrives after the run's last step finished and before the engine writes the run's end (a
 * store wrapper cancels on the engine's `setRunStatus`), or right after that end. Either the
 * cancel wins (the run ends `cancelled`, its journal says `run.cancelled` once) or it is
 * refused as too late (`ended`, nothing journaled); the journal never says both.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeClient, playbook, step, t } from '../../src/engine/engine.test-kit.js';
import { runPlaybook } from '../../src/engine/index.js';
import { createLogger } from '../../src/logging/index.js';
import type { CancelOutcome, RunStore } from '../../src/store/index.js';

const book = playbook([step({ id: 'last', kind: 'set', values: t({ done: true }) })], {
  outputs: t({ done: '${{ steps.last.outputs.done }}' }),
});

/** `inner`, cancelling the run (as `fleetbook runs cancel` from another process) around its end. */
function cancellingStore(inner: RunStore, when: 'beforeEnd' | 'afterEnd'): RunStore & { cancel?: CancelOutcome } {
  const wrapper: RunStore & { cancel?: CancelOutcome } = Object.create(inner) as RunStore;
  wrapper.setRunStatus = async (runId, status, result, options) => {
    if (when === 'beforeEnd') wrapper.cancel = await inner.cancelRun(runId, 'alice');
    const written = await inner.setRunStatus(runId, status, result, options);
    if (when === 'afterEnd') wrapper.cancel = await inner.cancelRun(runId, 'alice');
    return written;
  };
  return wrapper;
}

async function race(inner: RunStore, when: 'beforeEnd' | 'afterEnd') {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const store = cancellingStore(inner, when);
  const result = await runPlaybook(book, {
    client: fakeClient({}),
    store,
    logger: createLogger({ level: 'info', destination }),
    outputsDir: '/nonexistent/fleetbook-cancel-race',
    // Never looks for the cancel itself during the run: only the end's transaction can see it.
    cancelCheckMs: 3_600_000,
    notify: (ending) => [
      {
        key: `${ending.runId}/${ending.status}/${ending.occurrence}/ops`,
        runId: ending.runId,
        event: ending.status,
        segment: ending.occurrence,
        channel: 'ops',
        message: {},
      },
    ],
  });
  const events = (await inner.journal(result.runId)).map((entry) => entry.event);
  return { result, cancel: store.cancel, events, lines, run: await inner.getRun(result.runId) };
}

export function describeCancelRace(name: string, open: () => Promise<RunStore>): void {
  describe(`a cancel racing a run's end (${name})`, () => {
    let store: RunStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    it('wins when it is recorded after the last step and before the end is written: the run ends cancelled', async () => {
      store = await open();
      const { result, cancel, events, lines, run } = await race(store, 'beforeEnd');
      expect(cancel).toEqual({ outcome: 'requested' });
      expect(result.status).toBe('cancelled');
      expect(result.error).toMatchObject({
        code: 'RUN_CANCELLED',
        message: `run ${result.runId} was cancelled by alice`,
      });
      expect(run).toMatchObject({ status: 'cancelled', error: { code: 'RUN_CANCELLED' }, outputs: { done: true } });
      expect(events.filter((event) => event.type === 'run.cancelled')).toEqual([
        { type: 'run.cancelled', path: '', by: 'alice', requested: true },
      ]);
      // The end the driver had reached is not the run's: no success notified, none logged.
      expect(await store.listNotifications({ runId: result.runId })).toEqual([]);
      expect(lines.filter((line) => line.status !== undefined).map((line) => line.status)).toEqual(['cancelled']);
    });

    it('is refused when it comes after the end was written: the run keeps its status, the journal says nothing', async () => {
      store = await open();
      const { result, cancel, events, run } = await race(store, 'afterEnd');
      expect(cancel).toEqual({ outcome: 'ended', status: 'succeeded' });
      expect(result.status).toBe('succeeded');
      expect(run).toMatchObject({ status: 'succeeded' });
      expect(events.filter((event) => event.type === 'run.cancelled')).toEqual([]);
      expect(await store.listNotifications({ runId: result.runId })).toHaveLength(1);
    });
  });
}
