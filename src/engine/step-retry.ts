/**
 * The step retry policy: which failures are retried (`on`) and how long to wait before the
 * next attempt (full-jitter exponential backoff, capped; the server's hint first). See
 * ARCHITECTURE.md, "One step".
 *
 * Every failure is first read into one shape, `RetryFacts` (`retryFactsOf`: the only place
 * that looks at error classes); `decideRetry` then decides over those facts alone, for a leaf
 * step's attempt and for a block retried as a whole.
 */
import { ApiError } from '../api/index.js';
import type { RetryOn, RetryPolicy } from '../playbook/index.js';
import { StepErrorCode } from '../steps/index.js';
import { isStepError, StepFailureKind } from '../steps/index.js';
import type { ErrorRecord } from '../store/index.js';

/**
 * The code of a write whose outcome reconciliation could not tell. No retry condition covers
 * it, `any` included: sending it again blindly is what reconciliation is there to prevent; the
 * operator checks the platform, then resumes with `--confirm-unknown`.
 */
export const OUTCOME_UNKNOWN = StepErrorCode.outcomeUnknown;

/** What the retry decision knows of a failure. */
export interface RetryFacts {
  /** The client judged repeating it safe (network, 408, 429, 5xx of a read; a webhook's 5xx). */
  transient: boolean;
  httpStatus?: number;
  /** The async operation ended FAILED, TIMEDOUT or CANCELLED on the platform. */
  operationFailed: boolean;
  /** One of our deadlines passed (a wait, a poll, a step's or a block's timeout). */
  timedOut: boolean;
  /** A write that may have been applied and cannot be told: never repeated. */
  outcomeUnknown: boolean;
  /** The server's hint, in ms. */
  retryAfterMs?: number;
}

export function retryFactsOf(error: unknown): RetryFacts {
  if (error instanceof ApiError) {
    return {
      transient: error.retryable,
      ...(error.status === undefined ? {} : { httpStatus: error.status }),
      operationFailed: false,
      timedOut: false,
      outcomeUnknown: false,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    };
  }
  if (isStepError(error)) {
    return {
      transient: error.retryable,
      ...(error.httpStatus === undefined ? {} : { httpStatus: error.httpStatus }),
      operationFailed: error.kind === StepFailureKind.operationFailed,
      timedOut: error.kind === StepFailureKind.timeout,
      outcomeUnknown: error.kind === StepFailureKind.outcomeUnknown || error.code === OUTCOME_UNKNOWN,
    };
  }
  return { transient: false, operationFailed: false, timedOut: false, outcomeUnknown: false };
}

/**
 * A failed block as the facts its own `retry.on` is matched against: `any`, or `timeout` when
 * its own timeout fired; a write of unknown outcome inside (`details.failedCode`, kept through
 * nested blocks) stops the block's retry as it stops a step's.
 */
export function retryFactsOfRecord(record: ErrorRecord | undefined): RetryFacts {
  const failedCode = (record?.details as { failedCode?: string } | undefined)?.failedCode;
  return {
    transient: false,
    operationFailed: false,
    timedOut: record?.code === StepErrorCode.stepTimeout,
    outcomeUnknown: failedCode === OUTCOME_UNKNOWN || record?.code === OUTCOME_UNKNOWN,
  };
}

function covers(condition: RetryOn, facts: RetryFacts): boolean {
  if (facts.outcomeUnknown) return false;
  if (typeof condition === 'number') return facts.httpStatus === condition;
  switch (condition) {
    case 'any':
      return true;
    // Network errors, 408, 429 and 5xx that the client judged safe to repeat (a write's
    // 500 may have been applied, so it is not transient unless listed by status).
    case 'transient':
      return facts.transient;
    case 'operationFailed':
      return facts.operationFailed;
    case 'timeout':
      return facts.timedOut;
  }
  return false;
}

/** Delay before attempt `attempt + 1`: the server's hint when it gave one, else backoff. */
function delayMs(policy: RetryPolicy, attempt: number, facts: RetryFacts, random: () => number): number {
  if (facts.retryAfterMs !== undefined) return facts.retryAfterMs;
  const bound = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.backoffRate ** (attempt - 1));
  return policy.jitter === 'full' ? Math.floor(random() * bound) : bound;
}

export type RetryDecision = { retry: false } | { retry: true; reason: string; delayMs: number };

/** After failed attempt `attempt`: whether to try again, why (the condition of `on`), and after how long. */
export function decideRetry(
  facts: RetryFacts,
  policy: RetryPolicy,
  attempt: number,
  random: () => number,
): RetryDecision {
  const found = policy.on.find((condition) => covers(condition, facts));
  if (found === undefined || attempt >= policy.maxAttempts) return { retry: false };
  return { retry: true, reason: String(found), delayMs: delayMs(policy, attempt, facts, random) };
}

/** The condition of `on` that covers `error` (for the journal's reason), or `undefined`: no retry. */
export function retryCondition(error: unknown, on: readonly RetryOn[]): string | undefined {
  const facts = retryFactsOf(error);
  const found = on.find((condition) => covers(condition, facts));
  return found === undefined ? undefined : String(found);
}

/** Delay before attempt `attempt + 1` after `error`. */
export function stepRetryDelayMs(policy: RetryPolicy, attempt: number, error: unknown, random: () => number): number {
  return delayMs(policy, attempt, retryFactsOf(error), random);
}
