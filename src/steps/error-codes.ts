/** The codes a step ends with (`steps.<id>.error.code`, the run summary). docs/errors.md says what each means. */
export const StepErrorCode = {
  assertionFailed: 'ASSERTION_FAILED',
  failedByPlaybook: 'FAILED_BY_PLAYBOOK',
  invalidDuration: 'INVALID_DURATION',
  invalidCallInput: 'INVALID_CALL_INPUT',
  invalidSaveTo: 'INVALID_SAVE_TO',
  invalidHttpRequest: 'INVALID_HTTP_REQUEST',
  httpUnreachable: 'HTTP_UNREACHABLE',
  operationFailed: 'OPERATION_FAILED',
  waitFailed: 'WAIT_FAILED',
  waitTimeout: 'WAIT_TIMEOUT',
  pollTimeout: 'POLL_TIMEOUT',
  stepTimeout: 'STEP_TIMEOUT',
  outcomeUnknown: 'OUTCOME_UNKNOWN',
  stepsFailed: 'STEPS_FAILED',
  alwaysFailed: 'ALWAYS_FAILED',
  foreachNotArray: 'FOREACH_NOT_ARRAY',
  invalidLoopOption: 'INVALID_LOOP_OPTION',
  toleranceExceeded: 'TOLERANCE_EXCEEDED',
  /** The run's maintenance window closed (or a freeze began) with loop items not started. */
  windowClosed: 'WINDOW_CLOSED',
  unknownStepKind: 'UNKNOWN_STEP_KIND',
  duplicateStepKind: 'DUPLICATE_STEP_KIND',
  invalidEmailAddress: 'INVALID_EMAIL_ADDRESS',
  invalidAttachment: 'INVALID_ATTACHMENT',
  /** A `file` step's name is no bare file name, or its rows are not flat objects. */
  invalidFile: 'INVALID_FILE',
  attachmentTooLarge: 'ATTACHMENT_TOO_LARGE',
  noEmailChannel: 'EMAIL_CHANNEL',
  emailRefused: 'EMAIL_REFUSED',
  emailNotSent: 'EMAIL_NOT_SENT',
  approvalDenied: 'APPROVAL_DENIED',
  approvalTimedOut: 'APPROVAL_TIMED_OUT',
  /** `fleetbook apply`: the resource a planned write touches changed since the plan. */
  planStale: 'PLAN_STALE',
  /** `fleetbook apply`: a write the plan does not hold. */
  notInPlan: 'NOT_IN_PLAN',
  /** Something thrown that is no Fleetbook error (a bug, or a library's plain `Error`). */
  error: 'ERROR',
} as const;
/** A code of the table, or `HTTP_<status>` for a webhook's error answer. */
export type StepErrorCode = (typeof StepErrorCode)[keyof typeof StepErrorCode] | `HTTP_${number}`;
