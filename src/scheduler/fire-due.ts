/**
 * A schedule's timer loop: each tick fires what is due (the fire on time, and the missed
 * ones the catch-up policy keeps), then arms the timer of the next fire. A failed tick tries
 * again with a backoff. Part of `createScheduler` (see schedule-context.ts).
 */
import { errorMessage } from '../errors/index.js';
import type { ScheduleSpec } from '../playbook/index.js';
import { drain, fire, skip } from './fire-run.js';
import type { FireTimes } from './fire-times.js';
import { recover } from './recover-runs.js';
import { writeScheduleState, type ScheduleState } from './schedule-state.js';
import {
  advanceLastFire,
  DRIVEN_RECHECK_MS,
  enqueue,
  ERROR_RETRY_MS,
  fields,
  firing,
  iso,
  LATE_TOLERANCE_MS,
  MAX_CATCH_UP_FIRES,
  MAX_ERROR_RETRY_MS,
  MAX_QUEUED_FIRES,
  stateOf,
  type Entry,
  type SchedulerContext,
} from './schedule-context.js';

/** What is due at `nowMs` and what the catch-up policy makes of the fires missed. */
export interface DuePlan {
  /** Fires missed are counted from here: the newest handled, or when the schedule became active. */
  afterMs: number;
  /** Every fire time since `afterMs` (at most MAX_CATCH_UP_FIRES + 1). */
  due: number[];
  /** The newest due fire when it is late by no more than the tolerance (plus jitter). */
  onTime: number | undefined;
  /** Due fires other than `onTime`. */
  missed: number[];
  /** Missed fires the catch-up policy starts. */
  catchUps: number[];
  /** Missed fires it passes over, and why. */
  passed: number[];
  passedBecause: string;
}

/** The due fires of `schedule` at `nowMs` and the catch-up decision; no side effect. */
export function planDue(schedule: ScheduleSpec, fireTimes: FireTimes, state: ScheduleState, nowMs: number): DuePlan {
  const afterMs = Math.max(
    Date.parse(state.activeSince),
    state.lastFireAt === undefined ? 0 : Date.parse(state.lastFireAt),
  );
  const due = fireTimes.between(afterMs, nowMs, MAX_CATCH_UP_FIRES + 1);
  const last = due.at(-1);
  const onTime = last !== undefined && nowMs - last <= LATE_TOLERANCE_MS + (schedule.jitterMs ?? 0) ? last : undefined;
  const missed = due.filter((at) => at !== onTime);
  const policy = schedule.catchUp;
  const windowMs = schedule.catchUpWindowMs;
  const inWindow = missed.filter((at) => windowMs === undefined || nowMs - at <= windowMs);
  const catchUps =
    policy === 'none'
      ? []
      : policy === 'last'
        ? onTime === undefined
          ? inWindow.slice(-1)
          : []
        : inWindow.slice(-MAX_CATCH_UP_FIRES);
  const passedBecause =
    policy === 'none'
      ? 'catchUp is none'
      : policy === 'last'
        ? onTime === undefined
          ? 'catchUp last fires only the newest'
          : 'catchUp last, and a newer fire is due now'
        : 'outside the catch-up window';
  return {
    afterMs,
    due,
    onTime,
    missed,
    catchUps,
    passed: missed.filter((at) => !catchUps.includes(at)),
    passedBecause,
  };
}

/**
 * Fires what is due, then sets the timer of the next fire. A failed tick (a store error)
 * must not end the schedule: it tries again with a backoff, and the retry fires what the
 * failure left due (lastFireAt did not move), or lets catch-up decide if it came too late.
 */
export async function tick(context: SchedulerContext, entry: Entry): Promise<void> {
  entry.timer?.cancel();
  if (!firing(context, entry)) return;
  try {
    await fireDue(context, entry);
    entry.failedTicks = 0;
  } catch (error) {
    entry.failedTicks += 1;
    const retryInMs = Math.min(MAX_ERROR_RETRY_MS, ERROR_RETRY_MS * 2 ** Math.min(entry.failedTicks - 1, 20));
    context.logger.error(
      { event: 'schedule.error', scheduleKey: entry.key, err: error, failedTicks: entry.failedTicks, retryInMs },
      `schedule ${entry.key}: ${errorMessage(error)}; trying again in ${retryInMs} ms`,
    );
    if (!firing(context, entry)) return;
    entry.timer?.cancel();
    entry.timer = context.clock.setTimer(() => void enqueue(context, entry, () => tick(context, entry)), retryInMs);
  }
}

