/** The codes of a run's own errors (starting, ending, resuming). docs/errors.md says what each means. */
export const EngineErrorCode = {
  invalidInputs: 'INVALID_INPUTS',
  invalidInputSetting: 'INVALID_INPUT_SETTING',
  runLeased: 'RUN_LEASED',
  leaseLost: 'LEASE_LOST',
  interrupted: 'INTERRUPTED',
  stepFailed: 'STEP_FAILED',
  runNotFound: 'RUN_NOT_FOUND',
  runSucceeded: 'RUN_SUCCEEDED',
  playbookChanged: 'PLAYBOOK_CHANGED',
  secretInputMissing: 'SECRET_INPUT_MISSING',
  outcomeUnknown: 'OUTCOME_UNKNOWN',
} as const;
export type EngineErrorCode = (typeof EngineErrorCode)[keyof typeof EngineErrorCode];
