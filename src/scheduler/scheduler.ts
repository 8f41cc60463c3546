/**
 * `createScheduler`: fires the schedules of loaded playbooks at their times, applies their
 * overlap, catch-up, jitter and pause policies, and records every fire in the run store
 * before the run starts. It starts runs through `execute` (the daemon passes the engine),
 * so its policies are tested without a platform. Design notes: ARCHITECTURE.md.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging/index.js';
import type { Playbook, ScheduleSpec } from '../playbook/index.js';
import { hasLiveDriver, RunStatus, type RunStore } from '../store/index.js';
import { systemClock, type Clock, type Timer } from './clock.js';
import { createFireTimes, type FireTimes } from './fire-times.js';
import { MAX_RUN_CRASHES, readScheduleState, scheduleFingerprint, writeScheduleState, type ScheduleState, type UnfinishedFire } from './schedule-state.js';
import { SchedulerError } from './scheduler-error.js';

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
  /** Asked before every fire; false means this process no longer leads and must not fire. @default always true */
  mayFire?: () => Promise<boolean>;
}

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
}

interface ActiveRun {
  runId: string;
  controller: AbortController;
  /** Settles when `execute` settles (before its result is recorded). */
  ended: Promise<void>;
  /** Aborted by `cancel-running`: ended on purpose, not to be resumed. */
  cancelled: boolean;
}

interface Entry {
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

type FireKind = 'onTime' | 'catchUp' | 'queued';

const iso = (ms: number): string => new Date(ms).toISOString();

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { store, logger, execute } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const mayFire = options.mayFire ?? (async () => true);
  const entries = new Map<string, Entry>();
  const inflight = new Set<Promise<unknown>>();
  let stopped = false;

  const track = <T>(promise: Promise<T>): Promise<T> => {
    inflight.add(promise);
    void promise.finally(() => inflight.delete(promise)).catch(() => undefined);
    return promise;
  };

  /** Runs `step` after the entry's earlier state changes; a failure is logged, never left floating. */
  const enqueue = (entry: Entry, step: () => Promise<void>): Promise<void> => {
    entry.chain = track(
      entry.chain.then(step).catch((error: unknown) => {
        logger.error({ event: 'schedule.error', scheduleKey: entry.key, err: error }, `schedule ${entry.key}: ${error instanceof Error ? error.message : String(error)}`);
      }),
    );
    return entry.chain;
  };

  const fields = (entry: Entry, extra: Record<string, unknown>) => ({ scheduleKey: entry.key, playbook: entry.playbook.name, ...extra });

  async function stateOf(entry: Entry): Promise<ScheduleState> {
    const stored = await readScheduleState(store, entry.key);
    const fingerprint = scheduleFingerprint(entry.schedule);
    if (stored && stored.fingerprint === fingerprint) return stored;
    // New schedule, or its cron or timezone changed: fires before now were never due under it.
    return { consecutiveFailures: 0, paused: false, queued: [], unfinished: [], ...stored, activeSince: iso(clock.now()), fingerprint };
  }

  const advanceLastFire = (state: ScheduleState, atMs: number): void => {
    if (state.lastFireAt === undefined || Date.parse(state.lastFireAt) < atMs) state.lastFireAt = iso(atMs);
  };

  async function skip(entry: Entry, state: ScheduleState, atMs: number, reason: string, event = 'schedule.skipped'): Promise<void> {
    advanceLastFire(state, atMs);
    state.lastSkip = { scheduledAt: iso(atMs), reason };
    await writeScheduleState(store, entry.key, state);
    logger.info({ event, ...fields(entry, { scheduledAt: iso(atMs), reason }) }, `schedule ${entry.key}: fire of ${iso(atMs)} skipped: ${reason}`);
  }

  /** Records the fire, then starts its run without waiting for it. */
  async function start(entry: Entry, state: ScheduleState, atMs: number, kind: FireKind): Promise<void> {
    const runId = randomUUID();
    advanceLastFire(state, atMs);
    Object.assign(state, { lastRunId: runId, lastRunStartedAt: iso(clock.now()), lastResult: 'running' });
    state.unfinished.push({ runId, scheduledAt: iso(atMs) });
    await writeScheduleState(store, entry.key, state);
    logger.info(
      { event: 'schedule.fired', ...fields(entry, { scheduledAt: iso(atMs), runId, catchUp: kind === 'catchUp', queued: kind === 'queued' }) },
      `schedule ${entry.key}: fired ${entry.playbook.name} for ${iso(atMs)} as run ${runId}${kind === 'catchUp' ? ' (catch-up)' : ''}`,
    );
    launch(entry, runId, atMs, { catchUp: kind === 'catchUp', resume: false });
  }

