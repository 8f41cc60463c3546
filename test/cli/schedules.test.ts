import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readScheduleState, writeScheduleState } from '../../src/scheduler/index.js';
import { openRunStore, RunStatus } from '../../src/store/index.js';
import { createSchedulerHarness, schedule, scheduledPlaybook, scheduledTimes } from '../scheduler/harness.js';
import { runCli, type CliOutcome } from '../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-schedules-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const nightly = join(import.meta.dirname, '..', 'scheduler', 'fixtures', 'nightly', 'nightly-subscription-report.yaml');
const env = () => ({ FLEETBOOK_HOME: join(dir, 'home') });

const cli = (args: string[]): Promise<CliOutcome> => runCli(args, { env: env() });

async function seed(key: string, state: Record<string, unknown>): Promise<void> {
  const store = await openRunStore({ env: env() });
  await store.setScheduleState(key, state);
  await store.close();
}

describe('fleetbook schedules', () => {
  it('shows the next fire times in the schedule timezone and in UTC, which agree', async () => {
    const { code, stdout } = await cli(['schedules', nightly, '--json', '--count', '3']);
    expect(code).toBe(0);
    const [view] = stdout
      .trim()
      .split('\n')
      .map(
        (line) => JSON.parse(line) as { key: string; timezone: string; next: Array<{ local: string; utc: string }> },
      );
    expect(view).toMatchObject({ key: 'nightly-subscription-report', timezone: 'Europe/Berlin' });
    expect(view?.next).toHaveLength(3);
    for (const fire of view?.next ?? []) {
      const match = /^(\d{4}-\d\d-\d\d) 06:00:00 \+0([12]):00$/.exec(fire.local);
      expect(match, fire.local).not.toBeNull();
      // 06:00 at +01:00 is 05:00Z, at +02:00 04:00Z.
      expect(fire.utc).toBe(`${match?.[1]}T0${6 - Number(match?.[2])}:00:00.000Z`);
    }
  });

  it('shows only the fires that will run: inside the window, outside the freezes; and the limits', async () => {
    const file = join(dir, 'windowed.yaml');
    writeFileSync(
      file,
      [
        'name: windowed',
        'window: { timezone: Europe/Berlin, weekly: [{ days: [sat], from: "01:00", to: "06:00" }] }',
        'freeze: [{ from: 2026-12-20, to: 2027-01-03, reason: year-end freeze }]',
        'schedules:',
        '  - { id: daily, cron: "0 2 * * *", timezone: Europe/Berlin }',
        'steps:',
        '  - log: hi',
        '',
      ].join('\n'),
    );
    const json = await cli(['schedules', file, '--json', '--count', '4']);
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout.trim()) as { next: Array<{ local: string; utc: string }>; limits: string[] };
    expect(view.next).toHaveLength(4);
    for (const fire of view.next) {
      // A daily 02:00 cron, and only its Saturday fires are shown.
      expect(new Date(Date.parse(fire.utc) + 3_600_000).getUTCDay(), fire.local).toBe(6);
      expect(fire.utc < '2026-12-20' || fire.utc >= '2027-01-04', fire.utc).toBe(true);
    }
    const text = await cli(['schedules', file, '--count', '1']);
    expect(text.stdout).toContain('  window sat 01:00-06:00 Europe/Berlin (onClose wait)');
    expect(text.stdout).toContain('  freeze 2026-12-20..2027-01-03 Europe/Berlin (year-end freeze)');
  });

  it('shows the last run and its result from the store, and a paused schedule with how to resume it', async () => {
    await seed('nightly-subscription-report', {
      activeSince: '2025-01-01T00:00:00.000Z',
      fingerprint: '0 6 * * *|Europe/Berlin',
      lastFireAt: '2025-03-29T05:00:00.000Z',
      lastRunId: 'run-1234',
      lastRunStartedAt: '2025-03-29T05:00:01.000Z',
      lastResult: 'failed',
      consecutiveFailures: 3,
      paused: true,
      pausedAt: '2025-03-29T05:10:00.000Z',
      pausedPlaybookHash: 'x',
      queued: [],
    });
    const { code, stdout } = await cli(['schedules', nightly, '--count', '1']);
    expect(code).toBe(0);
    expect(stdout).toContain('nightly-subscription-report  0 6 * * *  Europe/Berlin');
    expect(stdout).toContain('last   run run-1234 started 2025-03-29 05:00:01Z: failed');
    expect(stdout).toContain(
      'PAUSED after 3 failed runs in a row; fleetbook schedules resume nightly-subscription-report',
    );

    const resumed = await cli(['schedules', 'resume', 'nightly-subscription-report']);
    expect(resumed).toMatchObject({
      code: 0,
      stdout: 'Schedule nightly-subscription-report resumed; it fires again at its next fire time.\n',
    });
    const store = await openRunStore({ env: env() });
    expect(await readScheduleState(store, 'nightly-subscription-report')).toMatchObject({
      paused: false,
      consecutiveFailures: 0,
      lastRunId: 'run-1234',
    });
    await writeScheduleState(store, 'other', {
      activeSince: '2025-01-01T00:00:00.000Z',
      fingerprint: '',
      consecutiveFailures: 0,
      paused: false,
      queued: [],
      unfinished: [],
    });
    await store.close();
    expect((await cli(['schedules', 'resume', 'other'])).stdout).toBe('Schedule other is not paused.\n');
  });

  it('shows the last result from the run record: a scheduled run later finished by `fleetbook resume`, one that crashed', async () => {
    const store = await openRunStore({ env: env() });
    const startRun = (into: typeof store, id: string) =>
      into.createRun({
        id,
        playbook: 'nightly-subscription-report',
        playbookSource: nightly,
        playbookHash: 'h',
        inputs: {},
        secretInputNames: [],
        dryRun: false,
        trigger: { kind: 'schedule', scheduleId: 'nightly-subscription-report' },
        startedAt: '2025-03-29T05:00:01.000Z',
      });
    await startRun(store, 'run-resumed');
    await store.setRunStatus('run-resumed', 'succeeded');
    // The daemon saw it stop (interrupted); `fleetbook resume` finished it afterwards.
    await writeScheduleState(store, 'nightly-subscription-report', {
      activeSince: '2025-01-01T00:00:00.000Z',
      fingerprint: '0 6 * * *|Europe/Berlin',
      lastRunId: 'run-resumed',
      lastRunStartedAt: '2025-03-29T05:00:01.000Z',
      lastResult: 'interrupted',
      consecutiveFailures: 0,
      paused: false,
      queued: [],
      unfinished: [{ runId: 'run-resumed', scheduledAt: '2025-03-29T05:00:00.000Z' }],
    });
    await store.close();
    const shown = await cli(['schedules', nightly, '--count', '1']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('last   run run-resumed started 2025-03-29 05:00:01Z: succeeded');
    const json = await cli(['schedules', nightly, '--json', '--count', '1']);
    expect(JSON.parse(json.stdout) as unknown).toMatchObject({
      state: { lastRunId: 'run-resumed', lastResult: 'succeeded' },
    });

    // The state says running, the run record too, but no process holds the run's lease: it crashed.
    const again = await openRunStore({ env: env() });
    await startRun(again, 'run-crashed');
    const state = await readScheduleState(again, 'nightly-subscription-report');
    await writeScheduleState(again, 'nightly-subscription-report', {
      ...state!,
      lastRunId: 'run-crashed',
      lastResult: 'running',
    });
    await again.close();
    expect((await cli(['schedules', nightly, '--count', '1'])).stdout).toContain(
      'last   run run-crashed started 2025-03-29 05:00:01Z: interrupted',
    );
  });

  it('resume while the daemon writes the schedule: both writes stay (the schedule fires again, its skip is recorded)', async () => {
    const key = 'nightly-subscription-report';
    await seed(key, {
      activeSince: '2025-01-01T00:00:00.000Z',
      fingerprint: '0 6 * * *|Europe/Berlin',
      lastFireAt: '2025-03-28T05:00:00.000Z',
      consecutiveFailures: 3,
      paused: true,
      pausedAt: '2025-03-28T05:10:00.000Z',
      pausedPlaybookHash: 'hash-1',
      queued: [],
    });
    const store = await openRunStore({ env: env() });
    let resumeDuringRead: (() => Promise<unknown>) | undefined;
    // The daemon reads the paused state; `fleetbook schedules resume` runs before the daemon writes its skip.
    const racing = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'getScheduleState' || typeof value !== 'function') return value;
        return async (scheduleKey: string) => {
          const read = (await (value as (k: string) => Promise<unknown>).call(target, scheduleKey)) as unknown;
          const resume = resumeDuringRead;
          resumeDuringRead = undefined;
          await resume?.();
          return read;
        };
      },
    });
    const h = createSchedulerHarness('2025-03-29T04:00:00Z', { store: racing, finishWith: RunStatus.succeeded });
    await h.scheduler.load([scheduledPlaybook([schedule({ key, cron: '0 6 * * *', timezone: 'Europe/Berlin' })])]);
    let resumed: CliOutcome | undefined;
    resumeDuringRead = async () => (resumed = await cli(['schedules', 'resume', key]));
    await h.advanceTo('2025-03-29T05:00:00Z');
    expect(resumed).toMatchObject({
      code: 0,
      stdout: `Schedule ${key} resumed; it fires again at its next fire time.\n`,
    });
    expect(h.events('schedule.skipped')).toEqual([
      expect.objectContaining({
        scheduledAt: '2025-03-29T05:00:00.000Z',
        reason: 'paused after 3 failed runs in a row',
      }),
    ]);
    expect(await readScheduleState(store, key)).toMatchObject({
      paused: false,
      consecutiveFailures: 0,
      lastFireAt: '2025-03-29T05:00:00.000Z',
      lastSkip: { scheduledAt: '2025-03-29T05:00:00.000Z' },
    });
    await h.advanceTo('2025-03-30T04:00:00Z');
    expect(scheduledTimes(h.runs)).toEqual(['2025-03-30T04:00:00.000Z']);
    await h.scheduler.stop();
    await store.close();
  });

  it('refuses an unknown key (exit 2) and an invalid playbook with its location (exit 2)', async () => {
    const unknown = await cli(['schedules', 'resume', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("No schedule 'nope' has fired");
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'name: bad\nschedules:\n  - cron: "0 6 * * *"\n    timezone: Europe/Nowhere\nsteps:\n  - log: hi\n',
    );
    const bad = await cli(['schedules', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml:4:\d+ {2}error .*Europe\/Nowhere/);
  });
});
