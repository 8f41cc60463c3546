/**
 * `fleetbook schedules trigger`: a schedule run now, by hand, with its inputs. Its overlap policy
 * applies to the schedule's previous run as it would to a fire: `skip` refuses while it still
 * runs (`SCHEDULE_BUSY`), `cancel-running` cancels it first, `queue` leaves the fire to the
 * daemon (queued behind the running run), `allow` starts at once. The playbook's lock is taken
 * by the run itself (`runPlaybookWithLock`).
 */
import { hasLiveDriver, RunStatus, type RunRecord, type RunStore } from '../store/index.js';
import type { ScheduleSpec } from '../playbook/index.js';
import { readScheduleState, writeScheduleState } from './schedule-state.js';
import { SchedulerError, SchedulerErrorCode } from './scheduler-error.js';

/** What the trigger does after its overlap check. */
export type TriggerDecision =
  | { action: 'run'; cancelled?: string }
  /** Overlap `queue`: the fire waits in the schedule's queue for the daemon. */
  | { action: 'queued'; behind: string };

/** The schedule's previous run, if one is still going (running with a live driver, queued, or waiting). */
async function previousRun(store: RunStore, scheduleKey: string): Promise<RunRecord | undefined> {
  const state = await store.getScheduleState(scheduleKey);
  const runId = typeof state?.lastRunId === 'string' ? state.lastRunId : undefined;
  if (runId === undefined) return undefined;
  const run = await store.getRun(runId);
  if (!run) return undefined;
  if (run.status === RunStatus.queued || run.status === RunStatus.waiting) return run;
  if (run.status === RunStatus.running && (await hasLiveDriver(store, run.id))) return run;
  return undefined;
}

export async function decideTrigger(
  store: RunStore,
  schedule: ScheduleSpec,
  by: string,
  nowMs: number,
): Promise<TriggerDecision> {
  const previous = await previousRun(store, schedule.key);
  if (!previous) return { action: 'run' };
  switch (schedule.overlap) {
    case 'allow':
      return { action: 'run' };
    case 'cancel-running':
      await store.cancelRun(previous.id, by);
      return { action: 'run', cancelled: previous.id };
    case 'queue': {
      const state = await readScheduleState(store, schedule.key);
      if (state) {
        state.queued = [...state.queued, new Date(nowMs).toISOString()];
        await writeScheduleState(store, schedule.key, state);
        return { action: 'queued', behind: previous.id };
      }
      return { action: 'run' };
    }
    default:
      throw new SchedulerError(
        `schedule ${schedule.key}: its previous run ${previous.id} is still ${previous.status} and its overlap policy is skip; not triggered (fleetbook runs cancel ${previous.id}, or wait for it)`,
        SchedulerErrorCode.scheduleBusy,
        { previousRunId: previous.id },
      );
  }
}
