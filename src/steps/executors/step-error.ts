import { FleetbookError } from '../../errors/index.js';
import type { StepErrorCode } from '../error-codes.js';

/**
 * What kind of failure a step ended with, for the retry policy's `on` and for messages:
 * `operationFailed` an async operation ended FAILED (or TIMEDOUT, CANCELLED on the
 * platform), `timeout` one of our deadlines passed (a wait, a poll, a step), `http` a
 * webhook answered an error status or could not be reached, `invalidInput` a rendered input
 * the operation refuses, `outcomeUnknown` a write that may or may not have been applied, `assertion` and `failed` the playbook's own `assert` and `fail`.
 */
export const StepFailureKind = {
  operationFailed: 'operationFailed',
  timeout: 'timeout',
  http: 'http',
  invalidInput: 'invalidInput',
  assertion: 'assertion',
  failed: 'failed',
  waitFailed: 'waitFailed',
  /** A write whose outcome reconciliation could not tell: never retried (OUTCOME_UNKNOWN). */
  outcomeUnknown: 'outcomeUnknown',
} as const;
export type StepFailureKind = (typeof StepFailureKind)[keyof typeof StepFailureKind];

export interface StepErrorOptions {
  kind: StepFailureKind;
  /** Stable UPPER_SNAKE code, e.g. `OPERATION_FAILED`, `WAIT_TIMEOUT`. */
  code: StepErrorCode;
  httpStatus?: number;
  operationId?: string;
  /** A transient failure the `transient` retry condition covers (a webhook's 5xx). @default false */
  retryable?: boolean;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** A step that failed for a reason of its own (not a platform call's typed error). */
export class StepError extends FleetbookError {
  declare readonly code: StepErrorCode;
  readonly kind: StepFailureKind;
  readonly httpStatus: number | undefined;
  readonly operationId: string | undefined;
  readonly retryable: boolean;

  constructor(message: string, options: StepErrorOptions) {
    super(message, {
      code: options.code,
      cause: options.cause,
      ...(options.details ? { details: options.details } : {}),
    });
    this.name = 'StepError';
    this.kind = options.kind;
    this.httpStatus = options.httpStatus;
    this.operationId = options.operationId;
    this.retryable = options.retryable ?? false;
  }
}

export function isStepError(error: unknown): error is StepError {
  return error instanceof StepError;
}
