/** Step kinds: the registry the loader and the engine look kinds up in, and how to define one. */
export { createStepRegistry, stepsOfKind, StepRegistryError, type ChildSteps, type StepRegistry } from './registry.js';
export { builtinStepDefinitions, commonStepFields, retryPolicy } from './definitions/index.js';
export {
  defineContainer,
  defineLeaf,
  isContainer,
  kindOutputType,
  type ContainerContext,
  type ContainerDefinition,
  type Ending,
  type ItemRun,
  type LeafContext,
  type LeafDefinition,
  type NormaliseTools,
  type OutputTypeTools,
  type PreparedLeaf,
  type StepChildren,
  type StepDefinition,
  type StepExample,
  type StepOutcome,
} from './definitions/step-definition.js';
export {
  anyTemplate,
  duration,
  EXPRESSION_PATTERN,
  expressionString,
  inputDeclaration,
  inputNames,
  orExpression,
  stepList,
  STEP_ID_PATTERN,
  type JsonSchema,
} from './definitions/schema-parts.js';
export { StepError, StepFailureKind, isStepError } from './executors/step-error.js';
export type {
  StepRuntime,
  LeafResult,
  Mailer,
  MailReceipt,
  MailToSend,
  RunHistory,
  RunMail,
  RunWaits,
  WaitRequest,
} from './executors/types.js';
export { StepErrorCode } from './error-codes.js';
export { toErrorRecord } from './executors/error-record.js';
export { isConflict, isOutcomeUnknown } from './executors/call.js';
export { reconcileWrite, reconciliationOf, type ReconcileDecision } from './reconcile/index.js';
export { compileSchema } from './executors/call-input.js';
export {
  closedObject,
  describeType,
  fieldOf,
  itemOf,
  stepRecordType,
  typeOfLiteral,
  UNKNOWN,
  type FieldLookup,
} from './definitions/value-types.js';
export { callAnswerType } from './definitions/call.js';
// The built-in kinds' loaded shapes, each beside its definition.
export type { ApprovalStep } from './definitions/approval.js';
export type { AssertStep } from './definitions/assert.js';
export type { BlockStep } from './definitions/block.js';
export type { CallStep } from './definitions/call.js';
export type { EmailStep } from './definitions/email.js';
export type { FailStep } from './definitions/fail.js';
export type { FileStep } from './definitions/file.js';
export type { ForEachStep } from './definitions/for-each.js';
export type { HttpStep } from './definitions/http.js';
export type { LogStep } from './definitions/log.js';
export type { ParallelStep } from './definitions/parallel.js';
export type { RunsStep } from './definitions/runs.js';
export type { SetStep } from './definitions/set.js';
export type { SleepStep } from './definitions/sleep.js';
export type { UsesStep } from './definitions/uses.js';
export {
  createPlanSession,
  fieldChanges,
  planWrite,
  type FieldChange,
  type PlannedWrite,
  type PlanSession,
} from './plan/plan-write.js';
export { createPlanGuard, driftOf, type PlanGuard } from './plan/plan-guard.js';
