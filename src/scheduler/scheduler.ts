/**
 * `createScheduler`: fires the schedules of loaded playbooks at their times, applies their
 * overlap, catch-up, jitter and pause policies, and records every fire in the run store
 * before the run starts. It starts runs through `execute` (the daemon passes the engine),
 * so its policies are tested without a platform. Design notes: ARCHITECTURE.md. Its parts:
 * schedule-context.ts (what they share), fire-due.ts (the timer loop and catch-up),
 * fire-run.ts (overlap, a run's start and end), recover-runs.ts (runs left unfinished).
 */
import { hasTimeRules, timeRulesOf, type Playbook } from '../playbook/index.js';
import { continuedByScheduler, describeWait, endDueWaits } from '../engine/index.js';
import { isQueueStore } from '../store/index.js';
import { systemClock, type Timer } from './clock.js';
import { recover } from './recover-runs.js';
import { tick } from './fire-due.js';
import { createFireTimes, type FireTimes } from './fire-times.js';
import {
  enqueue,
  fields,
  iso,
  stateOf,
  type Entry,
  type SchedulerContext,
  type SchedulerOptions,
} from './schedule-context.js';
import { SchedulerError } from './scheduler-error.js';
import { runnableFires } from './window-check.js';

export {
  DRIVEN_RECHECK_MS,
  ERROR_RETRY_MS,
  LATE_TOLERANCE_MS,
  MAX_CATCH_UP_FIRES,
  MAX_ERROR_RETRY_MS,
  MAX_QUEUED_FIRES,
  type FireRequest,
  type SchedulerOptions,
} from './schedule-context.js';

export interface Scheduler {
  /**
   * Fires the schedules of `playbooks` from now on, in place of those loaded before (state
   * is kept by schedule key; running runs go on). Catches up fires missed since the last
   * one recorded. Throws `INVALID_CRON`/`INVALID_TIMEZONE` or a duplicate key before changing anything.
   */
  load(playbooks: readonly Playbook[]): Promise<void>;
  /** Stops firing. With `abortRuns`, aborts the runs' signals; resolves when every run has ended. */
  stop(options?: { abortRuns?: boolean }): Promise<void>;
  /** Resolves when no fire or state write is under way (runs may go on), for tests. */
  idle(): Promise<void>;
  /** Run ids the scheduler started that have not ended. */
  runningRunIds(): string[];
  /**
   * Ends the waits whose time came (approval timeouts) of this scheduler's schedules' runs and
   * resumes them (a local store: another run's wait is left to whoever continues it); in team
   * mode ends every due wait, and the runs go back to the queue for the workers. Also done every `waitSweepMs` (when given) while the scheduler runs. Resolves to the runs ended.
   */
  sweepWaits(): Promise<string[]>;
}

type Loaded = Pick<Entry, 'playbook' | 'schedule'> & { fireTimes: FireTimes };

