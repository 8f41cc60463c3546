/** The engine: runs a loaded playbook (see ARCHITECTURE.md). */
export { runPlaybook, enqueuePlaybookRun } from './run-playbook.js';
export { resumeRun } from './resume-run.js';
export type { RunOptions, ResumeOptions, RunResult, RunEndingReport } from './run-options.js';
export { outputsRootOf } from './run-options.js';
export type { StepSummary } from './step-runner.js';
export { parseInputText, resolveInputs, type ResolvedInputs } from './inputs.js';
export { readSpilledInputs } from './large-values.js';
export { platformStateInFlight } from './resume-plan.js';
export { retrySourceOf, type RetrySource } from './retry-failed.js';
export { runEnvironmentOf, type RunEnvironment } from './run-environment.js';
export { exposedEnvironment } from './scope.js';
export { EngineErrorCode } from './error-codes.js';
export {
  recordApproval,
  formInputs,
  continuedByScheduler,
  endDueWaits,
  describeWait,
  statusAfterWait,
  type ApprovalRequest,
  type ApprovalRecorded,
  type WaitEnded,
} from './run-waits.js';
export { approvalProgress, policyRefusal, type Decider } from './approval-policy.js';
