/**
 * One fire of a schedule and the run it starts: the pause and overlap policies, the fire
 * recorded before its run starts, the run's end recorded (failures counted, pause), and the
 * queue drained. Part of `createScheduler` (see schedule-context.ts).
 */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../errors/index.js';
import { RunStatus } from '../store/index.js';
import { writeScheduleState, type ScheduleState } from './schedule-state.js';
import { fireRefusal, type WindowRefusal } from './window-check.js';
import {
  advanceLastFire,
  enqueue,
  fields,
  firing,
  iso,
  MAX_QUEUED_FIRES,
  stateOf,
  type ActiveRun,
  type Entry,
  type FireKind,
  type SchedulerContext,
} from './schedule-context.js';

/**
 * Records a fire that does not run, and why. A skip for a window or a freeze logs `reason`
 * as that code (`window`, `freeze`) and the words as `detail`.
 */
export async function skip(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  atMs: number,
  reason: string,
  code?: WindowRefusal['code'],
): Promise<void> {
  advanceLastFire(state, atMs);
  state.lastSkip = { scheduledAt: iso(atMs), reason, ...(code ? { code } : {}) };
  await writeScheduleState(context.store, entry.key, state);
  const logged = code ? { reason: code, detail: reason } : { reason };
  context.logger.info(
    { event: 'schedule.skipped', ...fields(entry, { scheduledAt: iso(atMs), ...logged }) },
    `schedule ${entry.key}: fire of ${iso(atMs)} skipped: ${reason}`,
  );
}

/** Skips the fire when its window is closed or a freeze holds (at its time or now); true when it did. */
async function skippedForWindow(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  atMs: number,
): Promise<boolean> {
  const refusal = fireRefusal(entry.playbook, entry.schedule, atMs, context.clock.now());
  if (!refusal) return false;
  await skip(context, entry, state, atMs, refusal.reason, refusal.code);
  return true;
}

/** Records the fire, then starts its run without waiting for it. */
async function start(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  atMs: number,
  kind: FireKind,
): Promise<void> {
  const runId = randomUUID();
  advanceLastFire(state, atMs);
  Object.assign(state, { lastRunId: runId, lastRunStartedAt: iso(context.clock.now()), lastResult: 'running' });
  state.unfinished.push({ runId, scheduledAt: iso(atMs) });
  await writeScheduleState(context.store, entry.key, state);
  context.logger.info(
    {
      event: 'schedule.fired',
      ...fields(entry, { scheduledAt: iso(atMs), runId, catchUp: kind === 'catchUp', queued: kind === 'queued' }),
    },
    `schedule ${entry.key}: fired ${entry.playbook.name} for ${iso(atMs)} as run ${runId}${kind === 'catchUp' ? ' (catch-up)' : ''}`,
  );
  launch(context, entry, runId, atMs, { catchUp: kind === 'catchUp', resume: false });
}

/** Calls `execute` for a fire already recorded in `unfinished`; its end is recorded by `finish`. */
export function launch(
  context: SchedulerContext,
  entry: Entry,
  runId: string,
  atMs: number,
  how: { catchUp: boolean; resume: boolean },
): void {
  const controller = new AbortController();
  const { playbook, schedule } = entry;
  const outcome = Promise.resolve()
    .then(() =>
      context.execute({ playbook, schedule, runId, scheduledAt: new Date(atMs), signal: controller.signal, ...how }),
    )
    .then(
      (result) => result.status,
      (error: unknown) => {
        context.logger.error(
          { event: 'schedule.runError', ...fields(entry, { runId, err: error }) },
          `schedule ${entry.key}: run ${runId} could not run: ${errorMessage(error)}`,
        );
        return controller.signal.aborted ? RunStatus.interrupted : RunStatus.failed;
      },
    );
  const run: ActiveRun = { runId, controller, ended: outcome.then(() => undefined), cancelled: false };
  entry.runs.set(runId, run);
  // Not tracked by idle(): a run may go on for hours; its end is recorded through the entry's chain.
  void outcome.then((status) => enqueue(context, entry, () => finish(context, entry, runId, status, run.cancelled)));
}

/** Records a run's end: what is left to resume, failures in a row, the pause they may bring; then drains the queue. */
async function finish(
  context: SchedulerContext,
  entry: Entry,
  runId: string,
  status: RunStatus,
  cancelled: boolean,
): Promise<void> {
  entry.runs.delete(runId);
  if (!entry.loaded && entry.runs.size === 0 && context.entries.get(entry.key) === entry)
    context.entries.delete(entry.key);
  const state = await stateOf(context, entry);
  // A run stopped with the daemon (or that lost its lock) stays for `recover`; one cancelled on purpose does not.
  // A run waiting (for its window, for an approval) stays too: it goes on when the wait ends.
  const resumable =
    (status === RunStatus.interrupted || status === RunStatus.running || status === RunStatus.waiting) && !cancelled;
  if (!resumable) state.unfinished = state.unfinished.filter((fire) => fire.runId !== runId);
  if (state.lastRunId === runId) state.lastResult = status === RunStatus.running ? 'interrupted' : status;
  if (status === RunStatus.succeeded) state.consecutiveFailures = 0;
  if (status === RunStatus.failed) state.consecutiveFailures += 1;
  const limit = entry.schedule.pauseAfterFailures;
  if (status === RunStatus.failed && limit !== undefined && state.consecutiveFailures >= limit && !state.paused) {
    Object.assign(state, { paused: true, pausedAt: iso(context.clock.now()), pausedPlaybookHash: entry.playbook.hash });
    context.logger.warn(
      { event: 'schedule.paused', ...fields(entry, { runId, consecutiveFailures: state.consecutiveFailures }) },
      `schedule ${entry.key}: paused after ${state.consecutiveFailures} failed runs in a row; resume with 'fleetbook schedules resume ${entry.key}' or by changing the playbook`,
    );
  }
  await writeScheduleState(context.store, entry.key, state);
  context.logger.info(
    { event: 'schedule.runEnded', ...fields(entry, { runId, status }) },
    `schedule ${entry.key}: run ${runId} ${status}`,
  );
  if (resumable && status === RunStatus.waiting) await waitForWindow(context, entry, runId);
  await drain(context, entry, state);
}