  /** Calls `execute` for a fire already recorded in `unfinished`; its end is recorded by `finish`. */
  function launch(entry: Entry, runId: string, atMs: number, how: { catchUp: boolean; resume: boolean }): void {
    const controller = new AbortController();
    const { playbook, schedule } = entry;
    const outcome = Promise.resolve()
      .then(() => execute({ playbook, schedule, runId, scheduledAt: new Date(atMs), signal: controller.signal, ...how }))
      .then(
        (result) => result.status,
        (error: unknown) => {
          logger.error({ event: 'schedule.runError', ...fields(entry, { runId, err: error }) }, `schedule ${entry.key}: run ${runId} could not run: ${error instanceof Error ? error.message : String(error)}`);
          return controller.signal.aborted ? RunStatus.interrupted : RunStatus.failed;
        },
      );
    const run: ActiveRun = { runId, controller, ended: outcome.then(() => undefined), cancelled: false };
    entry.runs.set(runId, run);
    // Not tracked by idle(): a run may go on for hours; its end is recorded through the entry's chain.
    void outcome.then((status) => enqueue(entry, () => finish(entry, runId, status, run.cancelled)));
  }

  /**
   * Resumes the runs of fires a previous daemon (or this one) left unfinished and no live
   * process drives, and starts again those that never got a run record; forgets those that
   * ended since (a manual `fleetbook resume`). Returns whether one still has a live driver.
   */
  async function recover(entry: Entry, state: ScheduleState): Promise<boolean> {
    // A state written before `unfinished` existed names only its latest run.
    if (state.lastResult === 'running' && state.lastRunId !== undefined && !state.unfinished.some((fire) => fire.runId === state.lastRunId)) {
      state.unfinished.push({ runId: state.lastRunId, scheduledAt: state.lastFireAt ?? state.activeSince });
    }
    const launches: Array<{ runId: string; atMs: number; resume: boolean }> = [];
    let driven = false;
    for (const fire of [...state.unfinished]) {
      if (entry.runs.has(fire.runId)) continue;
      const run = await store.getRun(fire.runId);
      if (run?.status === RunStatus.succeeded || run?.status === RunStatus.failed) {
        state.unfinished = state.unfinished.filter((other) => other.runId !== fire.runId);
        if (state.lastRunId === fire.runId) state.lastResult = run.status;
        continue;
      }
      // Driven by another process (a manual resume, a daemon that has not let go yet): looked at again later.
      if (run?.status === RunStatus.running && (await hasLiveDriver(store, fire.runId))) {
        driven = true;
        continue;
      }
      if (run?.status === RunStatus.running) {
        // Its driver died while it ran. Counted in the store before resuming, so a run that brings
        // down the process resuming it is not resumed forever.
        fire.crashes = (fire.crashes ?? 0) + 1;
        if (fire.crashes >= MAX_RUN_CRASHES) {
          await giveUpCrashedRun(entry, state, fire);
          continue;
        }
      }
      if (state.lastRunId === fire.runId) state.lastResult = 'running';
      launches.push({ runId: fire.runId, atMs: Date.parse(fire.scheduledAt), resume: run !== undefined });
    }
    if (launches.length === 0 || stopped) return driven;
    await writeScheduleState(store, entry.key, state);
    for (const { runId, atMs, resume } of launches) {
      logger.warn(
        { event: 'schedule.recovered', ...fields(entry, { runId, scheduledAt: iso(atMs), resume }) },
        resume
          ? `schedule ${entry.key}: resuming run ${runId} (fire of ${iso(atMs)}), left unfinished by a daemon that stopped`
          : `schedule ${entry.key}: starting run ${runId} for the fire of ${iso(atMs)} again: its daemon stopped before the run began`,
      );
      launch(entry, runId, atMs, { catchUp: false, resume });
    }
    return driven;
  }

