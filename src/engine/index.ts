/** The engine: runs a loaded playbook (see ARCHITECTURE.md). */
export {
  runPlaybook,
  resumeRun,
  enqueuePlaybookRun,
  type RunOptions,
  type ResumeOptions,
  type RunResult,
  type RunEndingReport,
} from './run-playbook.js';
export type { StepSummary } from './step-runner.js';
export { parseInputText, resolveInputs, type ResolvedInputs } from './inputs.js';
export { readSpilledInputs } from './large-values.js';
export { platformStateInFlight } from './resume-plan.js';
export { runEnvironmentOf, type RunEnvironment } from './run-environment.js';
export { exposedEnvironment } from './scope.js';
export { EngineErrorCode } from './error-codes.js';
export {
  recordApproval,
  formInputs,
  endDueWaits,
  describeWait,
  statusAfterWait,
  type ApprovalRequest,
  type ApprovalRecorded,
  type WaitEnded,
} from './run-waits.js';
