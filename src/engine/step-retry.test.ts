import { describe, expect, it } from 'vitest';
import { ConnectionError, ServerError } from '../api/index.js';
import type { RetryPolicy } from '../playbook/index.js';
import { StepError } from '../steps/executors/step-error.js';
import { decideRetry, retryCondition, retryFactsOf, retryFactsOfRecord, stepRetryDelayMs } from './step-retry.js';

const serverError = (retryable: boolean, retryAfterMs?: number) =>
  new ServerError('failed', 'SERVER_ERROR', {
    operationId: 'x.y',
    status: 500,
    retryable,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
const operationFailed = new StepError('failed', { kind: 'operationFailed', code: 'OPERATION_FAILED' });
const waitTimeout = new StepError('late', { kind: 'timeout', code: 'WAIT_TIMEOUT' });

describe('retryCondition', () => {
  it('treats as transient only what the client judged safe to repeat', () => {
    expect(retryCondition(serverError(true), ['transient'])).toBe('transient');
    // A write's 500 may have been applied: not transient, unless its status is listed.
    expect(retryCondition(serverError(false), ['transient'])).toBeUndefined();
    expect(retryCondition(serverError(false), ['transient', 500])).toBe('500');
    expect(
      retryCondition(new ConnectionError('down', 'CONNECTION_FAILED', { operationId: 'x.y', retryable: true }), [
        'transient',
      ]),
    ).toBe('transient');
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
  const policy: RetryPolicy = {
    maxAttempts: 5,
    initialDelayMs: 100,
    backoffRate: 2,
    maxDelayMs: 300,
    jitter: 'none',
    on: ['transient'],
  };
  it('grows by the backoff rate up to the cap, with full jitter below the bound', () => {
    expect([1, 2, 3, 4].map((attempt) => stepRetryDelayMs(policy, attempt, operationFailed, () => 0.5))).toEqual([
      100, 200, 300, 300,
    ]);
    expect(stepRetryDelayMs({ ...policy, jitter: 'full' }, 2, operationFailed, () => 0.5)).toBe(100);
  });

  it("follows the server's hint first", () => {
    expect(stepRetryDelayMs(policy, 1, serverError(true, 1500), () => 0.5)).toBe(1500);
  });
});

describe('decideRetry', () => {
  const policy: RetryPolicy = {
    maxAttempts: 3,
    initialDelayMs: 100,
    backoffRate: 2,
    maxDelayMs: 1000,
    jitter: 'none',
    on: ['any'],
  };

  it('retries what `on` covers while attempts remain, with the reason and the delay', () => {
    expect(decideRetry(retryFactsOf(operationFailed), policy, 1, () => 0.5)).toEqual({
      retry: true,
      reason: 'any',
      delayMs: 100,
    });
    expect(decideRetry(retryFactsOf(serverError(true, 1500)), { ...policy, on: ['transient'] }, 2, () => 0.5)).toEqual({
      retry: true,
      reason: 'transient',
      delayMs: 1500,
    });
    expect(decideRetry(retryFactsOf(operationFailed), policy, 3, () => 0.5)).toEqual({ retry: false });
  });

  it('never repeats a write of unknown outcome, whether a step ended so or a block inside which one did', () => {
    const unknown = new StepError('lost', { kind: 'outcomeUnknown', code: 'OUTCOME_UNKNOWN' });
    expect(decideRetry(retryFactsOf(unknown), policy, 1, () => 0.5)).toEqual({ retry: false });
    const block = {
      message: 'step a.b failed: lost',
      code: 'STEPS_FAILED',
      details: { failedStep: 'a.b', failedCode: 'OUTCOME_UNKNOWN' },
    };
    expect(decideRetry(retryFactsOfRecord(block), policy, 1, () => 0.5)).toEqual({ retry: false });
  });

  it("matches a block's own timeout to `timeout`, and nothing of a block to `transient`", () => {
    const timedOut = retryFactsOfRecord({ message: 'late', code: 'STEP_TIMEOUT' });
    expect(decideRetry(timedOut, { ...policy, on: ['timeout'] }, 1, () => 0.5)).toMatchObject({
      retry: true,
      reason: 'timeout',
    });
    expect(
      decideRetry(
        retryFactsOfRecord({ message: 'x', code: 'STEPS_FAILED' }),
        { ...policy, on: ['transient', 'timeout'] },
        1,
        () => 0.5,
      ),
    ).toEqual({ retry: false });
  });
});