  /** Marks failed a run whose driving process died `MAX_RUN_CRASHES` times, with the reason. */
  async function giveUpCrashedRun(entry: Entry, state: ScheduleState, fire: UnfinishedFire): Promise<void> {
    const message =
      `the process driving run ${fire.runId} died ${fire.crashes ?? MAX_RUN_CRASHES} times while it ran ` +
      `(killed, or out of memory); it is marked failed instead of being resumed again`;
    await store.setRunStatus(fire.runId, RunStatus.failed, { error: { code: 'RUN_CRASHED', message, details: { crashes: fire.crashes } } });
    state.unfinished = state.unfinished.filter((other) => other.runId !== fire.runId);
    if (state.lastRunId === fire.runId) state.lastResult = RunStatus.failed;
    state.consecutiveFailures += 1;
    await writeScheduleState(store, entry.key, state);
    logger.error({ event: 'schedule.runCrashed', ...fields(entry, { runId: fire.runId, crashes: fire.crashes }) }, `schedule ${entry.key}: ${message}`);
  }

  async function finish(entry: Entry, runId: string, status: RunStatus, cancelled: boolean): Promise<void> {
    entry.runs.delete(runId);
    if (!entry.loaded && entry.runs.size === 0 && entries.get(entry.key) === entry) entries.delete(entry.key);
    const state = await stateOf(entry);
    // A run stopped with the daemon (or that lost its lock) stays for `recover`; one cancelled on purpose does not.
    const resumable = (status === RunStatus.interrupted || status === RunStatus.running) && !cancelled;
    if (!resumable) state.unfinished = state.unfinished.filter((fire) => fire.runId !== runId);
    if (state.lastRunId === runId) state.lastResult = status === RunStatus.running ? 'interrupted' : status;
    if (status === RunStatus.succeeded) state.consecutiveFailures = 0;
    if (status === RunStatus.failed) state.consecutiveFailures += 1;
    const limit = entry.schedule.pauseAfterFailures;
    if (status === RunStatus.failed && limit !== undefined && state.consecutiveFailures >= limit && !state.paused) {
      Object.assign(state, { paused: true, pausedAt: iso(clock.now()), pausedPlaybookHash: entry.playbook.hash });
      logger.warn(
        { event: 'schedule.paused', ...fields(entry, { runId, consecutiveFailures: state.consecutiveFailures }) },
        `schedule ${entry.key}: paused after ${state.consecutiveFailures} failed runs in a row; resume with 'fleetbook schedules resume ${entry.key}' or by changing the playbook`,
      );
    }
    await writeScheduleState(store, entry.key, state);
    logger.info({ event: 'schedule.runEnded', ...fields(entry, { runId, status }) }, `schedule ${entry.key}: run ${runId} ${status}`);
    await drain(entry, state);
  }

  /** Starts the oldest queued fire when nothing of the schedule runs. */
  async function drain(entry: Entry, state: ScheduleState, kind: FireKind = 'queued'): Promise<void> {
    if (stopped || !entry.loaded || entry.runs.size > 0 || state.paused) return;
    const next = state.queued.shift();
    if (next === undefined) return;
    if (!(await mayFire())) return;
    await start(entry, state, Date.parse(next), kind);
  }

  /** One fire through the pause and overlap policies. */
  async function fire(entry: Entry, state: ScheduleState, atMs: number, kind: FireKind): Promise<void> {
    if (state.paused) return skip(entry, state, atMs, `paused after ${state.consecutiveFailures} failed runs in a row`);
    if (entry.runs.size === 0 && state.queued.length === 0) return start(entry, state, atMs, kind);
    const running = [...entry.runs.keys()];
    switch (entry.schedule.overlap) {
      case 'allow':
        return start(entry, state, atMs, kind);
      case 'queue': {
        if (state.queued.length >= MAX_QUEUED_FIRES) return skip(entry, state, atMs, `the queue holds ${MAX_QUEUED_FIRES} fires already`);
        state.queued.push(iso(atMs));
        advanceLastFire(state, atMs);
        await writeScheduleState(store, entry.key, state);
        logger.info({ event: 'schedule.queued', ...fields(entry, { scheduledAt: iso(atMs), running, queued: state.queued.length }) }, `schedule ${entry.key}: fire of ${iso(atMs)} queued behind run ${running.join(', ')}`);
        return drain(entry, state);
      }
      case 'cancel-running': {
        logger.info({ event: 'schedule.cancelling', ...fields(entry, { scheduledAt: iso(atMs), running }) }, `schedule ${entry.key}: cancelling run ${running.join(', ')} for the fire of ${iso(atMs)}`);
        const runs = [...entry.runs.values()];
        for (const run of runs) {
          run.cancelled = true;
          run.controller.abort(new Error(`cancelled by the fire of ${iso(atMs)} (overlap: cancel-running)`));
        }
        await Promise.all(runs.map((run) => run.ended));
        return start(entry, state, atMs, kind);
      }
      case 'skip':
        return skip(entry, state, atMs, entry.runs.size > 0 ? `overlap: run ${running.join(', ')} is still running` : 'overlap: earlier fires are queued');
    }
  }

