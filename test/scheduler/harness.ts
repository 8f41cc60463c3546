/**
 * Harness of the scheduler tests: a manual clock shared by the scheduler and the memory
 * store (so leases expire in test time), captured JSON log lines, playbooks with schedules
 * built the way the loader normalises them, and an `execute` whose runs the test ends.
 */
import { captureLogs } from '../../src/api/testing.js';
import type { Playbook, ScheduleSpec } from '../../src/playbook/index.js';
import {
  createScheduler,
  type FireRequest,
  type Scheduler,
  type SchedulerOptions,
} from '../../src/scheduler/scheduler.js';
import { createManualClock, type ManualClock } from '../../src/scheduler/testing.js';
import { createMemoryRunStore, RunStatus, type RunStore } from '../../src/store/index.js';

export function schedule(extra: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    key: 'nightly#0',
    cron: '0 6 * * *',
    timezone: 'UTC',
    overlap: 'skip',
    catchUp: 'last',
    inputs: {},
    enabled: true,
    location: { file: '/tmp/nightly.yaml', line: 5, column: 5, pointer: '/schedules/0' },
    ...extra,
  };
}

export function scheduledPlaybook(schedules: ScheduleSpec[], extra: Partial<Playbook> = {}): Playbook {
  return {
    name: 'nightly',
    source: '/tmp/nightly.yaml',
    hash: 'hash-1',
    inputs: {},
    defaults: {
      retry: { maxAttempts: 1, initialDelayMs: 1, backoffRate: 2, maxDelayMs: 1, jitter: 'none', on: ['transient'] },
      wait: {},
    },
    schedules,
    steps: [],
    ...extra,
  };
}

/** A run started by the scheduler, ended by the test. */
export interface FakeRun {
  request: FireRequest;
  end(status: RunStatus): void;
}

export interface SchedulerHarness {
  clock: ManualClock;
  store: RunStore;
  scheduler: Scheduler;
  runs: FakeRun[];
  /** Log lines with `event` equal to `name`. */
  events(name: string): Array<Record<string, unknown>>;
  /** Runs still going. */
  running(): FakeRun[];
  /** Moves the clock to `iso` and waits until the scheduler has nothing under way. */
  advanceTo(iso: string): Promise<void>;
}

/**
 * `finishWith`: runs end by themselves with this status as soon as they start (undefined:
 * the test ends them). Runs end `interrupted` when their signal is aborted.
 */
export function createSchedulerHarness(
  startIso: string,
  options: {
    store?: RunStore;
    clock?: ManualClock;
    finishWith?: RunStatus;
    scheduler?: Partial<SchedulerOptions>;
  } = {},
): SchedulerHarness {
  const clock = options.clock ?? createManualClock(Date.parse(startIso));
  const store = options.store ?? createMemoryRunStore({ now: () => new Date(clock.now()) });
  const logs = captureLogs();
  const runs: FakeRun[] = [];
  const ended = new Set<FakeRun>();
  const scheduler = createScheduler({
    store,
    clock,
    logger: logs.logger,
    random: () => 0.5,
    execute: (request) =>
      new Promise((resolve) => {
        const run: FakeRun = {
          request,
          end: (status) => {
            ended.add(run);
            resolve({ status });
          },
        };
        runs.push(run);
        request.signal.addEventListener('abort', () => run.end(RunStatus.interrupted), { once: true });
        if (options.finishWith !== undefined) run.end(options.finishWith);
      }),
    ...options.scheduler,
  });
  return {
    clock,
    store,
    scheduler,
    runs,
    events: (name) => logs.lines().filter((line) => line.event === name),
    running: () => runs.filter((run) => !ended.has(run)),
    async advanceTo(iso) {
      await clock.advanceTo(Date.parse(iso));
      await scheduler.idle();
    },
  };
}

/** The nominal fire times of the runs, as ISO strings. */
export const scheduledTimes = (runs: FakeRun[]): string[] => runs.map((run) => run.request.scheduledAt.toISOString());
