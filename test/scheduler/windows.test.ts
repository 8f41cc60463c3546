import { describe, expect, it } from 'vitest';
import { startGateOfRun } from '../../src/scheduler/index.js';
import { readScheduleState } from '../../src/scheduler/schedule-state.js';
import { RunStatus } from '../../src/store/index.js';
import type { FireRequest } from '../../src/scheduler/index.js';
import type { WindowSpec } from '../../src/windows/index.js';
import { createSchedulerHarness, schedule, scheduledPlaybook, scheduledTimes } from './harness.js';

// Saturdays 01:00–06:00 in Berlin (UTC+1 in winter): 2026-11-28 00:00Z to 05:00Z.
const weekendNights: WindowSpec = {
  timezone: 'Europe/Berlin',
  weekly: [{ days: ['sat'], from: '01:00', to: '06:00' }],
  onClose: 'wait',
};

describe('scheduler: maintenance windows and freezes', () => {
  it('skips a fire outside the window (recorded, logged with reason window) and fires inside it', async () => {
    const h = createSchedulerHarness('2026-11-26T00:00:00Z', { finishWith: RunStatus.succeeded });
    // 02:00 Berlin every day: only Saturday's is inside the window.
    const playbook = scheduledPlaybook([schedule({ cron: '0 2 * * *', timezone: 'Europe/Berlin' })], {
      window: weekendNights,
    });
    await h.scheduler.load([playbook]);
    expect(h.events('schedule.loaded')).toEqual([
      expect.objectContaining({ nextFireAt: '2026-11-26T01:00:00.000Z', nextRunAt: '2026-11-28T01:00:00.000Z' }),
    ]);
    await h.advanceTo('2026-11-27T12:00:00Z');
    expect(h.runs).toHaveLength(0);
    const skipped = h.events('schedule.skipped');
    expect(skipped).toEqual([
      expect.objectContaining({ scheduledAt: '2026-11-26T01:00:00.000Z', reason: 'window' }),
      expect.objectContaining({ scheduledAt: '2026-11-27T01:00:00.000Z', reason: 'window' }),
    ]);
    expect(String(skipped[1]?.detail)).toContain(
      'outside the maintenance window; it opens next at 2026-11-28 01:00 Europe/Berlin (2026-11-28T00:00:00.000Z)',
    );
    expect(await readScheduleState(h.store, 'nightly#0')).toMatchObject({
      lastSkip: { scheduledAt: '2026-11-27T01:00:00.000Z', code: 'window' },
    });
    await h.advanceTo('2026-11-28T12:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2026-11-28T01:00:00.000Z']);
    expect(h.events('schedule.fired')).toHaveLength(1);
  });

  it("applies a schedule's window in addition to its playbook's", async () => {
    const h = createSchedulerHarness('2026-11-27T12:00:00Z', { finishWith: RunStatus.succeeded });
    // Hourly; the playbook allows Saturday 01:00–06:00, the schedule only 03:00–04:00 of any day.
    const narrow: WindowSpec = {
      timezone: 'Europe/Berlin',
      weekly: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], from: '03:00', to: '04:00' }],
      onClose: 'wait',
    };
    const playbook = scheduledPlaybook([schedule({ cron: '0 * * * *', timezone: 'Europe/Berlin', window: narrow })], {
      window: weekendNights,
    });
    await h.scheduler.load([playbook]);
    await h.advanceTo('2026-11-29T12:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2026-11-28T02:00:00.000Z']);
  });

  it('skips a fire inside a freeze (reason freeze), and fires again after it', async () => {
    const h = createSchedulerHarness('2026-12-18T12:00:00Z', { finishWith: RunStatus.succeeded });
    const playbook = scheduledPlaybook([schedule({ cron: '0 6 * * *', timezone: 'Europe/Berlin' })], {
      freeze: [{ from: '2026-12-20', to: '2026-12-21', reason: 'year-end freeze', timezone: 'Europe/Berlin' }],
    });
    await h.scheduler.load([playbook]);
    await h.advanceTo('2026-12-22T12:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2026-12-19T05:00:00.000Z', '2026-12-22T05:00:00.000Z']);
    const skipped = h.events('schedule.skipped');
    expect(skipped.map((line) => [line.scheduledAt, line.reason])).toEqual([
      ['2026-12-20T05:00:00.000Z', 'freeze'],
      ['2026-12-21T05:00:00.000Z', 'freeze'],
    ]);
    expect(String(skipped[0]?.detail)).toContain('inside the freeze 2026-12-20..2026-12-21 (year-end freeze)');
  });

  it('skips a queued fire whose window closed while it waited', async () => {
    const h = createSchedulerHarness('2026-11-27T23:30:00Z');
    // Every hour in the window, queued behind a run that lasts past the window's end.
    const playbook = scheduledPlaybook([schedule({ cron: '0 * * * *', timezone: 'Europe/Berlin', overlap: 'queue' })], {
      window: weekendNights,
    });
    await h.scheduler.load([playbook]);
    await h.advanceTo('2026-11-28T00:30:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2026-11-28T00:00:00.000Z']);
    await h.advanceTo('2026-11-28T01:30:00Z');
    expect(h.events('schedule.queued')).toHaveLength(1);
    await h.advanceTo('2026-11-28T05:30:00Z');
    h.runs[0]?.end(RunStatus.succeeded);
    await h.scheduler.idle();
    // The queue held 01:00Z..05:00Z; at 05:30Z the window is closed, so none of them starts.
    expect(h.runs).toHaveLength(1);
    expect(h.events('schedule.skipped').filter((line) => line.reason === 'window').length).toBeGreaterThan(0);
  });
});

