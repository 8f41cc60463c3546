/**
 * Errors every layer shares. A `FleetbookError` is a user-facing failure: its message says
 * what happened and what to do, and `exitCode` is what the CLI ends with.
 */

/** Exit codes of the CLI contract (docs/errors.md). */
export const ExitCode = {
  success: 0,
  runFailed: 1,
  usage: 2,
  /** The run waits (an approval, a maintenance window) with no process kept: EX_TEMPFAIL, "try again later". */
  waiting: 75,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface FleetbookErrorOptions {
  /** Stable UPPER_SNAKE identifier, for scripts and tests. */
  code: string;
  /** @default ExitCode.runFailed */
  exitCode?: ExitCode;
  cause?: unknown;
  /** Structured facts for JSON output (never secrets). */
  details?: Record<string, unknown>;
}

export class FleetbookError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: FleetbookErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FleetbookError';
    this.code = options.code;
    this.exitCode = options.exitCode ?? ExitCode.runFailed;
    this.details = options.details;
  }
}

/** The codes of this module's own errors. docs/errors.md says what each means. */
export const CommonErrorCode = {
  usage: 'USAGE',
} as const;
export type CommonErrorCode = (typeof CommonErrorCode)[keyof typeof CommonErrorCode];

/** Bad command line, configuration or input: exit code 2, never a stack trace. */
export class UsageError extends FleetbookError {
  constructor(message: string, code: string = CommonErrorCode.usage, details?: Record<string, unknown>) {
    super(message, { code, exitCode: ExitCode.usage, details });
    this.name = 'UsageError';
  }
}

export function isFleetbookError(error: unknown): error is FleetbookError {
  return error instanceof FleetbookError;
}

/** The message of anything thrown: an `Error`'s message, else the value as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
export { closestMatches, didYouMean } from './did-you-mean.js';
export { shownName, withShownNames, SHOWN_NAME_LENGTH, LONGEST_SHOWN_WHOLE } from './shown-text.js';