export function createScheduler(options: SchedulerOptions): Scheduler {
  const context: SchedulerContext = {
    store: options.store,
    logger: options.logger,
    execute: options.execute,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    mayFire: options.mayFire ?? (async () => true),
    entries: new Map(),
    inflight: new Set(),
    stopped: false,
    wake(entry) {
      if (context.stopped || !entry.loaded) return;
      entry.timer?.cancel();
      entry.timer = context.clock.setTimer(() => void enqueue(context, entry, () => tick(context, entry)), 0);
    },
  };
  const idle = async (): Promise<void> => {
    // A run that just ended records its end from a promise callback: let those callbacks run first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (context.inflight.size > 0) {
      await Promise.allSettled([...context.inflight]);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  const sweepWaits = async (): Promise<string[]> => {
    // In a local store whoever ends a wait continues the run: this scheduler ends only the waits
    // of its schedules' fires (`continuedByScheduler`), and leaves the others, a triggered run
    // among them, to the process that resumes them (the server, a `fleetbook resume`). In team
    // mode every run ended goes back to the queue for the workers.
    const queue = isQueueStore(context.store);
    const ended = await endDueWaits(
      context.store,
      context.clock.now,
      (run) => queue || (continuedByScheduler(run) && context.entries.has(run.trigger.scheduleId ?? '')),
    );
    for (const { run, wait } of ended) {
      context.logger.info(
        { event: 'wait.ended', runId: run.id, wait },
        `run ${run.id}: ${describeWait(wait)} ${wait.reason === 'approval' ? 'timed out' : 'came'}`,
      );
      const entry = run.trigger.scheduleId === undefined ? undefined : context.entries.get(run.trigger.scheduleId);
      if (entry)
        void enqueue(context, entry, async () => {
          const state = await stateOf(context, entry);
          if (!state.unfinished.some((fire) => fire.runId === run.id))
            state.unfinished.push({ runId: run.id, scheduledAt: run.startedAt });
          await recover(context, entry, state);
        });
    }
    return ended.map(({ run }) => run.id);
  };
  const { waitSweepMs } = options;
  let sweepTimer: Timer | undefined;
  const sweepLater = (): void => {
    if (waitSweepMs === undefined) return;
    sweepTimer = context.clock.setTimer(() => {
      if (context.stopped) return;
      sweepWaits().then(sweepLater, (error: unknown) => {
        context.logger.warn(
          { event: 'wait.sweepFailed', err: error },
          'could not look for waits that are due; trying again',
        );
        sweepLater();
      });
    }, waitSweepMs);
    sweepTimer.unref();
  };
  sweepLater();
  return {
    load: (playbooks) => reload(context, playbooks),
    sweepWaits,
    async stop(stopOptions = {}) {
      context.stopped = true;
      sweepTimer?.cancel();
      for (const entry of context.entries.values()) entry.timer?.cancel();
      const runs = [...context.entries.values()].flatMap((entry) => [...entry.runs.values()]);
      if (stopOptions.abortRuns) for (const run of runs) run.controller.abort(new Error('the scheduler is stopping'));
      await Promise.all(runs.map((run) => run.ended));
      await idle();
    },
    idle,
    runningRunIds: () => [...context.entries.values()].flatMap((entry) => [...entry.runs.keys()]),
  };
}

/** The enabled schedules of `playbooks` by key; throws on a key used twice, before anything changes. */
function schedulesOf(playbooks: readonly Playbook[]): Map<string, Loaded> {
  const next = new Map<string, Loaded>();
  for (const playbook of playbooks) {
    for (const schedule of playbook.schedules) {
      const other = next.get(schedule.key);
      if (other) {
        throw new SchedulerError(
          `Schedule id '${schedule.key}' is used by ${other.playbook.source} and ${playbook.source}; schedule ids must be unique.`,
          'INVALID_PLAYBOOKS',
          { scheduleKey: schedule.key },
        );
      }
      if (schedule.enabled)
        next.set(schedule.key, { playbook, schedule, fireTimes: createFireTimes(schedule.cron, schedule.timezone) });
    }
  }
  return next;
}

/** `Scheduler.load`: schedules no longer loaded stop firing (their runs go on), the others tick at once. */
async function reload(context: SchedulerContext, playbooks: readonly Playbook[]): Promise<void> {
  const next = schedulesOf(playbooks);
  const { entries } = context;
  for (const [key, entry] of entries) {
    entry.timer?.cancel();
    entry.loaded = next.has(key);
    if (!entry.loaded && entry.runs.size === 0) entries.delete(key);
  }
  const loading: Array<Promise<void>> = [];
  for (const [key, loaded] of next) {
    const entry: Entry = entries.get(key) ?? {
      key,
      runs: new Map(),
      chain: Promise.resolve(),
      ...loaded,
      loaded: true,
      failedTicks: 0,
    };
    Object.assign(entry, loaded, { loaded: true });
    entries.set(key, entry);
    loading.push(enqueue(context, entry, () => tick(context, entry)));
  }
  await Promise.all(loading);
  for (const key of next.keys()) {
    const entry = entries.get(key);
    if (!entry) continue;
    const nextFireAt = entry.nextFireMs === undefined ? undefined : iso(entry.nextFireMs);
    // The next fire its windows and freezes let run, when they skip the next one.
    const rules = timeRulesOf(entry.playbook, entry.schedule);
    const [runnable] = hasTimeRules(rules) ? runnableFires(entry.fireTimes, rules, context.clock.now(), 1) : [];
    const nextRunAt = runnable === undefined || runnable === entry.nextFireMs ? undefined : iso(runnable);
    context.logger.info(
      {
        event: 'schedule.loaded',
        ...fields(entry, {
          cron: entry.schedule.cron,
          timezone: entry.schedule.timezone,
          nextFireAt,
          ...(nextRunAt ? { nextRunAt } : {}),
        }),
      },
      `schedule ${key}: '${entry.schedule.cron}' ${entry.schedule.timezone}, next fire ${nextFireAt ?? 'never'}${nextRunAt ? ` (outside its window; the next that runs: ${nextRunAt})` : ''}`,
    );
  }
}