describe('the start gate of a stored run (worker, resume)', () => {
  const nightOnly: WindowSpec = {
    timezone: 'Europe/Berlin',
    weekly: [{ days: ['sat'], from: '01:00', to: '02:00' }],
    onClose: 'fail',
  };
  const playbook = scheduledPlaybook([schedule({ key: 'night', window: nightOnly })], { window: weekendNights });
  // Saturday 03:00 Berlin: inside the playbook's window, outside the schedule's.
  const saturdayThree = Date.parse('2026-11-28T02:00:00Z');

  it("is the playbook's and its schedule's windows for a scheduled run, the playbook's for a manual one", () => {
    const scheduled = startGateOfRun(playbook, { trigger: { kind: 'schedule', scheduleId: 'night' }, dryRun: false });
    expect(scheduled?.refusal(saturdayThree)?.reason).toContain('the maintenance window is closed');
    expect(scheduled?.onClose).toBe('fail');
    const manual = startGateOfRun(playbook, { trigger: { kind: 'manual' }, dryRun: false });
    expect(manual?.refusal(saturdayThree)).toBeUndefined();
    expect(manual?.onClose).toBe('wait');
  });

  it('is none for a run started with --ignore-window, a dry run, or a playbook without windows', () => {
    expect(startGateOfRun(playbook, { trigger: { kind: 'manual' }, dryRun: true })).toBeNull();
    expect(
      startGateOfRun(playbook, {
        trigger: { kind: 'manual', ignoredWindow: 'outside the maintenance window' },
        dryRun: false,
      }),
    ).toBeNull();
    expect(startGateOfRun(scheduledPlaybook([schedule()]), { trigger: { kind: 'manual' }, dryRun: false })).toBeNull();
  });
});

describe('scheduler: a run that ends waiting for an approval', () => {
  it('keeps its fire unfinished and leaves the run to its decider: not relaunched at the next ticks', async () => {
    const executed: FireRequest[] = [];
    const h = createSchedulerHarness('2026-11-26T00:30:00Z', {
      scheduler: {
        execute: async (request) => {
          executed.push(request);
          const runStore = h.store;
          await runStore.createRun({
            id: request.runId,
            playbook: request.playbook.name,
            playbookSource: request.playbook.source,
            playbookHash: request.playbook.hash,
            inputs: {},
            secretInputNames: [],
            dryRun: false,
            trigger: { kind: 'schedule', scheduleId: request.schedule.key },
            startedAt: new Date(h.clock.now()).toISOString(),
          });
          await runStore.suspendRun(request.runId, { reason: 'approval', path: 'gate', since: '2026-11-26T01:00:00Z' });
          return { status: RunStatus.waiting };
        },
      },
    });
    await h.scheduler.load([scheduledPlaybook([schedule({ cron: '0 1 * * *' })])]);
    await h.advanceTo('2026-11-26T01:00:00Z');
    expect(executed).toHaveLength(1);
    const runId = executed[0]?.runId;
    for (const at of ['2026-11-26T01:10:00Z', '2026-11-26T03:00:00Z', '2026-11-26T12:00:00Z']) await h.advanceTo(at);
    expect(executed).toHaveLength(1);
    expect(h.events('schedule.recovered')).toEqual([]);
    expect(await readScheduleState(h.store, 'nightly#0')).toMatchObject({
      lastResult: 'waiting',
      unfinished: [expect.objectContaining({ runId })],
    });
  });
});
