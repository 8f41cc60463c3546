import { describe, expect, it } from 'vitest';
import { readScheduleState } from '../../src/scheduler/schedule-state.js';
import { createMemoryRunStore, RunStatus } from '../../src/store/index.js';
import { createSchedulerHarness, schedule, scheduledPlaybook, scheduledTimes } from './harness.js';

const flush = async (h: { scheduler: { idle(): Promise<void> } }) => h.scheduler.idle();

describe('scheduler: firing', () => {
  it('fires at each fire time, records the fire before the run starts, and the result after', async () => {
    const h = createSchedulerHarness('2025-01-01T00:00:00Z');
    let stateAtStart: unknown;
    const wrapped = createSchedulerHarness('2025-01-01T00:00:00Z', {
      store: h.store,
      clock: h.clock,
      scheduler: {
        execute: async (request) => {
          stateAtStart = await readScheduleState(h.store, request.schedule.key);
          return { status: RunStatus.succeeded };
        },
      },
    });
    await wrapped.scheduler.load([scheduledPlaybook([schedule()])]);
    await wrapped.advanceTo('2025-01-03T12:00:00Z');
    const fired = wrapped.events('schedule.fired');
    expect(fired.map((line) => line.scheduledAt)).toEqual([
      '2025-01-01T06:00:00.000Z',
      '2025-01-02T06:00:00.000Z',
      '2025-01-03T06:00:00.000Z',
    ]);
    expect(stateAtStart).toMatchObject({
      lastFireAt: '2025-01-03T06:00:00.000Z',
      lastResult: 'running',
      lastRunId: fired[2]?.runId,
    });
    expect(await readScheduleState(h.store, 'nightly#0')).toMatchObject({
      lastResult: 'succeeded',
      consecutiveFailures: 0,
      paused: false,
    });
  });

  it('does not fire a disabled schedule', async () => {
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', { finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule({ enabled: false })])]);
    await h.advanceTo('2025-01-05T00:00:00Z');
    expect(h.runs).toHaveLength(0);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it('delays each fire by the jitter and keeps the nominal fire time', async () => {
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', { finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule({ jitterMs: 10 * 60_000 })])]);
    await h.advanceTo('2025-01-01T06:04:59Z');
    expect(h.runs).toHaveLength(0); // random() is 0.5: five minutes late
    await h.advanceTo('2025-01-01T06:05:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-01T06:00:00.000Z']);
  });

  it('logs each loaded schedule with its next fire time', async () => {
    const h = createSchedulerHarness('2025-01-01T00:00:00Z');
    await h.scheduler.load([scheduledPlaybook([schedule({ cron: '0 6 * * *', timezone: 'America/New_York' })])]);
    expect(h.events('schedule.loaded')).toEqual([
      expect.objectContaining({ scheduleKey: 'nightly#0', nextFireAt: '2025-01-01T11:00:00.000Z' }),
    ]);
  });
});

describe('scheduler: overlap', () => {
  const hourly = (overlap: 'skip' | 'queue' | 'allow' | 'cancel-running') =>
    scheduledPlaybook([schedule({ cron: '0 * * * *', overlap })]);

  it('skip (default): a fire while the previous run runs is skipped, with the reason logged', async () => {
    const h = createSchedulerHarness('2025-01-01T00:30:00Z');
    await h.scheduler.load([hourly('skip')]);
    await h.advanceTo('2025-01-01T02:30:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-01T01:00:00.000Z']);
    const skipped = h.events('schedule.skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ scheduledAt: '2025-01-01T02:00:00.000Z', scheduleKey: 'nightly#0' });
    expect(String(skipped[0]?.reason)).toContain(`run ${h.runs[0]?.request.runId} is still running`);
    h.runs[0]?.end(RunStatus.succeeded);
    await h.advanceTo('2025-01-01T03:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-01T01:00:00.000Z', '2025-01-01T03:00:00.000Z']);
  });

  it('queue: fires wait for the running run and start one after another, oldest first', async () => {
    const h = createSchedulerHarness('2025-01-01T00:30:00Z');
    await h.scheduler.load([hourly('queue')]);
    await h.advanceTo('2025-01-01T03:30:00Z');
    expect(h.running()).toHaveLength(1);
    expect(h.events('schedule.queued').map((line) => line.scheduledAt)).toEqual([
      '2025-01-01T02:00:00.000Z',
      '2025-01-01T03:00:00.000Z',
    ]);
    expect((await readScheduleState(h.store, 'nightly#0'))?.queued).toEqual([
      '2025-01-01T02:00:00.000Z',
      '2025-01-01T03:00:00.000Z',
    ]);
    h.running()[0]?.end(RunStatus.succeeded);
    await flush(h);
    expect(h.running().map((run) => run.request.scheduledAt.toISOString())).toEqual(['2025-01-01T02:00:00.000Z']);
    h.running()[0]?.end(RunStatus.failed);
    await flush(h);
    expect(scheduledTimes(h.runs)).toEqual([
      '2025-01-01T01:00:00.000Z',
      '2025-01-01T02:00:00.000Z',
      '2025-01-01T03:00:00.000Z',
    ]);
    expect((await readScheduleState(h.store, 'nightly#0'))?.queued).toEqual([]);
  });

  it('allow: runs overlap', async () => {
    const h = createSchedulerHarness('2025-01-01T00:30:00Z');
    await h.scheduler.load([hourly('allow')]);
    await h.advanceTo('2025-01-01T03:30:00Z');
    expect(h.running()).toHaveLength(3);
    expect(h.events('schedule.skipped')).toHaveLength(0);
  });

  it('cancel-running: the running run is aborted and has ended before the new one starts', async () => {
    const h = createSchedulerHarness('2025-01-01T00:30:00Z');
    await h.scheduler.load([hourly('cancel-running')]);
    await h.advanceTo('2025-01-01T01:30:00Z');
    const first = h.runs[0];
    await h.advanceTo('2025-01-01T02:30:00Z');
    expect(first?.request.signal.aborted).toBe(true);
    expect(h.runs).toHaveLength(2);
    expect(h.running().map((run) => run.request.scheduledAt.toISOString())).toEqual(['2025-01-01T02:00:00.000Z']);
    const state = await readScheduleState(h.store, 'nightly#0');
    // The cancelled run's end does not overwrite the new run's state, nor count as a failure.
    expect(state).toMatchObject({ lastRunId: h.runs[1]?.request.runId, lastResult: 'running', consecutiveFailures: 0 });
  });
});

