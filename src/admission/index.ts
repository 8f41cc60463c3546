/**
 * Admission: the one way a run comes in. Every door (CLI, queue, schedule trigger, daemon fire,
 * the server's API and pages) builds a `RunRequest`, has it admitted (`admit`: role, inputs,
 * secret inputs, windows and freezes, a triggered schedule's overlap) and hands the admission
 * to `driveAdmitted` or `queueAdmitted`; a stored run is continued by `resumeStored`.
 */
export { Door, type Caller, type RequestTrigger, type RunRequest } from './run-request.js';
export { admit, closedWindow, secretInputVariable, type Admission, type AdmissionContext } from './admit.js';
export {
  deliverNotifications,
  driveAdmitted,
  queueAdmitted,
  resumeStored,
  type DriveOptions,
  type ResumeStoredOptions,
  type RunParts,
} from './drive.js';
export { AdmissionErrorCode } from './error-codes.js';
export { rerunRequest, type RerunAsked } from './rerun.js';
export { createFireDriver, type FireDriverOptions } from './fire.js';
