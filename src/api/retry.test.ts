import { describe, expect, it } from 'vitest';
import { backoffDelayMs, resolveRetryPolicy, withRetry } from './retry.js';

describe('retry policy', () => {
  it('fills defaults and names a bad field', () => {
    expect(resolveRetryPolicy()).toEqual({
      maxAttempts: 5,
      initialDelayMs: 500,
      maxDelayMs: 30_000,
      backoffRate: 2,
      totalBudgetMs: 120_000,
    });
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(
      'Expected `retry.maxAttempts` to be an integer from 1, got 0.',
    );
    expect(() => resolveRetryPolicy({ maxDelayMs: 10 })).toThrow('`retry.maxDelayMs`');
  });

  it('draws full-jitter delays under an exponential, capped bound', () => {
    const policy = resolveRetryPolicy({ initialDelayMs: 100, maxDelayMs: 1_000 });
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(policy, attempt, () => 0.999_999))).toEqual([
      99, 199, 399, 799, 999,
    ]);
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0);
  });
});

describe('withRetry', () => {
  const transient = { retryable: true };

  it('repeats retryable failures up to maxAttempts, then rethrows the last', async () => {
    let attempts = 0;
    const policy = resolveRetryPolicy({ maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 1 });
    await expect(
      withRetry(() => Promise.reject(Object.assign(new Error(`fail ${++attempts}`), transient)), { policy }),
    ).rejects.toThrow('fail 3');
    expect(attempts).toBe(3);
  });

  it('does not repeat a failure that is not retryable', async () => {
    let attempts = 0;
    const policy = resolveRetryPolicy({ initialDelayMs: 1, maxDelayMs: 1 });
    await expect(
      withRetry(() => Promise.reject(Object.assign(new Error('final'), { retryable: false, attempt: ++attempts })), {
        policy,
      }),
    ).rejects.toThrow('final');
    expect(attempts).toBe(1);
  });

  it("waits the server's hint first, and gives up when it would overrun the budget", async () => {
    const delays: number[] = [];
    const policy = resolveRetryPolicy({ initialDelayMs: 1, maxDelayMs: 1, totalBudgetMs: 100 });
    let attempts = 0;
    const result = await withRetry(
      async () => {
        attempts += 1;
        if (attempts === 1) throw Object.assign(new Error('slow down'), { retryable: true, retryAfterMs: 30 });
        return 'ok';
      },
      { policy, onRetry: (_error, _attempt, delayMs) => delays.push(delayMs) },
    );
    expect([result, delays]).toEqual(['ok', [30]]);
    await expect(
      withRetry(() => Promise.reject(Object.assign(new Error('later'), { retryable: true, retryAfterMs: 5_000 })), {
        policy,
      }),
    ).rejects.toThrow('later');
  });
});