describe('scheduler: pause after failures', () => {
  it('pauses after N failed runs in a row, skips while paused, resumes when the playbook changes', async () => {
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', { finishWith: RunStatus.failed });
    const book = scheduledPlaybook([schedule({ pauseAfterFailures: 2 })]);
    await h.scheduler.load([book]);
    await h.advanceTo('2025-01-04T12:00:00Z');
    expect(h.runs).toHaveLength(2);
    expect(h.events('schedule.paused')).toEqual([
      expect.objectContaining({ scheduleKey: 'nightly#0', consecutiveFailures: 2 }),
    ]);
    expect(h.events('schedule.skipped').map((line) => line.scheduledAt)).toEqual([
      '2025-01-03T06:00:00.000Z',
      '2025-01-04T06:00:00.000Z',
    ]);
    expect(await readScheduleState(h.store, 'nightly#0')).toMatchObject({
      paused: true,
      consecutiveFailures: 2,
      lastResult: 'failed',
      pausedPlaybookHash: 'hash-1',
    });

    await h.scheduler.load([book]); // a reload of the same file does not resume it
    await h.advanceTo('2025-01-05T12:00:00Z');
    expect(h.runs).toHaveLength(2);

    await h.scheduler.load([{ ...book, hash: 'hash-2' }]);
    expect(h.events('schedule.resumed')).toHaveLength(1);
    await h.advanceTo('2025-01-06T12:00:00Z');
    expect(scheduledTimes(h.runs).at(-1)).toBe('2025-01-06T06:00:00.000Z');
  });

  it('a success resets the count', async () => {
    const statuses = [RunStatus.failed, RunStatus.succeeded, RunStatus.failed, RunStatus.failed];
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', {
      scheduler: { execute: async () => ({ status: statuses.shift() ?? RunStatus.succeeded }) },
    });
    await h.scheduler.load([scheduledPlaybook([schedule({ pauseAfterFailures: 2 })])]);
    await h.advanceTo('2025-01-03T12:00:00Z');
    expect(await readScheduleState(h.store, 'nightly#0')).toMatchObject({ paused: false, consecutiveFailures: 1 });
    await h.advanceTo('2025-01-04T12:00:00Z');
    expect(await readScheduleState(h.store, 'nightly#0')).toMatchObject({ paused: true, consecutiveFailures: 2 });
  });
});

