/**
 * What the parts of `createScheduler` share: the options, the loaded schedules (`Entry`), the
 * work in flight, and the small steps every part takes (record a state change in order, log
 * with the schedule's fields). The parts are `fire-run.ts` (one fire through the overlap policy,
 * a run's start and end), `recover-runs.ts` (runs left unfinished), `fire-due.ts` (what is due,
 * catch-up, the timer of the next fire) and `scheduler.ts` (load, stop).
 */
import type { Logger } from '../logging/index.js';
import type { Playbook, ScheduleSpec } from '../playbook/index.js';
import type { RunStatus, RunStore } from '../store/index.js';
import { errorMessage } from '../errors/index.js';
import type { Clock, Timer } from './clock.js';
import type { FireTimes } from './fire-times.js';
import { readScheduleState, scheduleFingerprint, type ScheduleState } from './schedule-state.js';

/** A fire late by more than this (plus the schedule's jitter) counts as missed: catch-up decides. @default 60000 */
export const LATE_TOLERANCE_MS = 60_000;
/** Fires an overlap `queue` holds at most; more are skipped. */
export const MAX_QUEUED_FIRES = 100;
/** Missed fires catch-up `all` starts at most (the newest); older ones are skipped. */
export const MAX_CATCH_UP_FIRES = 100;
/** How soon a schedule looks again at an unfinished run that another process drove (whose lease may lapse). */
export const DRIVEN_RECHECK_MS = 60_000;
/** After a failed tick (the store unreachable), the schedule tries again after this, doubling per failure in a row. */
export const ERROR_RETRY_MS = 1_000;
/** The longest wait between tries after failed ticks. */
export const MAX_ERROR_RETRY_MS = 5 * 60_000;

/** One run the scheduler asks for. */
export interface FireRequest {
  playbook: Playbook;
  schedule: ScheduleSpec;
  runId: string;
  /** The fire time the run is for (not when it started: jitter, queueing and catch-up delay it). */
  scheduledAt: Date;
  /** A fire missed while no daemon ran, started late by the catch-up policy. */
  catchUp: boolean;
  /** Aborted by `cancel-running`, by `stop({ abortRuns: true })` and when leadership is lost. */
  signal: AbortSignal;
  /**
   * Continue the existing run `runId` (left interrupted by a stopped daemon, or crashed)
   * instead of starting it. False for a new fire, and for a fire whose run was never created
   * (it waited for the playbook lock when its daemon stopped), which starts under its run id.
   */
  resume: boolean;
}

export interface SchedulerOptions {
  store: RunStore;
  logger: Logger;
  /** Starts the run; resolves with its end status. A throw counts as a failed run (interrupted if its signal was aborted). */
  execute(request: FireRequest): Promise<{ status: RunStatus }>;
  /** @default systemClock */
  clock?: Clock;
  /** Jitter source. @default Math.random */
  random?: () => number;
  /** How often due waits (approval timeouts) are ended and their runs resumed (`Scheduler.sweepWaits`); the daemon passes 15000. @default none (only when asked) */
  waitSweepMs?: number;
  /** Asked before every fire; false means this process no longer leads and must not fire. @default always true */
  mayFire?: () => Promise<boolean>;
}

export interface ActiveRun {
  runId: string;
  controller: AbortController;
  /** Settles when `execute` settles (before its result is recorded). */
  ended: Promise<void>;
  /** Aborted by `cancel-running`: ended on purpose, not to be resumed. */
  cancelled: boolean;
}

/** One loaded schedule (or one unloaded whose runs go on). */
export interface Entry {
  key: string;
  playbook: Playbook;
  schedule: ScheduleSpec;
  fireTimes: FireTimes;
  timer?: Timer;
  /** The fire the timer waits for (nominal, before jitter). */
  nextFireMs?: number;
  runs: Map<string, ActiveRun>;
  /** State changes of one schedule happen one at a time, in order. */
  chain: Promise<void>;
  loaded: boolean;
  /** Ticks failed in a row (the store or the lease check threw); sets the retry backoff. */
  failedTicks: number;
}

export type FireKind = 'onTime' | 'catchUp' | 'queued';

/** The scheduler's options with their defaults, and its mutable parts. */
export interface SchedulerContext {
  store: RunStore;
  logger: Logger;
  execute: SchedulerOptions['execute'];
  clock: Clock;
  random: () => number;
  mayFire: () => Promise<boolean>;
  entries: Map<string, Entry>;
  /** State changes under way, for `idle()`. */
  inflight: Set<Promise<unknown>>;
  /** Set by `stop()`: nothing fires from then on. */
  stopped: boolean;
  /** Ticks `entry` at once (its timer moved to now): what a run's end does when the run waits for its window. */
  wake(entry: Entry): void;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** The fields every log line about `entry` carries. */
export const fields = (entry: Entry, extra: Record<string, unknown>) => ({
  scheduleKey: entry.key,
  playbook: entry.playbook.name,
  ...extra,
});

/** Whether `entry` may still arm timers and fire. */
export const firing = (context: SchedulerContext, entry: Entry): boolean => !context.stopped && entry.loaded;

/** Runs `step` after the entry's earlier state changes; a failure is logged, never left floating. */
export function enqueue(context: SchedulerContext, entry: Entry, step: () => Promise<void>): Promise<void> {
  const chained = entry.chain.then(step).catch((error: unknown) => {
    context.logger.error(
      { event: 'schedule.error', scheduleKey: entry.key, err: error },
      `schedule ${entry.key}: ${errorMessage(error)}`,
    );
  });
  context.inflight.add(chained);
  void chained.finally(() => context.inflight.delete(chained)).catch(() => undefined);
  entry.chain = chained;
  return chained;
}

/** The schedule's stored state, or a fresh one when it is new or its cron or timezone changed. */
export async function stateOf(context: SchedulerContext, entry: Entry): Promise<ScheduleState> {
  const stored = await readScheduleState(context.store, entry.key);
  const fingerprint = scheduleFingerprint(entry.schedule);
  if (stored && stored.fingerprint === fingerprint) return stored;
  // New schedule, or its cron or timezone changed: fires before now were never due under it.
  return {
    consecutiveFailures: 0,
    paused: false,
    queued: [],
    unfinished: [],
    ...stored,
    activeSince: iso(context.clock.now()),
    fingerprint,
  };
}

/** Moves `lastFireAt` to `atMs`, never back. */
export function advanceLastFire(state: ScheduleState, atMs: number): void {
  if (state.lastFireAt === undefined || Date.parse(state.lastFireAt) < atMs) state.lastFireAt = iso(atMs);
}