/**
 * A run its maintenance window stopped waits in `unfinished` for the window to open: the
 * schedule ticks now, and `recover` sets its timer to the opening, when it resumes the run.
 */
async function waitForWindow(context: SchedulerContext, entry: Entry, runId: string): Promise<void> {
  const wait = (await context.store.getRun(runId))?.wait;
  if (wait?.reason !== 'window' || !firing(context, entry)) return;
  context.logger.info(
    { event: 'schedule.runWaiting', ...fields(entry, { runId, reason: 'window', until: wait.until }) },
    `schedule ${entry.key}: run ${runId} waits for its maintenance window${wait.until ? ` (opens ${wait.until})` : ''}: ${wait.message ?? ''}`,
  );
  context.wake(entry);
}

/** Starts the oldest queued fire when nothing of the schedule runs. */
export async function drain(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  kind: FireKind = 'queued',
): Promise<void> {
  if (context.stopped || !entry.loaded || entry.runs.size > 0 || state.paused) return;
  for (;;) {
    const next = state.queued.shift();
    if (next === undefined) return;
    if (!(await context.mayFire())) return;
    // A queued fire whose window closed while it waited is skipped; the next queued one may still start.
    if (await skippedForWindow(context, entry, state, Date.parse(next))) continue;
    await start(context, entry, state, Date.parse(next), kind);
    return;
  }
}

/** The schedule's unfinished runs that wait (an approval gate): no process drives them. */
async function waitingRunIds(context: SchedulerContext, state: ScheduleState): Promise<string[]> {
  const ids: string[] = [];
  for (const fire of state.unfinished) {
    if ((await context.store.getRun(fire.runId))?.status === RunStatus.waiting) ids.push(fire.runId);
  }
  return ids;
}

/** One fire through the pause and overlap policies. */
export async function fire(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  atMs: number,
  kind: FireKind,
): Promise<void> {
  if (state.paused)
    return skip(
      context,
      entry,
      state,
      atMs,
      state.pausedBy === undefined
        ? `paused after ${state.consecutiveFailures} failed runs in a row`
        : `paused by ${state.pausedBy}`,
    );
  if (await skippedForWindow(context, entry, state, atMs)) return;
  // A run waiting (an approval gate, its window) has no process, but it is still the schedule's run going on.
  const waiting = await waitingRunIds(context, state);
  if (entry.runs.size === 0 && waiting.length === 0 && state.queued.length === 0)
    return start(context, entry, state, atMs, kind);
  const running = [...entry.runs.keys(), ...waiting];
  switch (entry.schedule.overlap) {
    case 'allow':
      return start(context, entry, state, atMs, kind);
    case 'queue':
      return queue(context, entry, state, atMs, running);
    case 'cancel-running': {
      context.logger.info(
        { event: 'schedule.cancelling', ...fields(entry, { scheduledAt: iso(atMs), running }) },
        `schedule ${entry.key}: cancelling run ${running.join(', ')} for the fire of ${iso(atMs)}`,
      );
      const runs = [...entry.runs.values()];
      for (const run of runs) {
        run.cancelled = true;
        run.controller.abort(new Error(`cancelled by the fire of ${iso(atMs)} (overlap: cancel-running)`));
      }
      await Promise.all(runs.map((run) => run.ended));
      for (const runId of waiting) {
        await context.store.cancelRun(runId, `the fire of ${iso(atMs)} (overlap: cancel-running)`);
        state.unfinished = state.unfinished.filter((fire) => fire.runId !== runId);
      }
      return start(context, entry, state, atMs, kind);
    }
    case 'skip':
      return skip(
        context,
        entry,
        state,
        atMs,
        running.length > 0
          ? `overlap: run ${running.join(', ')} is still ${entry.runs.size > 0 ? 'running' : 'waiting'}`
          : 'overlap: earlier fires are queued',
      );
  }
}

/** Overlap `queue`: the fire waits behind the running run, up to MAX_QUEUED_FIRES. */
async function queue(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  atMs: number,
  running: string[],
): Promise<void> {
  if (state.queued.length >= MAX_QUEUED_FIRES)
    return skip(context, entry, state, atMs, `the queue holds ${MAX_QUEUED_FIRES} fires already`);
  state.queued.push(iso(atMs));
  advanceLastFire(state, atMs);
  await writeScheduleState(context.store, entry.key, state);
  context.logger.info(
    { event: 'schedule.queued', ...fields(entry, { scheduledAt: iso(atMs), running, queued: state.queued.length }) },
    `schedule ${entry.key}: fire of ${iso(atMs)} queued behind run ${running.join(', ')}`,
  );
  return drain(context, entry, state);
}
