/**
 * Runs of a schedule's fires left unfinished by a daemon that stopped or died: resumed when no
 * live process drives them, started again when they never got a run record, given up after
 * MAX_RUN_CRASHES. Part of `createScheduler` (see schedule-context.ts).
 */
import { hasLiveDriver, RunStatus, type RunRecord } from '../store/index.js';
import { launch } from './fire-run.js';
import { MAX_RUN_CRASHES, writeScheduleState, type ScheduleState, type UnfinishedFire } from './schedule-state.js';
import { fields, iso, type Entry, type SchedulerContext } from './schedule-context.js';
import { SchedulerErrorCode } from './scheduler-error.js';
import { timeRulesOf } from '../playbook/index.js';
import { isOpen, nextOpen } from '../windows/index.js';

/** How soon a run waiting for a window that opens within no year is looked at again. */
const WINDOW_NEVER_OPENS_RECHECK_MS = 24 * 3_600_000;

interface Relaunch {
  runId: string;
  atMs: number;
  resume: boolean;
}

/** What `recover` leaves to look at later: a run driven elsewhere, runs waiting for their window. */
export interface Recovery {
  /** A run of the schedule has a live driver in another process. */
  driven: boolean;
  /** The earliest opening of the window a run stopped by its closing waits for. */
  windowOpensAtMs?: number;
}

/**
 * Resumes the runs of fires a previous daemon (or this one) left unfinished and no live
 * process drives, and starts again those that never got a run record; forgets those that
 * ended since (a manual `fleetbook resume`). A run its maintenance window stopped
 * (`WINDOW_CLOSED`) is resumed once the window is open again, not before.
 */
export async function recover(context: SchedulerContext, entry: Entry, state: ScheduleState): Promise<Recovery> {
  // A state written before `unfinished` existed names only its latest run.
  if (
    state.lastResult === 'running' &&
    state.lastRunId !== undefined &&
    !state.unfinished.some((fire) => fire.runId === state.lastRunId)
  ) {
    state.unfinished.push({ runId: state.lastRunId, scheduledAt: state.lastFireAt ?? state.activeSince });
  }
  const launches: Relaunch[] = [];
  const recovery: Recovery = { driven: false };
  for (const fire of [...state.unfinished]) {
    if (entry.runs.has(fire.runId)) continue;
    const run = await context.store.getRun(fire.runId);
    const opensAtMs = windowStillClosed(context, entry, run);
    if (opensAtMs !== undefined) {
      recovery.windowOpensAtMs = Math.min(recovery.windowOpensAtMs ?? Infinity, opensAtMs);
      continue;
    }
    const decision = await decide(context, entry, state, fire, run);
    if (decision === 'driven') recovery.driven = true;
    if (decision === 'relaunch')
      launches.push({ runId: fire.runId, atMs: Date.parse(fire.scheduledAt), resume: run !== undefined });
  }
  if (launches.length === 0 || context.stopped) return recovery;
  await writeScheduleState(context.store, entry.key, state);
  for (const relaunch of launches) relaunchFire(context, entry, relaunch);
  return recovery;
}

/**
 * When a run `waiting` for its maintenance window may go on: its `until` (the next opening when
 * it stopped), or later if the windows, as they are now, are still closed then. Undefined when
 * it may now, or the run does not wait for a window. A window that never opens again is looked
 * at once a day.
 */
function windowStillClosed(context: SchedulerContext, entry: Entry, run: RunRecord | undefined): number | undefined {
  if (run?.status !== RunStatus.waiting || run.wait?.reason !== 'window') return undefined;
  const nowMs = context.clock.now();
  const untilMs = run.wait.until === undefined ? nowMs : Date.parse(run.wait.until);
  const rules = timeRulesOf(entry.playbook, entry.schedule);
  if (untilMs <= nowMs && isOpen(rules, nowMs)) return undefined;
  return Math.max(untilMs, nextOpen(rules, nowMs) ?? nowMs + WINDOW_NEVER_OPENS_RECHECK_MS);
}

/** What becomes of one unfinished fire: forgotten (ended, or given up), left to its live driver, or launched again. */
async function decide(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  fire: UnfinishedFire,
  run: RunRecord | undefined,
): Promise<'done' | 'driven' | 'relaunch'> {
  // Waiting for a person (an approval): whoever decides resumes it; the scheduler looks again later.
  // Waiting for a window that is open again (see windowStillClosed): resumed, which ends the wait.
  if (run?.status === RunStatus.waiting) {
    if (run.wait?.reason !== 'window') return 'driven';
    if (state.lastRunId === fire.runId) state.lastResult = 'running';
    return 'relaunch';
  }
  if (run?.status === RunStatus.succeeded || run?.status === RunStatus.failed || run?.status === RunStatus.cancelled) {
    state.unfinished = state.unfinished.filter((other) => other.runId !== fire.runId);
    if (state.lastRunId === fire.runId) state.lastResult = run.status;
    return 'done';
  }
  // Driven by another process (a manual resume, a daemon that has not let go yet): looked at again later.
  if (run?.status === RunStatus.running && (await hasLiveDriver(context.store, fire.runId))) return 'driven';
  // The store reads a running run whose driver's lease lapsed `interrupted`, without an end time.
  if (run?.status === RunStatus.running || (run?.status === RunStatus.interrupted && run.endedAt === undefined)) {
    // Its driver died while it ran. Counted in the store before resuming, so a run that brings
    // down the process resuming it is not resumed forever.
    fire.crashes = (fire.crashes ?? 0) + 1;
    if (fire.crashes >= MAX_RUN_CRASHES) {
      await giveUpCrashedRun(context, entry, state, fire);
      return 'done';
    }
  }
  if (state.lastRunId === fire.runId) state.lastResult = 'running';
  return 'relaunch';
}

function relaunchFire(context: SchedulerContext, entry: Entry, { runId, atMs, resume }: Relaunch): void {
  context.logger.warn(
    { event: 'schedule.recovered', ...fields(entry, { runId, scheduledAt: iso(atMs), resume }) },
    resume
      ? `schedule ${entry.key}: resuming run ${runId} (fire of ${iso(atMs)}), left unfinished by a daemon that stopped`
      : `schedule ${entry.key}: starting run ${runId} for the fire of ${iso(atMs)} again: its daemon stopped before the run began`,
  );
  launch(context, entry, runId, atMs, { catchUp: false, resume });
}

/** Marks failed a run whose driving process died `MAX_RUN_CRASHES` times, with the reason. */
async function giveUpCrashedRun(
  context: SchedulerContext,
  entry: Entry,
  state: ScheduleState,
  fire: UnfinishedFire,
): Promise<void> {
  const message =
    `the process driving run ${fire.runId} died ${fire.crashes ?? MAX_RUN_CRASHES} times while it ran ` +
    `(killed, or out of memory); it is marked failed instead of being resumed again`;
  await context.store.setRunStatus(fire.runId, RunStatus.failed, {
    error: { code: SchedulerErrorCode.runCrashed, message, details: { crashes: fire.crashes } },
  });
  state.unfinished = state.unfinished.filter((other) => other.runId !== fire.runId);
  if (state.lastRunId === fire.runId) state.lastResult = RunStatus.failed;
  state.consecutiveFailures += 1;
  await writeScheduleState(context.store, entry.key, state);
  context.logger.error(
    { event: 'schedule.runCrashed', ...fields(entry, { runId: fire.runId, crashes: fire.crashes }) },
    `schedule ${entry.key}: ${message}`,
  );
}
