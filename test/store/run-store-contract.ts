/**
 * The RunStore contract as one suite, run against every implementation: the memory and SQLite
 * stores (`run-store-contract.test.ts`) and PostgreSQL (`test/postgres/`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJournalFold, journalPages, withoutValues } from '../../src/store/fold-journal.js';
import { checkpointJournalView, foldJournalView, VIEW_PART_RECORDS } from '../../src/store/journal-view.js';
import type { JournalEvent, NewRun, RunStore, RunStoreOptions } from '../../src/store/types.js';

/** A clock the test moves by hand. */
export function manualClock(start = '2026-03-01T10:00:00.000Z') {
  let ms = Date.parse(start);
  return { now: () => new Date(ms), advance: (byMs: number) => (ms += byMs) };
}

export function newRun(id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    playbook: 'rolling-cluster-update',
    playbookSource: 'playbooks/rolling-cluster-update.yaml',
    playbookHash: 'sha256:abc',
    inputs: { catalogVersion: '2.4.0', systemIds: [] },
    secretInputNames: ['webhookToken'],
    dryRun: false,
    trigger: { kind: 'manual' },
    startedAt: '2026-03-01T10:00:00.000Z',
    ...overrides,
  };
}

/** Longer than any clock move of the suite. */
const DRIVER_TTL_MS = 30 * 86_400_000;

/**
 * `store` whose `createRun` first takes the run's lease, as the engine does: a running run whose
 * lease lapsed or is absent reads `interrupted` (its driver died).
 */
function driven(store: RunStore): RunStore {
  const wrapper = Object.create(store) as RunStore;
  wrapper.createRun = async (run) => {
    await store.acquireLease(`run:${run.id}`, 'contract-driver', DRIVER_TTL_MS);
    return store.createRun(run);
  };
  return wrapper;
}

export interface StoreFactory {
  name: string;
  open(options: RunStoreOptions): Promise<RunStore>;
}

