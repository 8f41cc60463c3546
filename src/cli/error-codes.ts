/** The codes of the command line's own errors (exit 2). docs/errors.md says what each means. */
export const CliErrorCode = {
  invalidOption: 'INVALID_OPTION',
  missingOption: 'MISSING_OPTION',
  invalidFormat: 'INVALID_FORMAT',
  invalidConfig: 'INVALID_CONFIG',
  profileNotFound: 'PROFILE_NOT_FOUND',
  noConnection: 'NO_CONNECTION',
  invalidInputsFile: 'INVALID_INPUTS_FILE',
  invalidRetention: 'INVALID_RETENTION',
  invalidPlaybooks: 'INVALID_PLAYBOOKS',
  noSharedStore: 'NO_SHARED_STORE',
  invalidPlaybook: 'INVALID_PLAYBOOK',
  unknownCommand: 'UNKNOWN_COMMAND',
  unknownRun: 'UNKNOWN_RUN',
  ambiguousRun: 'AMBIGUOUS_RUN',
  unknownSchedule: 'UNKNOWN_SCHEDULE',
  unknownOperation: 'UNKNOWN_OPERATION',
  secretInputMissing: 'SECRET_INPUT_MISSING',
  runEnded: 'RUN_ENDED',
} as const;
export type CliErrorCode = (typeof CliErrorCode)[keyof typeof CliErrorCode];
