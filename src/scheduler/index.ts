/** The scheduler: fire times, schedule policies, the daemon and the playbook lock (see ARCHITECTURE.md). */
export { systemClock, type Clock, type Timer } from './clock.js';
export { createFireTimes, type FireTimes } from './fire-times.js';
export { offsetAt, wallTimeAt, instantOf, isValidTimezone } from '../timers/index.js';
export {
  createScheduler,
  LATE_TOLERANCE_MS,
  MAX_CATCH_UP_FIRES,
  MAX_QUEUED_FIRES,
  type FireRequest,
  type Scheduler,
  type SchedulerOptions,
} from './scheduler.js';
export { readScheduleState, writeScheduleState, type ScheduleState, type ScheduleRunResult } from './schedule-state.js';
export { localTime, scheduleOverview, type FireTime, type ScheduleOverview } from './schedule-overview.js';
export { runPlaybookWithLock, resumeRunWithLock, renderLockKey, type LockOptions } from './run-with-lock.js';
export { startDaemon, SCHEDULER_LEASE_KEY, type Daemon, type DaemonOptions } from './daemon.js';
export {
  isPlaybookFile,
  loadPlaybookFolder,
  loadPlaybookFolderOffThread,
  type PlaybookFolder,
} from '../playbook/index.js';
export { SchedulerError, SchedulerErrorCode, isSchedulerError } from './scheduler-error.js';
export { runWorker, type WorkerOptions, type WorkerSummary } from './worker.js';
export { createFireQueuer, type FireQueuerOptions } from './fire-queuer.js';
export { fireRefusal, runnableFires, startGateOfRun, windowRefusal, type WindowRefusal } from './window-check.js';
export { decideTrigger, type TriggerDecision } from './trigger.js';
