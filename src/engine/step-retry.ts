/**
 * The step retry policy of DESIGN.md: which failures are retried (`on`) and how long to
 * wait before the next attempt (full-jitter exponential backoff, capped; the server's
 * hint first).
 */
import { ApiError } from '../api/index.js';
import type { RetryOn, RetryPolicy } from '../playbook/types.js';
import { isStepError, StepFailureKind } from '../steps/executors/step-error.js';

function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof ApiError) return error.status;
  if (isStepError(error)) return error.httpStatus;
  return undefined;
}

/**
 * The code of a write whose outcome reconciliation could not tell. No retry condition covers
 * it, `any` included: sending it again blindly is what reconciliation is there to prevent; the
 * operator checks the platform, then resumes with `--confirm-unknown`.
 */
export const OUTCOME_UNKNOWN = 'OUTCOME_UNKNOWN';

function matches(condition: RetryOn, error: unknown): boolean {
  if (isStepError(error) && error.code === OUTCOME_UNKNOWN) return false;
  if (typeof condition === 'number') return httpStatusOf(error) === condition;
  switch (condition) {
    case 'any':
      return true;
    // Network errors, 408, 429 and 5xx that the client judged safe to repeat (a write's
    // 500 may have been applied, so it is not transient unless listed by status).
    case 'transient':
      return (error instanceof ApiError || isStepError(error)) && error.retryable;
    case 'operationFailed':
      return isStepError(error) && error.kind === StepFailureKind.operationFailed;
    case 'timeout':
      return isStepError(error) && error.kind === StepFailureKind.timeout;
  }
  return false;
}

/** The condition of `on` that covers `error` (for the journal's reason), or `undefined`: no retry. */
export function retryCondition(error: unknown, on: readonly RetryOn[]): string | undefined {
  const found = on.find((condition) => matches(condition, error));
  return found === undefined ? undefined : String(found);
}

/** Delay before attempt `attempt + 1`: the server's hint when it gave one, else backoff. */
export function stepRetryDelayMs(policy: RetryPolicy, attempt: number, error: unknown, random: () => number): number {
  if (error instanceof ApiError && error.retryAfterMs !== undefined) return error.retryAfterMs;
  const bound = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.backoffRate ** (attempt - 1));
  return policy.jitter === 'full' ? Math.floor(random() * bound) : bound;
}