describe('scheduler: catch-up after three days down', () => {
  // Up on the 1st (fires 06:00), down from the 1st 12:00 to the 4th 12:00: the 2nd, 3rd and 4th are missed.
  async function downtime(catchUp: 'none' | 'last' | 'all', extra: { catchUpWindowMs?: number } = {}) {
    const first = createSchedulerHarness('2025-01-01T00:00:00Z', { finishWith: RunStatus.succeeded });
    const book = scheduledPlaybook([schedule({ catchUp, ...extra })]);
    await first.scheduler.load([book]);
    await first.advanceTo('2025-01-01T12:00:00Z');
    await first.scheduler.stop();
    expect(scheduledTimes(first.runs)).toEqual(['2025-01-01T06:00:00.000Z']);

    await first.clock.advanceTo(Date.parse('2025-01-04T12:00:00Z'));
    const second = createSchedulerHarness('2025-01-04T12:00:00Z', {
      store: first.store,
      clock: first.clock,
      finishWith: RunStatus.succeeded,
    });
    await second.scheduler.load([book]);
    await second.scheduler.idle();
    return second;
  }

  it('none: nothing missed is fired; the next fire is on time', async () => {
    const h = await downtime('none');
    expect(h.runs).toHaveLength(0);
    expect(h.events('schedule.catchUp')).toEqual([expect.objectContaining({ policy: 'none', missed: 3, firing: [] })]);
    await h.advanceTo('2025-01-05T06:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-05T06:00:00.000Z']);
  });

  it('last (default): only the newest missed fire runs, at once', async () => {
    const h = await downtime('last');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-04T06:00:00.000Z']);
    expect(h.runs[0]?.request.catchUp).toBe(true);
    await h.advanceTo('2025-01-05T06:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-04T06:00:00.000Z', '2025-01-05T06:00:00.000Z']);
  });

  it('all: every missed fire runs, one after another, oldest first', async () => {
    const h = await downtime('all');
    expect(scheduledTimes(h.runs)).toEqual([
      '2025-01-02T06:00:00.000Z',
      '2025-01-03T06:00:00.000Z',
      '2025-01-04T06:00:00.000Z',
    ]);
    expect(h.events('schedule.catchUp')).toEqual([expect.objectContaining({ policy: 'all', missed: 3 })]);
  });

  it('all within a window: only the missed fires inside it', async () => {
    const h = await downtime('all', { catchUpWindowMs: 36 * 3600_000 });
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-03T06:00:00.000Z', '2025-01-04T06:00:00.000Z']);
  });

  it('a restart with nothing missed fires nothing twice', async () => {
    const first = createSchedulerHarness('2025-01-01T00:00:00Z', { finishWith: RunStatus.succeeded });
    const book = scheduledPlaybook([schedule({ catchUp: 'all' })]);
    await first.scheduler.load([book]);
    await first.advanceTo('2025-01-01T06:00:30Z');
    await first.scheduler.stop();
    const second = createSchedulerHarness('2025-01-01T06:00:30Z', {
      store: first.store,
      clock: first.clock,
      finishWith: RunStatus.succeeded,
    });
    await second.scheduler.load([book]);
    await second.advanceTo('2025-01-01T12:00:00Z');
    expect(first.runs.length + second.runs.length).toBe(1);
  });
});

