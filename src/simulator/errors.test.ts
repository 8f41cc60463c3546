import { describe, expect, it } from 'vitest';
import { errorBodyFormOf, SimHttpError } from './errors.js';

const body = (errorDetailsItem?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: {
    httpStatusCode: { type: 'integer' },
    ...extra,
    ...(errorDetailsItem
      ? { errorDetails: { type: 'array', items: { type: 'object', properties: errorDetailsItem } } }
      : {}),
  },
});

describe('errorBodyFormOf', () => {
  it('tells the published detail kinds apart by their fields', () => {
    expect(errorBodyFormOf(body({ type: {}, issues: {} }))).toEqual({ details: 'issues', flowContextId: false });
    expect(errorBodyFormOf(body({ type: {}, retryAfterSeconds: {} }))).toEqual({
      details: 'retry',
      flowContextId: false,
    });
    expect(errorBodyFormOf(body({ type: {}, source: {}, metadata: {} }))).toEqual({
      details: 'general',
      flowContextId: false,
    });
    expect(errorBodyFormOf(body({ type: {}, issues: {} }, { flowContextId: { type: 'string' } }))).toEqual({
      details: 'issues',
      flowContextId: true,
    });
    expect(errorBodyFormOf(body())).toEqual({ details: undefined, flowContextId: false });
    expect(errorBodyFormOf(undefined)).toEqual({ details: undefined, flowContextId: false });
  });
});

describe('SimHttpError.toBody', () => {
  const issue = { source: 'field', subject: 'catalogVersion', description: 'must be offered' } as const;

  it('answers only the documented kind of detail, in its published shape', () => {
    const refused = new SimHttpError(412, 'PRECONDITION_FAILED', 'stale', [
      { type: 'precondition failed', issues: [issue] },
      { type: 'retry info', retryAfterSeconds: 2.6 },
    ]);
    expect(refused.toBody({ details: 'issues', flowContextId: false }).errorDetails).toEqual([
      { type: 'precondition failed', issues: [issue] },
    ]);
    expect(refused.toBody({ details: 'retry', flowContextId: false }).errorDetails).toEqual([
      { type: 'retry info', retryAfterSeconds: 3 },
    ]);
    // A general item's metadata values are objects: the issues keyed by subject.
    expect(refused.toBody({ details: 'general', flowContextId: false }).errorDetails).toEqual([
      {
        type: 'precondition failed',
        source: 'request',
        metadata: { catalogVersion: { source: 'field', description: 'must be offered' } },
      },
    ]);
    expect(refused.toBody({ details: undefined, flowContextId: false })).not.toHaveProperty('errorDetails');
  });

  it('omits errorDetails when no detail fits, adds a flowContextId of its own where documented, keeps raw details without a form', () => {
    const limited = new SimHttpError(429, 'TOO_MANY_REQUESTS', 'slow down', [
      { type: 'retry info', retryAfterSeconds: 5 },
    ]);
    expect(limited.toBody({ details: 'general', flowContextId: false })).not.toHaveProperty('errorDetails');
    expect(limited.retryAfterSeconds()).toBe(5);
    const analytics = limited.toBody({ details: 'issues', flowContextId: true });
    expect(analytics.flowContextId).toMatch(/^[0-9a-f-]{36}$/);
    expect(analytics.flowContextId).not.toBe(analytics.debugId);
    expect(limited.toBody().errorDetails).toEqual([{ type: 'retry info', retryAfterSeconds: 5 }]);
  });
});