/** Declares the contract's tests for stores `factory` opens (a fresh, empty store per call). */
export function describeRunStoreContract(factory: StoreFactory): void {
  describe(`RunStore contract: ${factory.name}`, () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('creates a run as running, and reads it back', async () => {
      const created = await store.createRun(
        newRun('r1', { trigger: { kind: 'schedule', scheduleId: 'nightly' }, dryRun: true }),
      );
      expect(created).toEqual({
        ...newRun('r1', { trigger: { kind: 'schedule', scheduleId: 'nightly' }, dryRun: true }),
        defaultedSecretInputs: [],
        status: 'running',
        resumes: 0,
      });
      expect(await store.getRun('r1')).toEqual(created);
      // Which secrets took their default is kept (names only), for a resume to know which to ask for.
      await store.createRun(newRun('r1b', { defaultedSecretInputs: ['webhookToken'] }));
      expect((await store.getRun('r1b'))?.defaultedSecretInputs).toEqual(['webhookToken']);
      expect(await store.getRun('nope')).toBeUndefined();
    });

    it('counts runs by playbook and status in one grouped count', async () => {
      expect(await store.countRuns()).toEqual([]);
      await store.createRun(newRun('c1', { playbook: 'alpha' }));
      await store.createRun(newRun('c2', { playbook: 'alpha' }));
      await store.createRun(newRun('c3', { playbook: 'beta' }));
      await store.setRunStatus('c2', 'succeeded');
      await store.createRun(newRun('c4', { playbook: 'alpha' }));
      await store.setRunStatus('c4', 'succeeded');
      expect(await store.countRuns()).toEqual([
        { playbook: 'alpha', status: 'running', count: 1 },
        { playbook: 'alpha', status: 'succeeded', count: 2 },
        { playbook: 'beta', status: 'running', count: 1 },
      ]);
    });

    it('reads a running run whose lease lapsed or is absent as interrupted, everywhere, and cancels it at once', async () => {
      const raw = Object.getPrototypeOf(store) as RunStore;
      await store.createRun(newRun('live'));
      await raw.acquireLease('run:dying', 'driver-b', 60_000);
      await raw.createRun(newRun('dying'));
      await raw.createRun(newRun('orphan'));
      expect((await store.getRun('orphan'))?.status).toBe('interrupted');
      expect((await store.getRun('dying'))?.status).toBe('running');
      // Its driver was killed: its lease is not renewed, and lapses.
      clock.advance(60_000);
      expect((await store.getRun('dying'))?.status).toBe('interrupted');
      expect((await store.getRun('live'))?.status).toBe('running');
      expect((await store.listRuns()).map((run) => [run.id, run.status])).toEqual([
        ['orphan', 'interrupted'],
        ['dying', 'interrupted'],
        ['live', 'running'],
      ]);
      expect((await store.listRuns({ status: 'running' })).map((run) => run.id)).toEqual(['live']);
      expect((await store.listRuns({ status: 'interrupted' })).map((run) => run.id)).toEqual(['orphan', 'dying']);
      expect(await store.countRuns()).toEqual([
        { playbook: 'rolling-cluster-update', status: 'interrupted', count: 2 },
        { playbook: 'rolling-cluster-update', status: 'running', count: 1 },
      ]);
      // Nothing drives it: a cancel ends it at once, as for any interrupted run.
      expect(await store.cancelRun('dying', 'alice')).toEqual({ outcome: 'cancelled' });
      expect((await store.getRun('dying'))?.status).toBe('cancelled');
      // A resume takes the lease again: running once more.
      await raw.acquireLease('run:orphan', 'resumer', 60_000);
      await store.markResumed('orphan');
      expect((await store.getRun('orphan'))?.status).toBe('running');
    });

    it('refuses a second run with the same id', async () => {
      await store.createRun(newRun('r1'));
      await expect(store.createRun(newRun('r1'))).rejects.toMatchObject({ code: 'RUN_EXISTS' });
    });

    it('journals events in order with sequence numbers and times, and folds them into steps', async () => {
      await store.createRun(newRun('r1'));
      await store.append('r1', {
        type: 'step.started',
        path: 'catalog',
        stepId: 'catalog',
        kind: 'call',
        input: { filter: "version eq '2.4.0'" },
      });
      clock.advance(1500);
      await store.append('r1', {
        type: 'request.sending',
        path: 'catalog',
        attempt: 1,
        operationId: 'privateCloud.listSoftwareCatalogs',
        method: 'GET',
      });
      await store.append('r1', { type: 'request.answered', path: 'catalog', attempt: 1, httpStatus: 200 });
      await store.append('r1', {
        type: 'step.finished',
        path: 'catalog',
        status: 'succeeded',
        outputs: { status: 200, body: { items: [] } },
      });
      const journal = await store.journal('r1');
      expect(journal.map((entry) => [entry.runId, entry.seq, entry.event.type])).toEqual([
        ['r1', 1, 'step.started'],
        ['r1', 2, 'request.sending'],
        ['r1', 3, 'request.answered'],
        ['r1', 4, 'step.finished'],
      ]);
      expect(journal[0]?.at).toBe('2026-03-01T10:00:00.000Z');
      expect(journal[1]?.at).toBe('2026-03-01T10:00:01.500Z');
      expect(await store.steps('r1')).toEqual([
        {
          path: 'catalog',
          stepId: 'catalog',
          kind: 'call',
          status: 'succeeded',
          attempts: 1,
          startedAt: '2026-03-01T10:00:00.000Z',
          endedAt: '2026-03-01T10:00:01.500Z',
          input: { filter: "version eq '2.4.0'" },
          outputs: { status: 200, body: { items: [] } },
        },
      ]);
    });

    it('keeps journals of runs apart, and knows no journal of an unknown run', async () => {
      await store.createRun(newRun('r1'));
      await store.createRun(newRun('r2'));
      await store.append('r1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' });
      await store.append('r2', { type: 'step.started', path: 'b', stepId: 'b', kind: 'set' });
      await store.append('r2', { type: 'step.finished', path: 'b', status: 'succeeded' });
      expect((await store.journal('r2')).map((entry) => entry.seq)).toEqual([1, 2]);
      expect((await store.steps('r1')).map((step) => step.path)).toEqual(['a']);
      expect(await store.journal('nope')).toEqual([]);
      await expect(
        store.append('nope', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' }),
      ).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('reads a journal in pages by seq, and folds the pages into the same steps as the whole', async () => {
      await store.createRun(newRun('r1'));
      for (const path of ['a', 'b', 'c', 'd', 'e']) {
        await store.append('r1', { type: 'step.started', path, stepId: path, kind: 'set' });
        await store.append('r1', { type: 'step.finished', path, status: 'succeeded', outputs: { path } });
      }
      expect((await store.journal('r1', 3, 4)).map((entry) => entry.seq)).toEqual([4, 5, 6, 7]);
      expect((await store.journal('r1', 8, 4)).map((entry) => entry.seq)).toEqual([9, 10]);
      const pages: number[][] = [];
      for await (const page of journalPages(store, 'r1', 4)) pages.push(page.map((entry) => entry.seq));
      expect(pages).toEqual([
        [1, 2, 3, 4],
        [5, 6, 7, 8],
        [9, 10],
      ]);
      const fold = createJournalFold({ values: false });
      for await (const page of journalPages(store, 'r1', 3)) for (const entry of page) fold.add(entry);
      const whole = await store.steps('r1');
      expect(whole.map((step) => step.outputs)).toEqual([
        { path: 'a' },
        { path: 'b' },
        { path: 'c' },
        { path: 'd' },
        { path: 'e' },
      ]);
      // Without values: the same records, their outputs dropped and where to read them and the inputs back.
      expect(fold.records()).toEqual(
        whole.map(({ outputs: _outputs, ...rest }, index) => ({
          ...rest,
          startedSeq: 2 * index + 1,
          finishedSeq: 2 * index + 2,
        })),
      );
    });

    it('reads entries by seq in one read, with their values, in seq order, leaving out seqs it does not hold', async () => {
      await store.createRun(newRun('r1'));
      await store.createRun(newRun('r2'));
      for (const path of ['a', 'b', 'c', 'd']) {
        await store.append('r1', { type: 'step.started', path, stepId: path, kind: 'set', input: { path } });
        await store.append('r2', { type: 'step.started', path, stepId: path, kind: 'set' });
        // Large enough for a SQL store to cut it in a read without values: read by seq, it is whole.
        await store.append(
          'r1',
          { type: 'step.finished', path, status: 'succeeded', outputs: { path, blob: 'x'.repeat(600) } },
          { buffered: true },
        );
      }
      const whole = await store.journal('r1');
      const at = await store.journalAt('r1', [8, 2, 3, 2, 42, 0]);
      expect(at).toEqual([whole[1], whole[2], whole[7]]);
      expect(at.map((entry) => entry.seq)).toEqual([2, 3, 8]);
      expect(at[2]?.event).toMatchObject({ outputs: { path: 'd', blob: 'x'.repeat(600) } });
      expect(await store.journalAt('r1', [])).toEqual([]);
      expect(await store.journalAt('r2', [2, 5])).toEqual([
        { runId: 'r2', seq: 2, at: whole[0]?.at, event: { type: 'step.started', path: 'b', stepId: 'b', kind: 'set' } },
      ]);
      expect(await store.journalAt('nope', [1])).toEqual([]);
    });

    it('reads a journal without step values: no input, no outputs but a string message, the rest as written', async () => {
      await store.createRun(newRun('r1'));
      const events: JournalEvent[] = [
        { type: 'step.started', path: 'big', stepId: 'big', kind: 'set', input: { blob: 'x'.repeat(5000) } },
        { type: 'step.finished', path: 'big', status: 'succeeded', outputs: { blob: 'x'.repeat(5000), n: 1 } },
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'hello', extra: [1, 2] } },
        // Over SMALL_EVENT_BYTES, so a SQL store cuts it in SQL; the events above and below, in JS.
        { type: 'step.started', path: 'shout', stepId: 'shout', kind: 'log', input: { text: 'y'.repeat(5000) } },
        {
          type: 'step.finished',
          path: 'shout',
          status: 'succeeded',
          outputs: { message: 'loud', extra: 'y'.repeat(5000) },
        },
        { type: 'step.finished', path: 'small', status: 'failed', outputs: { n: 2 }, error: { message: 'no' } },
        { type: 'item.started', path: 'loop', index: 0 },
      ];
      for (const event of events) await store.append('r1', event);
      const all = await store.journal('r1');
      const without = await store.journal('r1', 0, 100, { values: false });
      expect(without).toEqual(all.map(withoutValues));
      expect(without.map((entry) => entry.event)).toEqual([
        { type: 'step.started', path: 'big', stepId: 'big', kind: 'set' },
        { type: 'step.finished', path: 'big', status: 'succeeded' },
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'hello' } },
        { type: 'step.started', path: 'shout', stepId: 'shout', kind: 'log' },
        { type: 'step.finished', path: 'shout', status: 'succeeded', outputs: { message: 'loud' } },
        { type: 'step.finished', path: 'small', status: 'failed', error: { message: 'no' } },
        { type: 'item.started', path: 'loop', index: 0 },
      ]);
    });

    it('returns copies: changing what was appended or read changes nothing stored', async () => {
      await store.createRun(newRun('r1'));
      const input = { id: 's1' };
      await store.append('r1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'call', input });
      input.id = 'changed';
      const [first] = await store.steps('r1');
      (first?.input as { id: string }).id = 'changed again';
      expect((await store.steps('r1'))[0]?.input).toEqual({ id: 's1' });
    });

    it('keeps any text a value holds as it was: quotes, backslashes, escapes, line separators, emoji', async () => {
      await store.createRun(newRun('r1'));
      const texts = [
        'say "hi"',
        'C:\\fleet\\',
        '\\u0000 and \\n as written',
        'a\u2028b\u2029c',
        'tab\there',
        '🚀 ünïcödé',
        '{"json": [1]}',
      ];
      await store.append('r1', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set', input: { texts } });
      await store.append('r1', { type: 'item.started', path: 'b', index: 0 }, { buffered: true });
      await store.append('r1', { type: 'step.finished', path: 'a', status: 'succeeded', outputs: { texts } });
      const journal = await store.journal('r1');
      expect(journal.map((entry) => entry.event)).toEqual([
        { type: 'step.started', path: 'a', stepId: 'a', kind: 'set', input: { texts } },
        { type: 'item.started', path: 'b', index: 0 },
        { type: 'step.finished', path: 'a', status: 'succeeded', outputs: { texts } },
      ]);
    });

    it('refuses an event or result over the payload limit, naming the way out', async () => {
      await store.close();
      store = driven(await factory.open({ now: clock.now, maxPayloadBytes: 1024 }));
      await store.createRun(newRun('r1'));
      const big = { csv: 'x'.repeat(2000) };
      await expect(
        store.append('r1', { type: 'step.finished', path: 'export', status: 'succeeded', outputs: big }),
      ).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        message: expect.stringContaining('saveTo'),
      });
      await expect(store.setRunStatus('r1', 'succeeded', { outputs: big })).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
      });
      expect(await store.journal('r1')).toEqual([]);
      expect((await store.getRun('r1'))?.status).toBe('running');
    });

    it('ends a run with its outputs or error, and a resume counts and reopens it', async () => {
      await store.createRun(newRun('r1'));
      clock.advance(60_000);
      await store.setRunStatus('r1', 'failed', {
        error: { message: 'update failed', code: 'OPERATION_FAILED', httpStatus: 400 },
      });
      expect(await store.getRun('r1')).toMatchObject({
        status: 'failed',
        endedAt: '2026-03-01T10:01:00.000Z',
        error: { message: 'update failed' },
      });
      await store.markResumed('r1');
      const resumed = await store.getRun('r1');
      expect(resumed).toMatchObject({ status: 'running', resumes: 1 });
      expect(resumed).not.toHaveProperty('endedAt');
      expect(resumed).not.toHaveProperty('error');
      await store.setRunStatus('r1', 'succeeded', { outputs: { updated: 3 } });
      expect(await store.getRun('r1')).toMatchObject({ status: 'succeeded', outputs: { updated: 3 }, resumes: 1 });
      await expect(store.setRunStatus('nope', 'failed')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      await expect(store.markResumed('nope')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('lists runs newest first, filtered by playbook, status and start time, limited', async () => {
      await store.createRun(newRun('old', { startedAt: '2026-02-01T00:00:00.000Z' }));
      await store.createRun(newRun('export', { playbook: 'nightly-export', startedAt: '2026-02-20T00:00:00.000Z' }));
      await store.createRun(newRun('new', { startedAt: '2026-02-28T00:00:00.000Z' }));
      await store.createRun(newRun('same-instant', { startedAt: '2026-02-28T00:00:00.000Z' }));
      await store.setRunStatus('new', 'failed');
      const ids = async (filter?: Parameters<RunStore['listRuns']>[0]) =>
        (await store.listRuns(filter)).map((run) => run.id);
      expect(await ids()).toEqual(['same-instant', 'new', 'export', 'old']);
      expect(await ids({ playbook: 'rolling-cluster-update' })).toEqual(['same-instant', 'new', 'old']);
      expect(await ids({ status: 'failed' })).toEqual(['new']);
      expect(await ids({ since: '2026-02-20T00:00:00Z' })).toEqual(['same-instant', 'new', 'export']);
      expect(await ids({ limit: 2 })).toEqual(['same-instant', 'new']);
      expect(await ids({ idPrefix: 'ne' })).toEqual(['new']);
      // A prefix is text, not a pattern.
      expect(await ids({ idPrefix: '%' })).toEqual([]);
      await expect(store.listRuns({ since: 'last week' })).rejects.toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
    });

    it('holds a lease for its owner until the TTL passes, then lets another take over', async () => {
      expect(await store.acquireLease('run:r1', 'host-a:1', 30_000)).toBe(true);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(false);
      clock.advance(20_000);
      // Renewing pushes the expiry out from now.
      expect(await store.acquireLease('run:r1', 'host-a:1', 30_000)).toBe(true);
      clock.advance(20_000);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(false);
      clock.advance(10_001);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(true);
      expect(await store.acquireLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.acquireLease('scheduler', 'host-a:1', 30_000)).toBe(true);
    });

    it('names the holder of a live lease, none once it expired', async () => {
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      expect(await store.leaseHolder('run:r1')).toEqual({
        owner: 'host-a:1',
        expiresAt: new Date(clock.now().getTime() + 30_000).toISOString(),
      });
      clock.advance(30_000);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
    });

    it('renews a lease only while its owner still holds it: never a released or taken one', async () => {
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      clock.advance(20_000);
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(true);
      expect(await store.leaseHolder('run:r1')).toEqual({
        owner: 'host-a:1',
        expiresAt: new Date(clock.now().getTime() + 30_000).toISOString(),
      });
      expect(await store.renewLease('run:r1', 'host-b:2', 30_000)).toBe(false);
      // Released by the process that took the run over: the old owner's renewal does not take it back.
      await store.releaseLease('run:r1', 'host-a:1');
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      // Lapsed, even with nobody holding it since: lost, not renewed (another may be taking over on the lapse).
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      clock.advance(30_000);
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect(await store.leaseHolder('run:r1')).toBeUndefined();
      await store.releaseLease('run:r1', 'host-a:1');
      // Taken by another after it lapsed: the old owner's renewal does not extend the new one's.
      await store.acquireLease('run:r1', 'host-a:1', 30_000);
      clock.advance(30_000);
      expect(await store.acquireLease('run:r1', 'host-b:2', 30_000)).toBe(true);
      expect(await store.renewLease('run:r1', 'host-a:1', 30_000)).toBe(false);
      expect((await store.leaseHolder('run:r1'))?.owner).toBe('host-b:2');
      await expect(store.renewLease('run:r1', 'host-b:2', 0)).rejects.toMatchObject({ code: 'STORE_INVALID_ARGUMENT' });
    });

    it('releases a lease only for its owner', async () => {
      await store.acquireLease('scheduler', 'host-a:1', 30_000);
      await store.releaseLease('scheduler', 'host-b:2');
      expect(await store.acquireLease('scheduler', 'host-b:2', 30_000)).toBe(false);
      await store.releaseLease('scheduler', 'host-a:1');
      expect(await store.acquireLease('scheduler', 'host-b:2', 30_000)).toBe(true);
      await expect(store.acquireLease('scheduler', 'host-b:2', 0)).rejects.toMatchObject({
        code: 'STORE_INVALID_ARGUMENT',
      });
    });

    it('keeps schedule state per schedule', async () => {
      expect(await store.getScheduleState('nightly')).toBeUndefined();
      await store.setScheduleState('nightly', { lastFireAt: '2026-03-01T02:00:00.000Z', consecutiveFailures: 0 });
      await store.setScheduleState('nightly', {
        lastFireAt: '2026-03-02T02:00:00.000Z',
        consecutiveFailures: 1,
        paused: true,
      });
      await store.setScheduleState('weekly', { paused: false });
      expect(await store.getScheduleState('nightly')).toEqual({
        lastFireAt: '2026-03-02T02:00:00.000Z',
        consecutiveFailures: 1,
        paused: true,
      });
      expect(await store.getScheduleState('weekly')).toEqual({ paused: false });
    });

    it('patches schedule state field by field: other fields stay, null removes one', async () => {
      await store.patchScheduleState('nightly', {
        paused: true,
        pausedAt: '2026-03-01T02:00:00.000Z',
        queued: ['a', 'b'],
      });
      await store.patchScheduleState('nightly', { lastSkip: { reason: 'paused', scheduledAt: 'x' } });
      await store.patchScheduleState('nightly', { lastSkip: { reason: 'paused' }, queued: ['b'] });
      await store.patchScheduleState('nightly', { paused: false, pausedAt: null });
      expect(await store.getScheduleState('nightly')).toEqual({
        paused: false,
        lastSkip: { reason: 'paused' },
        queued: ['b'],
      });
    });

    it('keeps a journal view per run: the later one, read back as kept, gone with the run', async () => {
      await store.createRun(newRun('v1', { startedAt: '2026-01-01T00:00:00.000Z' }));
      await store.createRun(newRun('v2'));
      expect(await store.journalView('v1')).toBeUndefined();
      const events: JournalEvent[] = [
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'hello' } },
        { type: 'step.started', path: 'check', stepId: 'check', kind: 'call', input: { n: 1 } },
        { type: 'request.sending', path: 'check', attempt: 1, operationId: 'sys.get', method: 'GET' },
        { type: 'step.finished', path: 'check', status: 'failed', error: { message: 'no' } },
      ];
      for (const event of events) await store.append('v1', event);
      const view = await foldJournalView(store, 'v1');
      expect(view).toMatchObject({ throughSeq: 5, logPaths: ['say'], log: [{ path: 'say', message: 'hello' }] });
      await store.saveJournalView('v1', view);
      expect(await store.journalView('v1')).toEqual(view);
      expect(await store.journalView('v2')).toBeUndefined();
      // A view through an earlier seq (a slower writer) does not replace it.
      await store.saveJournalView('v1', { ...view, throughSeq: 3, records: [] });
      expect(await store.journalView('v1')).toEqual(view);
      await expect(store.saveJournalView('nope', view)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
      await store.setRunStatus('v1', 'failed');
      expect(await store.prune('2026-03-02T00:00:00.000Z')).toBe(1);
      expect(await store.journalView('v1')).toBeUndefined();
    });

    it('keeps a view of many records in parts, and a later, shorter view leaves none of the longer one', async () => {
      await store.createRun(newRun('v1'));
      const record = (index: number) => ({
        path: `systems[${index}]`,
        stepId: 'systems',
        kind: 'item',
        status: 'succeeded' as const,
        attempts: 0,
        startedAt: '2026-01-01T00:00:00.000Z',
      });
      const long = {
        throughSeq: 10,
        records: Array.from({ length: 2 * VIEW_PART_RECORDS + 1 }, (_, index) => record(index)),
        logPaths: ['say'],
        log: [{ at: '2026-01-01T00:00:00.000Z', path: 'say', message: 'hello' }],
      };
      await store.saveJournalView('v1', long);
      expect(await store.journalView('v1')).toEqual(long);
      const short = { throughSeq: 12, records: [record(7)], logPaths: [], log: [] };
      await store.saveJournalView('v1', short);
      expect(await store.journalView('v1')).toEqual(short);
      // An earlier view, however long, does not replace it, nor add parts to it.
      await store.saveJournalView('v1', long);
      expect(await store.journalView('v1')).toEqual(short);
    });

    it('continues a kept journal view with the entries after it: the fold of the whole journal', async () => {
      await store.createRun(newRun('v1'));
      const before: JournalEvent[] = [
        { type: 'step.started', path: 'say', stepId: 'say', kind: 'log' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'first' } },
        { type: 'item.started', path: 'systems', index: 0 },
        { type: 'step.started', path: 'systems[0].update', stepId: 'update', kind: 'call', input: { n: 1 } },
        { type: 'request.sending', path: 'systems[0].update', attempt: 1, operationId: 'sys.update', method: 'POST' },
        { type: 'step.finished', path: 'systems[0].update', status: 'interrupted' },
      ];
      for (const event of before) await store.append('v1', event);
      // Kept as the run ended, then resumed: the step re-runs, the log step writes again.
      expect(await checkpointJournalView(store, 'v1', 1)).toBe(6);
      const after: JournalEvent[] = [
        { type: 'step.started', path: 'systems[0].update', stepId: 'update', kind: 'call', input: { n: 1 } },
        { type: 'request.answered', path: 'systems[0].update', attempt: 1, httpStatus: 202, location: '/ops/7' },
        { type: 'step.finished', path: 'systems[0].update', status: 'succeeded', outputs: { ok: true } },
        { type: 'item.finished', path: 'systems', index: 0, status: 'succeeded' },
        { type: 'step.finished', path: 'say', status: 'succeeded', outputs: { message: 'second' } },
      ];
      for (const event of after) await store.append('v1', event);
      const scratch = await foldJournalView(store, 'v1');
      const continued = await foldJournalView(store, 'v1', await store.journalView('v1'));
      expect(continued).toEqual(scratch);
      expect(continued.log.map((line) => line.message)).toEqual(['first', 'second']);
      expect(continued.records.find((record) => record.path === 'systems[0].update')).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        location: '/ops/7',
        startedSeq: 7,
        finishedSeq: 9,
      });
      // The next checkpoint starts from the kept one; none is written when nothing followed it.
      expect(await checkpointJournalView(store, 'v1', 1)).toBe(11);
      expect(await store.journalView('v1')).toEqual(scratch);
      expect(await checkpointJournalView(store, 'v1', 1)).toBeUndefined();
      // A journal shorter than the threshold keeps no view.
      await store.createRun(newRun('short'));
      for (const event of before) await store.append('short', event);
      expect(await checkpointJournalView(store, 'short', 7)).toBeUndefined();
      expect(await store.journalView('short')).toBeUndefined();
      expect(await checkpointJournalView(store, 'short', 6)).toBe(6);
    });

    it('prunes runs that ended before the cutoff, with their journals, never a running one', async () => {
      await store.createRun(newRun('ended-old', { startedAt: '2026-01-01T00:00:00.000Z' }));
      await store.createRun(newRun('running-old', { startedAt: '2026-01-01T00:00:00.000Z' }));
      await store.append('ended-old', { type: 'step.started', path: 'a', stepId: 'a', kind: 'set' });
      await store.setRunStatus('ended-old', 'succeeded');
      clock.advance(86_400_000);
      await store.createRun(newRun('ended-new'));
      await store.setRunStatus('ended-new', 'interrupted');
      expect(await store.prune('2026-03-02T00:00:00.000Z')).toBe(1);
      expect(await store.getRun('ended-old')).toBeUndefined();
      expect(await store.journal('ended-old')).toEqual([]);
      expect((await store.listRuns()).map((run) => run.id).sort()).toEqual(['ended-new', 'running-old']);
      expect(await store.prune('2026-03-02T00:00:00.000Z')).toBe(0);
    });

    it('paces a rate bucket with GCRA: one start per interval past the burst, buckets apart', async () => {
      // 60 per minute: one a second; a burst of 3 is a tolerance of 2 intervals.
      expect(await Promise.all([1, 2, 3, 4, 5].map(() => store.takeRate('conn|private-cloud', 1000, 2000)))).toEqual([
        0, 0, 0, 1000, 2000,
      ]);
      expect(await store.takeRate('conn|reporting', 1000, 0)).toBe(0);
      expect(await store.takeRate('conn|reporting', 1000, 0)).toBe(1000);
      // Time passing pays the debt back, up to the burst again.
      clock.advance(10_000);
      expect(await store.takeRate('conn|private-cloud', 1000, 2000)).toBe(0);
    });

    it('a push holds everyone off a bucket until its time, and never pulls it back', async () => {
      await store.pushRate('conn|private-cloud', clock.now().getTime() + 30_000, 2000);
      await store.pushRate('conn|private-cloud', clock.now().getTime() + 5_000, 2000);
      expect(await store.takeRate('conn|private-cloud', 1000, 2000)).toBe(30_000);
      expect(await store.takeRate('conn|private-cloud', 1000, 2000)).toBe(31_000);
      expect(await store.takeRate('conn|other', 1000, 2000)).toBe(0);
    });

    it('reads the journal after a seq: only what a follower has not seen', async () => {
      await store.createRun(newRun('f1'));
      for (const path of ['a', 'b', 'c'])
        await store.append('f1', { type: 'step.started', path, stepId: path, kind: 'set' });
      expect((await store.journal('f1', 1)).map((entry) => [entry.seq, entry.event.path])).toEqual([
        [2, 'b'],
        [3, 'c'],
      ]);
      expect(await store.journal('f1', 3)).toEqual([]);
    });

    it('lists runs started at or before `until`, newest first (the server pages with it)', async () => {
      for (const [id, startedAt] of [
        ['a', '2026-03-01T10:00:00.000Z'],
        ['b', '2026-03-01T11:00:00.000Z'],
        ['c', '2026-03-01T11:00:00.000Z'],
        ['d', '2026-03-01T12:00:00.000Z'],
      ] as const)
        await store.createRun(newRun(id, { startedAt }));
      expect((await store.listRuns({ until: '2026-03-01T11:00:00.000Z' })).map((run) => run.id)).toEqual([
        'c',
        'b',
        'a',
      ]);
      expect((await store.listRuns({ until: '2026-03-01T11:00:00.000Z', limit: 1 })).map((run) => run.id)).toEqual([
        'c',
      ]);
    });

    it('keeps API tokens hashed: created, read by id with the hash, listed without it, revoked by name or id', async () => {
      const viewer = {
        id: 't1',
        name: 'wall screen',
        role: 'viewer' as const,
        hash: 'a'.repeat(64),
        createdAt: '2026-03-01T10:00:00.000Z',
      };
      const admin = {
        id: 't2',
        name: 'ops lead',
        role: 'admin' as const,
        hash: 'b'.repeat(64),
        createdAt: '2026-03-01T10:00:01.000Z',
      };
      expect(await store.createApiToken(viewer)).toEqual({
        id: 't1',
        name: 'wall screen',
        role: 'viewer',
        createdAt: viewer.createdAt,
      });
      await store.createApiToken(admin);
      await expect(store.createApiToken({ ...admin, id: 't3' })).rejects.toMatchObject({ code: 'TOKEN_EXISTS' });
      expect(await store.getApiToken('t2')).toEqual({
        id: 't2',
        name: 'ops lead',
        role: 'admin',
        createdAt: admin.createdAt,
        hash: admin.hash,
      });
      expect(await store.getApiToken('nope')).toBeUndefined();
      expect((await store.listApiTokens()).map((token) => [token.id, Object.keys(token).includes('hash')])).toEqual([
        ['t1', false],
        ['t2', false],
      ]);
      expect(await store.revokeApiToken('wall screen')).toMatchObject({
        id: 't1',
        revokedAt: clock.now().toISOString(),
      });
      clock.advance(1000);
      // Revoking again keeps the first time.
      expect((await store.revokeApiToken('t1'))?.revokedAt).toBe('2026-03-01T10:00:00.000Z');
      expect((await store.getApiToken('t1'))?.revokedAt).toBe('2026-03-01T10:00:00.000Z');
      expect(await store.revokeApiToken('unknown')).toBeUndefined();
      // A token whose role holds for some playbooks only keeps their patterns.
      const scoped = { ...admin, id: 't4', name: 'reports bot', role: 'operator' as const, playbooks: ['*-report*'] };
      expect(await store.createApiToken(scoped)).toMatchObject({ id: 't4', playbooks: ['*-report*'] });
      expect(await store.getApiToken('t4')).toMatchObject({ role: 'operator', playbooks: ['*-report*'] });
      expect((await store.getApiToken('t2'))?.playbooks).toBeUndefined();
      await store.revokeApiToken('t4');
    });

    it('keeps web sessions by their id hash until they expire, end or are swept', async () => {
      const start = clock.now().getTime();
      const session = (idHash: string, ttlMs: number) => ({
        idHash,
        tokenId: 't1',
        createdAt: clock.now().toISOString(),
        expiresAtMs: start + ttlMs,
      });
      await store.createWebSession(session('a'.repeat(64), 60_000));
      await store.createWebSession(session('b'.repeat(64), 1_000));
      await store.createWebSession(session('c'.repeat(64), 60_000));
      expect(await store.getWebSession('a'.repeat(64))).toEqual(session('a'.repeat(64), 60_000));
      expect(await store.getWebSession('d'.repeat(64))).toBeUndefined();
      // A single sign-on's session keeps its user (no token behind it).
      const user = { name: 'alice', groups: ['sre', 'change-managers'], role: 'operator' as const };
      await store.createWebSession({ ...session('e'.repeat(64), 60_000), tokenId: 'oidc', user });
      expect(await store.getWebSession('e'.repeat(64))).toMatchObject({ tokenId: 'oidc', user });
      expect((await store.getWebSession('a'.repeat(64)))?.user).toBeUndefined();
      await store.deleteWebSession('e'.repeat(64));
      // Logout ends one session only.
      await store.deleteWebSession('c'.repeat(64));
      expect(await store.getWebSession('c'.repeat(64))).toBeUndefined();
      await store.deleteWebSession('c'.repeat(64));
      clock.advance(1_000);
      // Expired by the store's clock: not returned, and swept.
      expect(await store.getWebSession('b'.repeat(64))).toBeUndefined();
      expect(await store.sweepWebSessions()).toBe(1);
      expect(await store.sweepWebSessions()).toBe(0);
      expect(await store.getWebSession('a'.repeat(64))).toMatchObject({ tokenId: 't1' });
      clock.advance(59_000);
      expect(await store.sweepWebSessions()).toBe(1);
      expect(await store.getWebSession('a'.repeat(64))).toBeUndefined();
    });

    it("records a run's end and its notifications together, once per key", async () => {
      await store.createRun(newRun('r1'));
      const notification = (channel: string) => ({
        key: `r1/failed/0/${channel}`,
        runId: 'r1',
        event: 'failed',
        segment: '0',
        channel,
        message: { playbook: 'rolling-cluster-update', status: 'failed' },
      });
      await store.setRunStatus('r1', 'failed', {
        error: { message: 'boom' },
        notifications: [notification('ops-mail'), notification('chat')],
      });
      expect((await store.getRun('r1'))?.status).toBe('failed');
      // Recorded again (a second process recovering the end): still one row per key.
      await store.addNotifications([notification('ops-mail')]);
      const listed = await store.listNotifications({ runId: 'r1' });
      expect(listed.map((item) => [item.channel, item.state, item.attempts])).toEqual([
        ['ops-mail', 'pending', 0],
        ['chat', 'pending', 0],
      ]);
      expect(listed[0]).toMatchObject({ message: { status: 'failed' }, createdAt: '2026-03-01T10:00:00.000Z' });
      // Notifications alone leave the run's result as it is.
      await store.setRunStatus('r1', 'failed', { notifications: [notification('third')] });
      expect((await store.getRun('r1'))?.error).toEqual({ message: 'boom' });
      expect(await store.listNotifications({ state: 'pending', limit: 1 })).toHaveLength(1);
      await expect(
        store.addNotifications([{ ...notification('x'), runId: 'nope', key: 'nope/failed/0/x' }]),
      ).rejects.toMatchObject({
        code: 'RUN_NOT_FOUND',
      });
    });

    it('lets one sender claim a notification at a time, and settles it by its owner only', async () => {
      await store.createRun(newRun('r1'));
      const key = 'r1/failed/0/chat';
      await store.addNotifications([{ key, runId: 'r1', event: 'failed', segment: '0', channel: 'chat', message: {} }]);
      const first = await store.claimNotification(key, 'a', 10_000);
      expect(first).toMatchObject({ attempts: 1, claimedBy: 'a', claimExpiresAt: '2026-03-01T10:00:10.000Z' });
      expect(await store.claimNotification(key, 'b', 10_000)).toBeUndefined();
      // A caller that knows the holder is dead takes it over at once.
      expect(await store.claimNotification(key, 'b', 10_000, { takeOverFrom: 'a' })).toMatchObject({ attempts: 2 });
      expect(await store.settleNotification(key, 'a', { state: 'sent' })).toBe(false);
      // A failed try: pending again, not due before its backoff.
      expect(
        await store.settleNotification(key, 'b', {
          state: 'pending',
          retryAtMs: clock.now().getTime() + 2000,
          error: 'HTTP 500',
        }),
      ).toBe(true);
      expect(await store.claimNotification(key, 'c', 10_000)).toBeUndefined();
      clock.advance(2000);
      const third = await store.claimNotification(key, 'c', 10_000);
      expect(third).toMatchObject({ attempts: 3, lastError: 'HTTP 500' });
      // A lapsed claim is taken over by anyone.
      clock.advance(10_000);
      expect(await store.claimNotification(key, 'd', 10_000)).toMatchObject({ attempts: 4 });
      expect(await store.settleNotification(key, 'c', { state: 'sent' })).toBe(false);
      expect(await store.settleNotification(key, 'd', { state: 'sent' })).toBe(true);
      const [sent] = await store.listNotifications({ runId: 'r1' });
      expect(sent).toMatchObject({ state: 'sent', sentAt: clock.now().toISOString(), attempts: 4 });
      expect(sent?.claimedBy).toBeUndefined();
      // Sent is final: never claimed again, whoever asks.
      expect(await store.claimNotification(key, 'd', 10_000)).toBeUndefined();
      // Given up is final too, and the outbox goes with its run when it is pruned.
      await store.addNotifications([
        { key: 'r1/failed/0/mail', runId: 'r1', event: 'failed', segment: '0', channel: 'mail', message: {} },
      ]);
      await store.claimNotification('r1/failed/0/mail', 'e', 10_000);
      await store.settleNotification('r1/failed/0/mail', 'e', { state: 'failed', error: 'no such channel' });
      expect(await store.listNotifications({ state: 'failed' })).toMatchObject([{ lastError: 'no such channel' }]);
      await store.setRunStatus('r1', 'failed');
      clock.advance(1000);
      await store.prune(clock.now().toISOString());
      expect(await store.listNotifications()).toEqual([]);
    });

    it('keys a notification by its run, event, segment and channel, and refuses a key made otherwise', async () => {
      await store.createRun(newRun('r1'));
      const item = { runId: 'r1', event: 'failed', segment: 'r0', channel: 'chat', message: {} };
      await store.addNotifications([{ ...item, key: 'r1/failed/r0/chat' }]);
      expect(await store.listNotifications()).toMatchObject([{ key: 'r1/failed/r0/chat', segment: 'r0' }]);
      // A key that is not <run>/<event>/<segment>/<channel> could name another notification.
      for (const key of ['r1/failed/r1/chat', 'another-key', 'r1/failed/r0/chat/'])
        await expect(store.addNotifications([{ ...item, key }])).rejects.toMatchObject({
          code: 'STORE_INVALID_ARGUMENT',
        });
      await expect(store.addNotifications([{ ...item, segment: '', key: 'r1/failed//chat' }])).rejects.toMatchObject({
        code: 'STORE_INVALID_ARGUMENT',
      });
      // Each segment of the run is an event of its own.
      await store.addNotifications([{ ...item, segment: 'r1', key: 'r1/failed/r1/chat' }]);
      expect((await store.listNotifications()).map((row) => row.segment)).toEqual(['r0', 'r1']);
    });

    it('never lets a live claim be claimed again, by its own owner either, nor a sent row by anyone', async () => {
      await store.createRun(newRun('r1'));
      const key = 'r1/failed/0/chat';
      await store.addNotifications([{ key, runId: 'r1', event: 'failed', segment: '0', channel: 'chat', message: {} }]);
      // Two deliveries of one process (its sweep and a run's own) claim at once: one wins.
      const claims = await Promise.all([
        store.claimNotification(key, 'a', 10_000),
        store.claimNotification(key, 'a', 10_000),
      ]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      // While the claim is live, its own owner cannot take it again (it would send a second copy).
      expect(await store.claimNotification(key, 'a', 10_000)).toBeUndefined();
      expect(await store.settleNotification(key, 'a', { state: 'sent' })).toBe(true);
      // Sent is final: not after the claim would have lapsed, not by a take-over, not by a retry.
      clock.advance(60_000);
      expect(await store.claimNotification(key, 'a', 10_000)).toBeUndefined();
      expect(await store.claimNotification(key, 'b', 10_000, { takeOverFrom: 'a' })).toBeUndefined();
      expect(await store.settleNotification(key, 'a', { state: 'pending', retryAtMs: 0, error: 'late' })).toBe(false);
      // Recording it again (a second process recovering the end) leaves it sent.
      await store.addNotifications([{ key, runId: 'r1', event: 'failed', segment: '0', channel: 'chat', message: {} }]);
      expect(await store.listNotifications({ runId: 'r1' })).toMatchObject([{ state: 'sent', attempts: 1 }]);
    });

    it('keeps a waiting run with what it waits for, lists it when due, and ends the wait once', async () => {
      await store.createRun(newRun('w1'));
      const wait = {
        reason: 'approval' as const,
        path: 'gate',
        since: '2026-03-01T10:00:00.000Z',
        timeoutAt: '2026-03-01T11:00:00.000Z',
        approvers: ['alice'],
        onTimeout: 'fail' as const,
      };
      await store.append('w1', { type: 'run.waiting', path: 'gate', wait });
      await store.suspendRun('w1', wait);
      const waiting = await store.getRun('w1');
      expect(waiting).toMatchObject({ status: 'waiting', wait });
      expect(waiting?.endedAt).toBeUndefined();
      expect((await store.listRuns({ status: 'waiting' })).map((run) => run.id)).toEqual(['w1']);
      // Due once its timeout passed, not before.
      expect(await store.listDueWaits('2026-03-01T10:59:59.000Z')).toEqual([]);
      expect((await store.listDueWaits('2026-03-01T11:00:00.000Z')).map((run) => run.id)).toEqual(['w1']);

      const decision = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'approved' as const,
        by: 'alice',
        at: '2026-03-01T10:30:00.000Z',
      };
      const timedOut = { ...decision, decision: 'timedOut' as const, by: 'timeout' };
      const ending = { path: 'gate', at: decision.at, decision, due: timedOut, next: 'queued' as const };
      const [first, second] = await Promise.all([
        store.endWait('w1', ending),
        store.endWait('w1', { ...ending, decision: { ...decision, by: 'bob' } }),
      ]);
      expect([first, second].sort()).toEqual(['decided', 'notWaiting']);
      const decided = await store.getRun('w1');
      expect(decided?.status).toBe('queued');
      expect(decided?.wait).toBeUndefined();
      const decisions = (await store.journal('w1')).filter((entry) => entry.event.type === 'approval.decided');
      expect(decisions).toHaveLength(1);
      expect(await store.listDueWaits('2026-03-02T00:00:00.000Z')).toEqual([]);
      // Resumed: running again, nothing of the wait left.
      await store.markResumed('w1');
      expect(await store.getRun('w1')).toMatchObject({ status: 'running', resumes: 1 });
    });

    it('ends a wait by its due time, in the transaction that would record a decision', async () => {
      await store.createRun(newRun('d1'));
      const wait = {
        reason: 'approval' as const,
        path: 'gate',
        since: '2026-03-01T10:00:00.000Z',
        timeoutAt: '2026-03-01T11:00:00.000Z',
        onTimeout: 'fail' as const,
      };
      await store.suspendRun('d1', wait);
      const decision = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'approved' as const,
        by: 'alice',
        at: '2026-03-01T11:00:00.000Z',
      };
      const due = { ...decision, decision: 'timedOut' as const, by: 'timeout' };
      // Before the due time: a sweep or a resume ends nothing; a wait at another step is not this one.
      expect(await store.endWait('d1', { path: 'gate', at: '2026-03-01T10:59:59.999Z', due, next: 'queued' })).toBe(
        'notDue',
      );
      expect(await store.endWait('d1', { path: 'other', at: decision.at, decision, due, next: 'queued' })).toBe(
        'notWaiting',
      );
      expect((await store.getRun('d1'))?.status).toBe('waiting');
      // A decision at the due time itself comes too late: the timeout is recorded instead.
      expect(await store.endWait('d1', { path: 'gate', at: decision.at, decision, due, next: 'interrupted' })).toBe(
        'due',
      );
      expect(await store.getRun('d1')).toMatchObject({ status: 'interrupted' });
      expect((await store.journal('d1')).map((entry) => entry.event)).toEqual([due]);
      expect(await store.endWait('d1', { path: 'gate', at: decision.at, due, next: 'queued' })).toBe('notWaiting');
    });

    it("keeps an approval short of the gate's required in its wait, only on the count its decider read", async () => {
      await store.createRun(newRun('k1'));
      const wait = {
        reason: 'approval' as const,
        path: 'gate',
        since: '2026-03-01T10:00:00.000Z',
        timeoutAt: '2026-03-01T11:00:00.000Z',
        required: 2,
      };
      await store.suspendRun('k1', wait);
      const alice = { decision: 'approved' as const, by: 'alice', at: '2026-03-01T10:10:00.000Z' };
      const given = { type: 'approval.given' as const, path: 'gate', of: 2, ...alice };
      const due = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'timedOut' as const,
        by: 'timeout',
        at: alice.at,
      };
      const keeping = {
        path: 'gate',
        at: alice.at,
        decision: given,
        due,
        next: 'waiting' as const,
        approvalsSeen: 0,
        keep: { ...wait, approvals: [alice] },
      };
      // Two at once on the same count: one is kept, the other finds the count changed.
      const outcomes = await Promise.all([store.endWait('k1', keeping), store.endWait('k1', keeping)]);
      expect(outcomes.sort()).toEqual(['changed', 'kept']);
      const kept = await store.getRun('k1');
      expect(kept).toMatchObject({ status: 'waiting', wait: { path: 'gate', approvals: [alice] } });
      expect(await store.listDueWaits('2026-03-01T11:00:00.000Z')).toMatchObject([{ id: 'k1' }]);
      const bob = {
        type: 'approval.decided' as const,
        path: 'gate',
        decision: 'approved' as const,
        by: 'bob',
        at: alice.at,
        approvals: [alice],
      };
      expect(
        await store.endWait('k1', { path: 'gate', at: alice.at, decision: bob, due, next: 'queued', approvalsSeen: 1 }),
      ).toBe('decided');
      expect(await store.getRun('k1')).toMatchObject({ status: 'queued' });
      expect((await store.journal('k1')).map((entry) => entry.event)).toEqual([given, bob]);
    });

    it('cancels a waiting run at once, asks a running one to stop, and leaves an ended one', async () => {
      await store.createRun(newRun('c1'));
      await store.suspendRun('c1', {
        reason: 'window',
        path: 'systems',
        since: '2026-03-01T10:00:00.000Z',
        until: '2026-03-07T00:00:00.000Z',
      });
      expect(await store.cancelRun('c1', 'alice')).toEqual({ outcome: 'cancelled' });
      const cancelled = await store.getRun('c1');
      expect(cancelled).toMatchObject({ status: 'cancelled', error: { code: 'RUN_CANCELLED' } });
      expect(cancelled?.endedAt).toBe('2026-03-01T10:00:00.000Z');
      expect(cancelled?.wait).toBeUndefined();
      // No longer waiting: a decision arriving late changes nothing.
      expect(
        await store.endWait('c1', {
          path: 'systems',
          at: '2026-03-01T10:00:00.000Z',
          decision: { type: 'approval.decided', path: 'systems', decision: 'approved', by: 'x', at: 'now' },
          due: { type: 'wait.ended', path: 'systems', reason: 'window', at: 'now' },
          next: 'queued',
        }),
      ).toBe('notWaiting');

      await store.createRun(newRun('c2'));
      expect(await store.cancelRun('c2', 'bob')).toEqual({ outcome: 'requested' });
      expect(await store.getRun('c2')).toMatchObject({
        status: 'running',
        cancelRequested: { by: 'bob', at: '2026-03-01T10:00:00.000Z' },
      });
      expect((await store.journal('c2')).map((entry) => entry.event)).toEqual([
        { type: 'run.cancelled', path: '', by: 'bob', requested: true },
      ]);

      await store.createRun(newRun('c3'));
      await store.setRunStatus('c3', 'succeeded');
      expect(await store.cancelRun('c3', 'bob')).toEqual({ outcome: 'ended', status: 'succeeded' });
      await expect(store.cancelRun('nope', 'bob')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    });

    it('ends a run cancelled when its cancel was recorded before its driver wrote its end, and refuses one after', async () => {
      const mail = (runId: string) => ({
        key: `${runId}/succeeded/r0/ops`,
        runId,
        event: 'succeeded',
        segment: 'r0',
        channel: 'ops',
        message: {},
      });
      // The driver's last step finished; the cancel comes before it writes the end: the cancel wins.
      await store.createRun(newRun('late'));
      expect(await store.cancelRun('late', 'alice')).toEqual({ outcome: 'requested' });
      expect(await store.setRunStatus('late', 'succeeded', { outputs: { n: 1 }, notifications: [mail('late')] })).toBe(
        'cancelled',
      );
      expect(await store.getRun('late')).toMatchObject({
        status: 'cancelled',
        outputs: { n: 1 },
        error: { code: 'RUN_CANCELLED', message: 'run late was cancelled by alice' },
      });
      expect(await store.listNotifications({ runId: 'late' })).toEqual([]);
      // A driver going to wait: the same.
      await store.createRun(newRun('late-wait'));
      await store.cancelRun('late-wait', 'alice');
      expect(await store.suspendRun('late-wait', { reason: 'approval', path: 'gate', since: 'now' })).toBe('cancelled');
      expect(await store.getRun('late-wait')).toMatchObject({ status: 'cancelled', error: { code: 'RUN_CANCELLED' } });
      // The end written first: the cancel is refused, and journals nothing.
      await store.createRun(newRun('early'));
      expect(await store.setRunStatus('early', 'succeeded', { notifications: [mail('early')] })).toBe('succeeded');
      expect(await store.cancelRun('early', 'alice')).toEqual({ outcome: 'ended', status: 'succeeded' });
      expect(await store.journal('early')).toEqual([]);
      expect(await store.listNotifications({ runId: 'early' })).toHaveLength(1);
    });

    it('refuses calls once closed', async () => {
      await store.close();
      await expect(store.getRun('r1')).rejects.toMatchObject({ code: 'STORE_CLOSED' });
      store = await factory.open({ now: clock.now });
    });
  });
}