describe('scheduler: a daily 02:30 Berlin schedule through both DST nights', () => {
  it('fires once a day: at 03:00 CEST on the spring-forward day, at the first 02:30 on the fall-back day', async () => {
    const h = createSchedulerHarness('2025-03-28T12:00:00Z', { finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule({ cron: '30 2 * * *', timezone: 'Europe/Berlin' })])]);
    await h.advanceTo('2025-10-27T12:00:00Z');
    const fires = scheduledTimes(h.runs);
    expect(fires).toHaveLength(213); // 2025-03-29 to 2025-10-27, one a day
    expect(fires.slice(0, 3)).toEqual([
      '2025-03-29T01:30:00.000Z',
      '2025-03-30T01:00:00.000Z',
      '2025-03-31T00:30:00.000Z',
    ]);
    expect(fires.slice(-3)).toEqual([
      '2025-10-25T00:30:00.000Z',
      '2025-10-26T00:30:00.000Z',
      '2025-10-27T01:30:00.000Z',
    ]);
  });
});

describe('scheduler: America/New_York through both DST nights', () => {
  it('an hourly schedule fires once per wall-clock hour through the fall-back night: the repeated 01:00 once', async () => {
    // 2025-11-02: 02:00 EDT (06:00Z) goes back to 01:00 EST; 01:00-01:59 happens twice.
    const h = createSchedulerHarness('2025-11-02T03:30:00Z', { finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule({ cron: '0 * * * *', timezone: 'America/New_York' })])]);
    await h.advanceTo('2025-11-02T09:30:00Z');
    expect(scheduledTimes(h.runs)).toEqual([
      '2025-11-02T04:00:00.000Z', // 00:00 EDT
      '2025-11-02T05:00:00.000Z', // 01:00 EDT, the first of the two 01:00s
      '2025-11-02T07:00:00.000Z', // 02:00 EST
      '2025-11-02T08:00:00.000Z', // 03:00 EST
      '2025-11-02T09:00:00.000Z', // 04:00 EST
    ]);
    expect(h.events('schedule.skipped')).toEqual([]);
    expect(h.events('schedule.catchUp')).toEqual([]);
  });

  it('a daily 02:30 fires once on the spring-forward day, at 03:00 EDT when the clocks jump, and at 02:30 on the days around it', async () => {
    // 2025-03-09: 02:00 EST (07:00Z) jumps to 03:00 EDT; 02:30 does not exist that day.
    const h = createSchedulerHarness('2025-03-07T12:00:00Z', { finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule({ cron: '30 2 * * *', timezone: 'America/New_York' })])]);
    await h.advanceTo('2025-03-09T06:59:59Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-03-08T07:30:00.000Z']);
    await h.advanceTo('2025-03-11T12:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual([
      '2025-03-08T07:30:00.000Z',
      '2025-03-09T07:00:00.000Z',
      '2025-03-10T06:30:00.000Z',
      '2025-03-11T06:30:00.000Z',
    ]);
    expect(h.events('schedule.catchUp')).toEqual([]);
  });
});