  /**
   * Fires what is due, then sets the timer of the next fire. A failed tick (a store error)
   * must not end the schedule: it tries again with a backoff, and the retry fires what the
   * failure left due (lastFireAt did not move), or lets catch-up decide if it came too late.
   */
  async function tick(entry: Entry): Promise<void> {
    entry.timer?.cancel();
    if (stopped || !entry.loaded) return;
    try {
      await fireDue(entry);
      entry.failedTicks = 0;
    } catch (error) {
      entry.failedTicks += 1;
      const retryInMs = Math.min(MAX_ERROR_RETRY_MS, ERROR_RETRY_MS * 2 ** Math.min(entry.failedTicks - 1, 20));
      logger.error(
        { event: 'schedule.error', scheduleKey: entry.key, err: error, failedTicks: entry.failedTicks, retryInMs },
        `schedule ${entry.key}: ${error instanceof Error ? error.message : String(error)}; trying again in ${retryInMs} ms`,
      );
      if (stopped || !entry.loaded) return;
      entry.timer?.cancel();
      entry.timer = clock.setTimer(() => void enqueue(entry, () => tick(entry)), retryInMs);
    }
  }

  /** Fires what is due (catching up what was missed), then arms the timer of the next fire. */
  async function fireDue(entry: Entry): Promise<void> {
    if (!(await mayFire())) return;
    const state = await stateOf(entry);
    const nowMs = clock.now();
    if (state.paused && state.pausedPlaybookHash !== undefined && state.pausedPlaybookHash !== entry.playbook.hash) {
      Object.assign(state, { paused: false, consecutiveFailures: 0 });
      delete state.pausedAt;
      delete state.pausedPlaybookHash;
      logger.info({ event: 'schedule.resumed', ...fields(entry, { reason: 'the playbook changed' }) }, `schedule ${entry.key}: resumed (the playbook changed since it paused)`);
    }
    const driven = await recover(entry, state);
    const afterMs = Math.max(Date.parse(state.activeSince), state.lastFireAt === undefined ? 0 : Date.parse(state.lastFireAt));
    const due = entry.fireTimes.between(afterMs, nowMs, MAX_CATCH_UP_FIRES + 1);
    const last = due.at(-1);
    const onTime = last !== undefined && nowMs - last <= LATE_TOLERANCE_MS + (entry.schedule.jitterMs ?? 0) ? last : undefined;
    const missed = due.filter((at) => at !== onTime);
    const policy = entry.schedule.catchUp;
    const windowMs = entry.schedule.catchUpWindowMs;
    const inWindow = missed.filter((at) => windowMs === undefined || nowMs - at <= windowMs);
    const catchUps = policy === 'none' ? [] : policy === 'last' ? (onTime === undefined ? inWindow.slice(-1) : []) : inWindow.slice(-MAX_CATCH_UP_FIRES);
    if (missed.length > 0) {
      const passed = missed.filter((at) => !catchUps.includes(at));
      logger.info(
        { event: 'schedule.catchUp', ...fields(entry, { policy, missed: missed.length, firing: catchUps.map(iso), since: iso(afterMs) }) },
        `schedule ${entry.key}: ${missed.length}${due.length > MAX_CATCH_UP_FIRES ? ' or more' : ''} fire(s) missed since ${iso(afterMs)}; catchUp ${policy} fires ${catchUps.length}`,
      );
      const newestPassed = passed.at(-1);
      if (newestPassed !== undefined) {
        const why = policy === 'none' ? 'catchUp is none' : policy === 'last' ? (onTime === undefined ? 'catchUp last fires only the newest' : 'catchUp last, and a newer fire is due now') : 'outside the catch-up window';
        await skip(entry, state, newestPassed, `${passed.length} missed while no daemon ran (${why})`);
      }
    }
    if (policy === 'all' && catchUps.length > 0) {
      // Missed fires run one after another, oldest first, whatever the overlap policy; a fire due now joins them.
      const batch = [...catchUps, ...(onTime === undefined ? [] : [onTime])].map(iso).filter((at) => !state.queued.includes(at));
      state.queued.push(...batch.slice(0, Math.max(0, MAX_QUEUED_FIRES - state.queued.length)));
      advanceLastFire(state, Date.parse(batch.at(-1) ?? state.activeSince));
      await writeScheduleState(store, entry.key, state);
      await drain(entry, state, 'catchUp');
    } else {
      for (const at of catchUps) await fire(entry, state, at, 'catchUp');
      if (onTime !== undefined) await fire(entry, state, onTime, 'onTime');
      if (due.length === 0) {
        // Nothing due: persist a new schedule's activeSince, and start fires a previous daemon left queued.
        await writeScheduleState(store, entry.key, state);
        await drain(entry, state);
      }
    }
    arm(entry, Math.max(nowMs, last ?? afterMs), driven ? nowMs + DRIVEN_RECHECK_MS : undefined);
  }

