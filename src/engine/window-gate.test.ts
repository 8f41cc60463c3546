/**
 * A loop under a maintenance window (virtual time, fake platform): no new item starts once the
 * window closes, items in flight finish, and the run ends `waiting` (reason window, until the
 * next opening), from which a resume runs the rest; or it fails with `onClose: fail`.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import { StepStatus } from '../store/index.js';
import { createVirtualClock } from '../timers/index.js';
import type { WindowSpec } from '../windows/index.js';
import { fakeClient, fastRun, playbook, step, t, type FastRun } from './engine.test-kit.js';
import { resumeRun } from './resume-run.js';

// Sundays 01:00–03:30 Berlin. On 2026-10-25 the clocks go back at 03:00 CEST: the window is
// open from 23:00Z (Oct 24) to 02:30Z, three and a half hours; on 2026-11-01, 00:00Z to 02:30Z.
const sundayNight = (onClose: 'wait' | 'fail'): WindowSpec => ({
  timezone: 'Europe/Berlin',
  weekly: [{ days: ['sun'], from: '01:00', to: '03:30' }],
  onClose,
});

const HOUR = 3_600_000;
const hourlyLoop = step({
  id: 'systems',
  kind: 'forEach',
  items: t([0, 1, 2, 3, 4, 5, 6, 7]),
  as: 'n',
  concurrency: t(1),
  steps: [step({ id: 'update', kind: 'sleep', duration: t(HOUR) })],
});

const itemStarts = (run: FastRun): number[] =>
  run.events.flatMap((event) => (event.type === 'item.started' ? [event.index] : []));

const quietLogger = () =>
  createLogger({
    level: 'error',
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });

describe('forEach under a maintenance window', () => {
  it('starts no item after the window closes, finishes the one in flight, and waits for the next opening (DST day)', async () => {
    const book = playbook([hourlyLoop], { window: sundayNight('wait') });
    const first = await fastRun(book, { clock: createVirtualClock(Date.parse('2026-10-24T23:00:00Z')) });
    // Items start at 23:00Z, 00:00Z, 01:00Z and 02:00Z; at 03:00Z the window has closed (02:30Z).
    expect(itemStarts(first)).toEqual([0, 1, 2, 3]);
    expect(first.result.status).toBe('waiting');
    expect(first.result.wait).toMatchObject({ reason: 'window', path: 'systems', until: '2026-11-01T00:00:00.000Z' });
    expect(await first.store.getRun(first.result.runId)).toMatchObject({
      status: 'waiting',
      wait: { reason: 'window', until: '2026-11-01T00:00:00.000Z' },
    });
    const loop = first.result.steps.find((line) => line.path === 'systems');
    expect(loop?.error).toMatchObject({
      code: 'WINDOW_CLOSED',
      details: { onClose: 'wait', notStarted: [4, 5, 6, 7], until: '2026-11-01T00:00:00.000Z' },
    });
    expect(loop?.error?.message).toContain('it opens next at 2026-11-01 01:00 Europe/Berlin');
    expect(loop?.error?.message).toContain('4 of 8 items wait for it: systems[4], systems[5], systems[6], systems[7]');
    // The item in flight when the window closed finished: 02:00Z + 1 h.
    expect(first.clock.now()).toBe(Date.parse('2026-10-25T03:00:00Z'));
    expect(
      first.result.steps.filter((line) => line.kind === 'item' && line.status === StepStatus.notStarted),
    ).toHaveLength(4);

    // Before the opening a resume is refused; at it, the rest runs, up to the window's close again.
    await expect(
      resumeRun(book, {
        runId: first.result.runId,
        client: fakeClient({}),
        store: first.store,
        logger: quietLogger(),
        clock: createVirtualClock(Date.parse('2026-10-31T23:59:00Z')),
      }),
    ).rejects.toMatchObject({ code: 'RUN_WAITING' });
    const clock = createVirtualClock(Date.parse('2026-11-01T00:00:00Z'));
    const second = await resumeRun(book, {
      runId: first.result.runId,
      client: fakeClient({}),
      store: first.store,
      logger: quietLogger(),
      clock,
    });
    const started = (await first.store.journal(first.result.runId)).flatMap((entry) =>
      entry.event.type === 'item.started' ? [entry.event.index] : [],
    );
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(second.status).toBe('waiting');
    expect(second.wait).toMatchObject({ reason: 'window', until: '2026-11-08T00:00:00.000Z' });
    expect(second.steps.find((line) => line.path === 'systems')?.error).toMatchObject({ details: { notStarted: [7] } });

    const third = await resumeRun(book, {
      runId: first.result.runId,
      client: fakeClient({}),
      store: first.store,
      logger: quietLogger(),
      clock: createVirtualClock(Date.parse('2026-11-08T00:00:00Z')),
    });
    expect(third.status).toBe('succeeded');
  });

  it('with onClose: fail, fails the run and names the items that never started', async () => {
    const book = playbook([hourlyLoop], { window: sundayNight('fail') });
    const run = await fastRun(book, { clock: createVirtualClock(Date.parse('2026-10-24T23:00:00Z')) });
    expect(run.result.status).toBe('failed');
    expect(run.result.error).toMatchObject({
      code: 'WINDOW_CLOSED',
      details: { onClose: 'fail', notStarted: [4, 5, 6, 7] },
    });
    expect(run.result.error?.message).toContain(
      '4 of 8 items never started: systems[4], systems[5], systems[6], systems[7]',
    );
  });

  it("asks the injected gate on the run's clock, and none when given null (--ignore-window)", async () => {
    const book = playbook([hourlyLoop], { window: sundayNight('wait') });
    const ignoring = await fastRun(book, {
      clock: createVirtualClock(Date.parse('2026-10-24T23:00:00Z')),
      startGate: null,
    });
    expect(ignoring.result.status).toBe('succeeded');
    expect(itemStarts(ignoring)).toHaveLength(8);
    // Fed by the run's clock: closed from 01:30Z, after two hourly items started.
    const gated = await fastRun(playbook([hourlyLoop]), {
      startGate: {
        onClose: 'wait',
        refusal: (nowMs) =>
          nowMs >= Date.parse('2026-01-01T01:30:00Z')
            ? { reason: 'closed by the test', opensAtMs: undefined }
            : undefined,
      },
    });
    expect(itemStarts(gated)).toEqual([0, 1]);
    expect(gated.result.status).toBe('waiting');
    expect(gated.result.wait).toMatchObject({ reason: 'window' });
    expect(gated.result.wait?.until).toBeUndefined();
  });

  it('waits only once nothing is in flight: a closing window lets the items of every loop finish', async () => {
    // Two loops side by side (an outer loop's items); the second's items take 1 h 15 m, so it
    // stops at 02:30 while the first still has an item in flight until 03:00.
    const nested = step({
      id: 'clusters',
      kind: 'forEach',
      items: t([0, 1]),
      as: 'o',
      concurrency: t(2),
      steps: [
        step({
          id: 'systems',
          kind: 'forEach',
          items: t([0, 1, 2, 3]),
          as: 'n',
          concurrency: t(1),
          steps: [step({ id: 'update', kind: 'sleep', duration: t('${{ 3600000 + o * 900000 }}') })],
        }),
      ],
    });
    const run = await fastRun(playbook([nested]), {
      startGate: {
        onClose: 'wait',
        refusal: (nowMs) =>
          nowMs >= Date.parse('2026-01-01T02:30:00Z')
            ? { reason: 'closed by the test', opensAtMs: Date.parse('2026-01-02T00:00:00Z') }
            : undefined,
      },
    });
    const finished = run.events.flatMap((event) =>
      event.type === 'item.finished' && event.path.startsWith('clusters[')
        ? [`${event.path}[${event.index}] ${event.status}`]
        : [],
    );
    expect(finished.sort()).toEqual([
      'clusters[0].systems[0] succeeded',
      'clusters[0].systems[1] succeeded',
      'clusters[0].systems[2] succeeded',
      'clusters[1].systems[0] succeeded',
      'clusters[1].systems[1] succeeded',
    ]);
    expect(run.clock.now()).toBe(Date.parse('2026-01-01T03:00:00Z'));
    expect(run.result.status).toBe('waiting');
    expect(run.result.wait).toMatchObject({ reason: 'window', until: '2026-01-02T00:00:00.000Z' });
  });
});
