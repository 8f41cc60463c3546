import { describe, expect, it } from 'vitest';
import { ConnectionError, ServerError } from '../api/index.js';
import type { RetryPolicy } from '../playbook/types.js';
import { StepError } from '../steps/executors/step-error.js';
import { retryCondition, stepRetryDelayMs } from './step-retry.js';

const serverError = (retryable: boolean, retryAfterMs?: number) =>
  new ServerError('failed', 'SERVER_ERROR', { operationId: 'x.y', status: 500, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
const operationFailed = new StepError('failed', { kind: 'operationFailed', code: 'OPERATION_FAILED' });
const waitTimeout = new StepError('late', { kind: 'timeout', code: 'WAIT_TIMEOUT' });

describe('retryCondition', () => {
  it('treats as transient only what the client judged safe to repeat', () => {
    expect(retryCondition(serverError(true), ['transient'])).toBe('transient');
    // A write's 500 may have been applied: not transient, unless its status is listed.
    expect(retryCondition(serverError(false), ['transient'])).toBeUndefined();
    expect(retryCondition(serverError(false), ['transient', 500])).toBe('500');
    expect(retryCondition(new ConnectionError('down', 'CONNECTION_FAILED', { operationId: 'x.y', retryable: true }), ['transient'])).toBe('transient');
  });

  it('names failed async operations and timeouts only when asked', () => {
    expect(retryCondition(operationFailed, ['transient'])).toBeUndefined();
    expect(retryCondition(operationFailed, ['operationFailed'])).toBe('operationFailed');
    expect(retryCondition(waitTimeout, ['operationFailed', 'timeout'])).toBe('timeout');
    expect(retryCondition(new Error('anything'), ['any'])).toBe('any');
  });

  it('never retries a write of unknown outcome, not even under `any`', () => {
    const unknown = new StepError('lost', { kind: 'invalidInput', code: 'OUTCOME_UNKNOWN' });
    expect(retryCondition(unknown, ['any', 'transient', 'operationFailed'])).toBeUndefined();
  });
});

describe('stepRetryDelayMs', () => {
  const policy: RetryPolicy = { maxAttempts: 5, initialDelayMs: 100, backoffRate: 2, maxDelayMs: 300, jitter: 'none', on: ['transient'] };
  it('grows by the backoff rate up to the cap, with full jitter below the bound', () => {
    expect([1, 2, 3, 4].map((attempt) => stepRetryDelayMs(policy, attempt, operationFailed, () => 0.5))).toEqual([100, 200, 300, 300]);
    expect(stepRetryDelayMs({ ...policy, jitter: 'full' }, 2, operationFailed, () => 0.5)).toBe(100);
  });

  it("follows the server's hint first", () => {
    expect(stepRetryDelayMs(policy, 1, serverError(true, 1500), () => 0.5)).toBe(1500);
  });
});