  /** Sets the timer of the next fire, or of `recheckMs` when sooner (a run another process drives). */
  function arm(entry: Entry, afterMs: number, recheckMs?: number): void {
    if (stopped || !entry.loaded) return;
    const nextMs = entry.fireTimes.next(afterMs);
    entry.nextFireMs = nextMs;
    const jitterMs = entry.schedule.jitterMs ? Math.floor(random() * entry.schedule.jitterMs) : 0;
    const dueMs = Math.min(nextMs === undefined ? Infinity : nextMs + jitterMs, recheckMs ?? Infinity);
    if (dueMs === Infinity) return;
    entry.timer = clock.setTimer(() => void enqueue(entry, () => tick(entry)), dueMs - clock.now());
  }

  return {
    async load(playbooks) {
      const next = new Map<string, { playbook: Playbook; schedule: ScheduleSpec; fireTimes: FireTimes }>();
      for (const playbook of playbooks) {
        for (const schedule of playbook.schedules) {
          const other = next.get(schedule.key);
          if (other) {
            throw new SchedulerError(`Schedule id '${schedule.key}' is used by ${other.playbook.source} and ${playbook.source}; schedule ids must be unique.`, 'INVALID_PLAYBOOKS', { scheduleKey: schedule.key });
          }
          if (schedule.enabled) next.set(schedule.key, { playbook, schedule, fireTimes: createFireTimes(schedule.cron, schedule.timezone) });
        }
      }
      for (const [key, entry] of entries) {
        entry.timer?.cancel();
        entry.loaded = next.has(key);
        if (!entry.loaded && entry.runs.size === 0) entries.delete(key);
      }
      const loading: Array<Promise<void>> = [];
      for (const [key, loaded] of next) {
        const entry = entries.get(key) ?? { key, runs: new Map(), chain: Promise.resolve(), ...loaded, loaded: true, failedTicks: 0 };
        Object.assign(entry, loaded, { loaded: true });
        entries.set(key, entry);
        loading.push(enqueue(entry, () => tick(entry)));
      }
      await Promise.all(loading);
      for (const key of next.keys()) {
        const entry = entries.get(key);
        if (!entry) continue;
        const nextFireAt = entry.nextFireMs === undefined ? undefined : iso(entry.nextFireMs);
        logger.info(
          { event: 'schedule.loaded', ...fields(entry, { cron: entry.schedule.cron, timezone: entry.schedule.timezone, nextFireAt }) },
          `schedule ${key}: '${entry.schedule.cron}' ${entry.schedule.timezone}, next fire ${nextFireAt ?? 'never'}`,
        );
      }
    },
    async stop(stopOptions = {}) {
      stopped = true;
      for (const entry of entries.values()) entry.timer?.cancel();
      const runs = [...entries.values()].flatMap((entry) => [...entry.runs.values()]);
      if (stopOptions.abortRuns) for (const run of runs) run.controller.abort(new Error('the scheduler is stopping'));
      await Promise.all(runs.map((run) => run.ended));
      await this.idle();
    },
    async idle() {
      // A run that just ended records its end from a promise callback: let those callbacks run first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (inflight.size > 0) {
        await Promise.allSettled([...inflight]);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    },
    runningRunIds: () => [...entries.values()].flatMap((entry) => [...entry.runs.keys()]),
  };
}
