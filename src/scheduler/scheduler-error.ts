import { FleetbookError, ExitCode } from '../errors/index.js';

export const SchedulerErrorCode = {
  invalidCron: 'INVALID_CRON',
  invalidTimezone: 'INVALID_TIMEZONE',
  lockHeld: 'LOCK_HELD',
  lockLost: 'LOCK_LOST',
  unknownSchedule: 'UNKNOWN_SCHEDULE',
  invalidPlaybooks: 'INVALID_PLAYBOOKS',
  /** A run found crashed a third time: failed rather than resumed again (a run's error, not a SchedulerError). */
  runCrashed: 'RUN_CRASHED',
  /** A worker's claim on a run was taken over by another worker (a run's error). */
  claimLost: 'CLAIM_LOST',
  /** A run whose platform work was on an embedded simulator gone with its process (a run's error). */
  simulatorStateLost: 'SIMULATOR_STATE_LOST',
  /** `schedules trigger` of a schedule whose previous run still runs, with `overlap: skip`. */
  scheduleBusy: 'SCHEDULE_BUSY',
} as const;
export type SchedulerErrorCode = (typeof SchedulerErrorCode)[keyof typeof SchedulerErrorCode];

/** What the scheduler refuses: bad schedules and unknown keys exit 2, a held lock exits 1. */
export class SchedulerError extends FleetbookError {
  declare readonly code: SchedulerErrorCode;

  constructor(message: string, code: SchedulerErrorCode, details?: Record<string, unknown>) {
    super(message, {
      code,
      exitCode:
        code === 'LOCK_HELD' || code === 'LOCK_LOST' || code === 'SCHEDULE_BUSY' ? ExitCode.runFailed : ExitCode.usage,
      ...(details ? { details } : {}),
    });
    this.name = 'SchedulerError';
  }
}

export function isSchedulerError(error: unknown): error is SchedulerError {
  return error instanceof SchedulerError;
}
