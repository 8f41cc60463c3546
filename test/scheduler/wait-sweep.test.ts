// The leader's sweep of due waits, in manual time: a scheduled run that ended waiting at an
// approval gate counts as still going (overlap skip holds the next fire), and once its timeout
// passed the sweep ends the wait (`approval.decided` timedOut) and resumes the run through
// `execute`, with no wall-clock wait. A run no schedule of it owns is left waiting (local store),
// and so is a schedule's run triggered by hand: the server continues those.
import { describe, expect, it } from 'vitest';
import { RunStatus } from '../../src/store/index.js';
import { createSchedulerHarness, schedule, scheduledPlaybook } from './harness.js';

describe('the scheduler sweeps due waits', () => {
  it('a waiting run holds the next fire (overlap skip); once its approval timed out, the sweep resumes it', async () => {
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', { scheduler: { waitSweepMs: 60_000 } });
    await h.scheduler.load([scheduledPlaybook([schedule()])]);
    await h.advanceTo('2025-01-01T06:00:00Z');
    const [first] = h.runs;
    if (!first) throw new Error('no fire at 06:00');
    const runId = first.request.runId;
    // What the engine leaves when the run reaches its gate: the record, `run.waiting`, status waiting.
    await h.store.createRun({
      id: runId,
      playbook: 'nightly',
      playbookSource: '/tmp/nightly.yaml',
      playbookHash: 'hash-1',
      inputs: {},
      secretInputNames: [],
      dryRun: false,
      trigger: { kind: 'schedule', scheduleId: 'nightly#0' },
      startedAt: '2025-01-01T06:00:00.000Z',
    });
    const wait = {
      reason: 'approval' as const,
      path: 'gate',
      since: '2025-01-01T06:00:00.000Z',
      timeoutAt: '2025-01-02T12:00:00.000Z',
      onTimeout: 'continue' as const,
    };
    await h.store.append(runId, { type: 'run.waiting', path: 'gate', wait });
    await h.store.suspendRun(runId, wait);
    first.end(RunStatus.waiting);
    // Runs started by hand on this local store, due at the same time: not this scheduler's to
    // continue, the schedule's own run triggered by hand (`schedules trigger`, "Trigger now") neither.
    for (const [id, trigger] of [
      ['by-hand', { kind: 'manual' }],
      ['triggered', { kind: 'trigger', scheduleId: 'nightly#0', by: 'on-call operator' }],
    ] as const) {
      await h.store.createRun({
        id,
        playbook: 'nightly',
        playbookSource: '/tmp/nightly.yaml',
        playbookHash: 'hash-1',
        inputs: {},
        secretInputNames: [],
        dryRun: false,
        trigger,
        startedAt: '2025-01-01T06:00:00.000Z',
      });
      await h.store.suspendRun(id, wait);
    }

    // The next day's fire: the previous run still waits, so overlap skip skips it; the sweep ends nothing.
    await h.advanceTo('2025-01-02T06:00:00Z');
    expect(h.runs).toHaveLength(1);
    expect(h.events('schedule.skipped').map((line) => line.reason)).toEqual([`overlap: run ${runId} is still waiting`]);
    expect(h.events('wait.ended')).toHaveLength(0);

    // Past the timeout, the sweep (every minute) ends the wait and resumes the run.
    await h.advanceTo('2025-01-02T12:01:00Z');
    // (The next day's own fire at 06:00 is a run of its own.)
    expect(
      h.runs.filter((run) => run.request.runId === runId).map((run) => [run.request.runId, run.request.resume]),
    ).toEqual([
      [runId, false],
      [runId, true],
    ]);
    const decided = (await h.store.journal(runId))
      .map((entry) => entry.event)
      .filter((event) => event.type === 'approval.decided');
    expect(decided).toEqual([
      { type: 'approval.decided', path: 'gate', decision: 'timedOut', by: 'timeout', at: '2025-01-02T12:00:00.000Z' },
    ]);
    expect(h.events('wait.ended')).toHaveLength(1);
    // Its wait is left to whoever resumes it (the server, `fleetbook resume`): ending it here would
    // leave it interrupted with no one to continue it.
    for (const id of ['by-hand', 'triggered']) {
      expect(await h.store.getRun(id), id).toMatchObject({ status: 'waiting' });
      expect(await h.store.journal(id), id).toEqual([]);
    }
  });
});