/** Fires what is due (catching up what was missed), then arms the timer of the next fire. */
async function fireDue(context: SchedulerContext, entry: Entry): Promise<void> {
  if (!(await context.mayFire())) return;
  const state = await stateOf(context, entry);
  const nowMs = context.clock.now();
  if (state.paused && state.pausedPlaybookHash !== undefined && state.pausedPlaybookHash !== entry.playbook.hash) {
    Object.assign(state, { paused: false, consecutiveFailures: 0 });
    delete state.pausedAt;
    delete state.pausedPlaybookHash;
    context.logger.info(
      { event: 'schedule.resumed', ...fields(entry, { reason: 'the playbook changed' }) },
      `schedule ${entry.key}: resumed (the playbook changed since it paused)`,
    );
  }
  const recovery = await recover(context, entry, state);
  const plan = planDue(entry.schedule, entry.fireTimes, state, nowMs);
  await passMissed(context, entry, state, plan);
  await fireDuePlan(context, entry, state, plan);
  // Look again at a run driven elsewhere, and at the opening of the window a stopped run waits for.
  const recheckMs = Math.min(
    recovery.driven ? nowMs + DRIVEN_RECHECK_MS : Infinity,
    recovery.windowOpensAtMs ?? Infinity,
  );
  arm(context, entry, Math.max(nowMs, plan.due.at(-1) ?? plan.afterMs), recheckMs === Infinity ? undefined : recheckMs);
}

/** Logs the fires missed and records the newest one catch-up passes over as skipped. */
async function passMissed(context: SchedulerContext, entry: Entry, state: ScheduleState, plan: DuePlan): Promise<void> {
  const { missed, catchUps, passed, due, afterMs } = plan;
  if (missed.length === 0) return;
  const policy = entry.schedule.catchUp;
  context.logger.info(
    {
      event: 'schedule.catchUp',
      ...fields(entry, { policy, missed: missed.length, firing: catchUps.map(iso), since: iso(afterMs) }),
    },
    `schedule ${entry.key}: ${missed.length}${due.length > MAX_CATCH_UP_FIRES ? ' or more' : ''} fire(s) missed since ${iso(afterMs)}; catchUp ${policy} fires ${catchUps.length}`,
  );
  const newestPassed = passed.at(-1);
  if (newestPassed !== undefined)
    await skip(
      context,
      entry,
      state,
      newestPassed,
      `${passed.length} missed while no daemon ran (${plan.passedBecause})`,
    );
}

/** Fires the catch-ups and the fire on time, or, with nothing due, persists the state and drains the queue. */
async function fireDuePlan(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  { catchUps, onTime, due }: DuePlan,
): Promise<void> {
  if (entry.schedule.catchUp === 'all' && catchUps.length > 0) {
    // Missed fires run one after another, oldest first, whatever the overlap policy; a fire due now joins them.
    const batch = [...catchUps, ...(onTime === undefined ? [] : [onTime])]
      .map(iso)
      .filter((at) => !state.queued.includes(at));
    state.queued.push(...batch.slice(0, Math.max(0, MAX_QUEUED_FIRES - state.queued.length)));
    advanceLastFire(state, Date.parse(batch.at(-1) ?? state.activeSince));
    await writeScheduleState(context.store, entry.key, state);
    await drain(context, entry, state, 'catchUp');
    return;
  }
  for (const at of catchUps) await fire(context, entry, state, at, 'catchUp');
  if (onTime !== undefined) await fire(context, entry, state, onTime, 'onTime');
  if (due.length === 0) {
    // Nothing due: persist a new schedule's activeSince, and start fires a previous daemon left queued.
    await writeScheduleState(context.store, entry.key, state);
    await drain(context, entry, state);
  }
}

/** Sets the timer of the next fire, or of `recheckMs` when sooner (a run another process drives). */
function arm(context: SchedulerContext, entry: Entry, afterMs: number, recheckMs?: number): void {
  if (!firing(context, entry)) return;
  const nextMs = entry.fireTimes.next(afterMs);
  entry.nextFireMs = nextMs;
  const jitterMs = entry.schedule.jitterMs ? Math.floor(context.random() * entry.schedule.jitterMs) : 0;
  const dueMs = Math.min(nextMs === undefined ? Infinity : nextMs + jitterMs, recheckMs ?? Infinity);
  if (dueMs === Infinity) return;
  entry.timer = context.clock.setTimer(
    () => void enqueue(context, entry, () => tick(context, entry)),
    dueMs - context.clock.now(),
  );
}
