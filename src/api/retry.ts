/**
 * Retry policy of the client: exponential backoff with a cap and full jitter, a number of
 * attempts and a total time budget. The server's hint (`retryAfterMs`) comes first.
 */
import { InvalidClientOptionsError } from './errors.js';
import { sleepOn, systemClock, type Clock } from '../timers/index.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. @default 5 */
  maxAttempts: number;
  /** Upper bound of the first backoff delay, in ms. @default 500 */
  initialDelayMs: number;
  /** Cap of the computed backoff delay, in ms (a server hint may exceed it). @default 30_000 */
  maxDelayMs: number;
  /** Growth of the delay bound per attempt. @default 2 */
  backoffRate: number;
  /** No retry is started when its delay would end later than this after the first attempt began, in ms. @default 120_000 */
  totalBudgetMs: number;
}

export const defaultRetryPolicy: Readonly<RetryPolicy> = {
  maxAttempts: 5,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  backoffRate: 2,
  totalBudgetMs: 120_000,
};

/** Fills in defaults and rejects impossible values with a message naming the field. */
export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...defaultRetryPolicy, ...overrides };
  const check = (field: keyof RetryPolicy, ok: boolean, expected: string): void => {
    if (!ok)
      throw new InvalidClientOptionsError(
        `Expected \`retry.${field}\` to be ${expected}, got ${String(policy[field])}.`,
      );
  };
  check('maxAttempts', Number.isInteger(policy.maxAttempts) && policy.maxAttempts >= 1, 'an integer from 1');
  check(
    'initialDelayMs',
    Number.isFinite(policy.initialDelayMs) && policy.initialDelayMs >= 0,
    'a number of ms from 0',
  );
  check(
    'maxDelayMs',
    Number.isFinite(policy.maxDelayMs) && policy.maxDelayMs >= policy.initialDelayMs,
    'a number of ms not below `initialDelayMs`',
  );
  check('backoffRate', Number.isFinite(policy.backoffRate) && policy.backoffRate >= 1, 'a number from 1');
  check('totalBudgetMs', policy.totalBudgetMs >= 0, 'a number of ms from 0');
  return policy;
}

/** Full jitter: uniform in [0, min(cap, initial × rate^(attempt-1))). `attempt` counts from 1. */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const bound = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.backoffRate ** (attempt - 1));
  return Math.floor(random() * bound);
}

/** What the retry loop needs to know of a failure. */
export interface RetryableFailure {
  retryable: boolean;
  retryAfterMs?: number | undefined;
}

function asFailure(error: unknown): RetryableFailure | undefined {
  if (
    error !== null &&
    typeof error === 'object' &&
    typeof (error as { retryable?: unknown }).retryable === 'boolean'
  ) {
    return error as RetryableFailure;
  }
  return undefined;
}

export interface RetryContext {
  policy: RetryPolicy;
  signal?: AbortSignal | undefined;
  /** Called before each wait, e.g. to log. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** @default Math.random */
  random?: () => number;
  /** Time of the budget and the waits. @default systemClock */
  clock?: Clock;
}

/**
 * Runs `task` until it succeeds, fails with an error that is not `retryable`, runs out of
 * attempts, or the next wait would overrun the budget; then rethrows the last error.
 */
export async function withRetry<T>(task: (attempt: number) => Promise<T>, context: RetryContext): Promise<T> {
  const { policy, signal } = context;
  const clock = context.clock ?? systemClock;
  const startedAt = clock.now();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await task(attempt);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const failure = asFailure(error);
      if (!failure?.retryable || attempt >= policy.maxAttempts) throw error;
      const delayMs = failure.retryAfterMs ?? backoffDelayMs(policy, attempt, context.random);
      if (clock.now() + delayMs - startedAt > policy.totalBudgetMs) throw error;
      context.onRetry?.(error, attempt, delayMs);
      await sleepOn(clock, delayMs, signal);
    }
  }
}