describe('scheduler: stop and restart', () => {
  it('stop aborts running runs, waits for them to end, and fires nothing more; queued fires survive in the store for the next daemon', async () => {
    const first = createSchedulerHarness('2025-01-01T00:30:00Z');
    const book = scheduledPlaybook([schedule({ cron: '0 * * * *', overlap: 'queue' })]);
    await first.scheduler.load([book]);
    await first.advanceTo('2025-01-01T02:30:00Z');
    expect(first.running()).toHaveLength(1);
    await first.scheduler.stop({ abortRuns: true });
    expect(first.runs[0]?.request.signal.aborted).toBe(true);
    expect(first.running()).toHaveLength(0);
    expect(await readScheduleState(first.store, 'nightly#0')).toMatchObject({
      lastResult: 'interrupted',
      queued: ['2025-01-01T02:00:00.000Z'],
      consecutiveFailures: 0,
    });
    await first.advanceTo('2025-01-01T02:40:00Z');
    expect(first.runs).toHaveLength(1);

    const second = createSchedulerHarness('2025-01-01T02:40:00Z', {
      store: first.store,
      clock: first.clock,
      finishWith: RunStatus.succeeded,
    });
    await second.scheduler.load([book]);
    await second.advanceTo('2025-01-01T03:00:00Z');
    // The stopped run first (it had no run record: started again under its id), then the queue.
    expect(scheduledTimes(second.runs)).toEqual([
      '2025-01-01T01:00:00.000Z',
      '2025-01-01T02:00:00.000Z',
      '2025-01-01T03:00:00.000Z',
    ]);
    expect(second.runs[0]?.request).toMatchObject({ runId: first.runs[0]?.request.runId, resume: false });
    expect(await readScheduleState(second.store, 'nightly#0')).toMatchObject({
      unfinished: [],
      lastResult: 'succeeded',
    });
  });

  /** A first scheduler fires the 06:00 run and stops with it in flight; the run record is then given `status` (undefined: none). */
  async function stoppedWithRun(status: RunStatus | undefined) {
    const first = createSchedulerHarness('2025-01-01T05:00:00Z');
    const book = scheduledPlaybook([schedule()]);
    await first.scheduler.load([book]);
    await first.advanceTo('2025-01-01T06:00:00Z');
    await first.scheduler.stop({ abortRuns: true });
    const runId = first.runs[0]?.request.runId ?? '';
    if (status !== undefined) {
      await first.store.createRun({
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
      await first.store.setRunStatus(runId, status);
    }
    await first.clock.advanceTo(Date.parse('2025-01-01T07:00:00Z'));
    const second = createSchedulerHarness('2025-01-01T07:00:00Z', {
      store: first.store,
      clock: first.clock,
      finishWith: RunStatus.succeeded,
    });
    await second.scheduler.load([book]);
    await second.scheduler.idle();
    return { runId, second };
  }

  it('a restarted scheduler resumes the run its predecessor stopped, once, under the same id and fire time', async () => {
    const { runId, second } = await stoppedWithRun(RunStatus.interrupted);
    expect(second.runs.map((run) => run.request)).toEqual([
      expect.objectContaining({ runId, resume: true, scheduledAt: new Date('2025-01-01T06:00:00Z') }),
    ]);
    expect(second.events('schedule.recovered')).toEqual([expect.objectContaining({ runId, resume: true })]);
    expect(second.events('schedule.fired')).toHaveLength(0);
    await second.advanceTo('2025-01-01T12:00:00Z');
    expect(second.runs).toHaveLength(1);
    expect(await readScheduleState(second.store, 'nightly#0')).toMatchObject({
      lastRunId: runId,
      lastResult: 'succeeded',
      unfinished: [],
    });
  });

  it('resumes a run left running without a live driver (its daemon crashed), and waits for one another process drives', async () => {
    const crashed = await stoppedWithRun(RunStatus.running);
    expect(crashed.second.runs.map((run) => run.request)).toEqual([
      expect.objectContaining({ runId: crashed.runId, resume: true }),
    ]);

    const first = createSchedulerHarness('2025-01-01T05:00:00Z');
    const book = scheduledPlaybook([schedule()]);
    await first.scheduler.load([book]);
    await first.advanceTo('2025-01-01T06:00:00Z');
    await first.scheduler.stop({ abortRuns: true });
    const runId = first.runs[0]?.request.runId ?? '';
    await first.store.createRun({
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
    // A `fleetbook resume` in another process drives it: its lease, another owner, for five minutes.
    await first.store.acquireLease(`run:${runId}`, 'another-process', 5 * 60_000);
    const second = createSchedulerHarness('2025-01-01T06:00:00Z', {
      store: first.store,
      clock: first.clock,
      finishWith: RunStatus.succeeded,
    });
    await second.scheduler.load([book]);
    await second.advanceTo('2025-01-01T06:04:00Z');
    expect(second.runs).toHaveLength(0);
    // That process died without a word: once its lease lapsed, the next look resumes the run.
    await second.advanceTo('2025-01-01T06:07:00Z');
    expect(second.runs.map((run) => run.request)).toEqual([expect.objectContaining({ runId, resume: true })]);
  });

  it('marks failed, with the reason, a run whose driving process died three times, instead of resuming it forever', async () => {
    const first = createSchedulerHarness('2025-01-01T05:00:00Z');
    const book = scheduledPlaybook([schedule()]);
    await first.scheduler.load([book]);
    await first.advanceTo('2025-01-01T06:00:00Z');
    const runId = first.runs[0]?.request.runId ?? '';
    await first.store.createRun({
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
    // Each daemon dies with the run it drives: the run stays `running`, no live process holds its
    // lease, and the next daemon to start finds it so.
    const daemons = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const next = createSchedulerHarness('2025-01-01T06:30:00Z', { store: first.store, clock: first.clock });
      await next.scheduler.load([book]);
      await next.scheduler.idle();
      daemons.push(next);
    }
    const [second, third, fourth] = daemons;
    expect(second?.runs.map((run) => run.request)).toEqual([expect.objectContaining({ runId, resume: true })]);
    expect(third?.runs.map((run) => run.request)).toEqual([expect.objectContaining({ runId, resume: true })]);
    expect(fourth?.runs).toHaveLength(0);
    expect(fourth?.events('schedule.runCrashed')).toEqual([expect.objectContaining({ runId, crashes: 3 })]);
    const run = await first.store.getRun(runId);
    expect(run).toMatchObject({ status: RunStatus.failed, error: { code: 'RUN_CRASHED' } });
    expect(run?.error?.message).toContain('died 3 times');
    expect(await readScheduleState(first.store, 'nightly#0')).toMatchObject({
      lastResult: 'failed',
      unfinished: [],
      consecutiveFailures: 1,
    });
  });

  it('does not resume a run that was finished meanwhile (by hand), and shows its result', async () => {
    const { second } = await stoppedWithRun(RunStatus.succeeded);
    expect(second.runs).toHaveLength(0);
    expect(await readScheduleState(second.store, 'nightly#0')).toMatchObject({
      lastResult: 'succeeded',
      unfinished: [],
    });
  });

  it('does not resume a run that cancel-running stopped', async () => {
    const h = createSchedulerHarness('2025-01-01T00:30:00Z');
    await h.scheduler.load([scheduledPlaybook([schedule({ cron: '0 * * * *', overlap: 'cancel-running' })])]);
    await h.advanceTo('2025-01-01T02:30:00Z');
    expect(h.runs.map((run) => run.request.signal.aborted)).toEqual([true, false]);
    await h.advanceTo('2025-01-01T03:30:00Z');
    expect(h.runs.map((run) => run.request.resume)).toEqual([false, false, false]);
    expect((await readScheduleState(h.store, 'nightly#0'))?.unfinished.map((fire) => fire.scheduledAt)).toEqual([
      '2025-01-01T03:00:00.000Z',
    ]);
  });
});

describe('scheduler: store errors', () => {
  /** The memory store, whose `method` throws on its next `times` calls once `failNext` is called. */
  function flakyStore(method: 'getScheduleState' | 'acquireLease') {
    const store = createMemoryRunStore();
    let failures = 0;
    const flaky = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== method || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (failures > 0) {
            failures -= 1;
            return Promise.reject(new Error(`${method}: database is locked`));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { store: flaky, failNext: (times: number) => void (failures = times) };
  }

  it('a state read that throws at a fire time is logged and tried again: the fire runs late, and the next ones on time', async () => {
    const flaky = flakyStore('getScheduleState');
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', { store: flaky.store, finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule()])]);
    flaky.failNext(1);
    await h.advanceTo('2025-01-01T06:00:00Z');
    expect(h.runs).toHaveLength(0);
    expect(h.events('schedule.error')).toEqual([
      expect.objectContaining({ scheduleKey: 'nightly#0', failedTicks: 1, retryInMs: 1000 }),
    ]);
    await h.advanceTo('2025-01-02T06:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-01T06:00:00.000Z', '2025-01-02T06:00:00.000Z']);
    expect(h.runs[0]?.request.catchUp).toBe(false);
  });

  it('a lease check that keeps throwing is retried with a growing backoff, and the schedule fires once it answers', async () => {
    const flaky = flakyStore('acquireLease');
    const h = createSchedulerHarness('2025-01-01T00:00:00Z', {
      store: flaky.store,
      finishWith: RunStatus.succeeded,
      scheduler: { mayFire: () => flaky.store.acquireLease('scheduler', 'me', 30_000) },
    });
    await h.scheduler.load([scheduledPlaybook([schedule()])]);
    flaky.failNext(4);
    await h.advanceTo('2025-01-01T06:01:00Z');
    expect(h.events('schedule.error').map((line) => line.retryInMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(scheduledTimes(h.runs)).toEqual(['2025-01-01T06:00:00.000Z']);
    await h.advanceTo('2025-01-02T06:00:00Z');
    expect(h.runs).toHaveLength(2);
  });
});
