import { describe, expect, it } from 'vitest';
import {
  asFinal,
  ConflictError,
  createHttpError,
  serverLimitPerMinute,
  isSafeToRetry,
  parseErrorBody,
  PermissionDeniedError,
  PreconditionFailedError,
  retryAfterMsOf,
  UnavailableForLegalReasonsError,
  UnexpectedStatusError,
  UnprocessableEntityError,
} from './errors.js';

describe('parseErrorBody', () => {
  it('reads the standard body with its details', () => {
    const body = parseErrorBody(
      JSON.stringify({
        httpStatusCode: 400,
        errorCode: 'INVALID_FILTER',
        message: 'bad filter',
        debugId: 'd1',
        errorDetails: [
          {
            type: 'bad request',
            issues: [{ source: 'query.parameter', subject: 'filter', description: 'unknown property' }],
          },
          { type: 'retry info', retryAfterSeconds: 7 },
        ],
      }),
    );
    expect(body).toMatchObject({
      errorCode: 'INVALID_FILTER',
      message: 'bad filter',
      debugId: 'd1',
      retryAfterSeconds: 7,
    });
    expect(body.issues).toEqual([{ source: 'query.parameter', subject: 'filter', description: 'unknown property' }]);
  });

  it('reads the published bodies of devices, subscriptions and consumption analytics v2', () => {
    // Devices and subscriptions: a 500's retry hint is an integer detail; other statuses carry source + metadata.
    const server = parseErrorBody(
      JSON.stringify({
        httpStatusCode: 500,
        errorCode: 'INTERNAL',
        message: 'failed',
        debugId: 'd2',
        errorDetails: [{ type: 'retry info', retryAfterSeconds: 30 }],
      }),
    );
    expect(retryAfterMsOf(server, {})).toBe(30_000);
    const general = parseErrorBody(
      JSON.stringify({
        httpStatusCode: 401,
        errorCode: 'UNAUTHORIZED',
        message: 'expired',
        debugId: 'd3',
        errorDetails: [{ type: 'metadata', source: 'authorization', metadata: { token: { reason: 'expired' } } }],
      }),
    );
    expect(general).toMatchObject({ message: 'expired', debugId: 'd3', issues: [] });
    expect(general.retryAfterSeconds).toBeUndefined();
    // Consumption analytics v2: a flow id beside the debug id, issues that may lack a description.
    const analytics = parseErrorBody(
      JSON.stringify({
        httpStatusCode: 400,
        errorCode: 'BAD_REQUEST',
        message: 'bad',
        debugId: 'd4',
        flowContextId: 'f4',
        errorDetails: [{ type: 'bad request', issues: [{ source: 'query.parameter', subject: 'limit' }] }],
      }),
    );
    expect(analytics).toMatchObject({
      debugId: 'd4',
      flowContextId: 'f4',
      issues: [{ source: 'query.parameter', subject: 'limit' }],
    });
    const error = createHttpError({
      operationId: 'consumptionAnalytics.listReportsV2',
      status: 400,
      headers: {},
      write: false,
      bodyText: JSON.stringify(analytics.raw),
    });
    expect(error.message).toContain("query.parameter 'limit'");
    expect(error.message).toContain('[debugId d4, flowContextId f4]');
  });

  it('tolerates the errorDetail spelling, extra fields, non-JSON and empty bodies', () => {
    expect(
      parseErrorBody(
        JSON.stringify({
          message: 'x',
          flowContextId: 'f1',
          status: 'FAILED',
          errorDetail: { type: 'retry info', retryAfterSeconds: 2 },
        }),
      ),
    ).toMatchObject({
      message: 'x',
      debugId: 'f1',
      retryAfterSeconds: 2,
    });
    expect(parseErrorBody('<html>gateway</html>')).toMatchObject({
      raw: '<html>gateway</html>',
      message: '<html>gateway</html>',
      details: [],
    });
    expect(parseErrorBody('')).toEqual({ raw: undefined, details: [], issues: [] });
    expect(parseErrorBody('[1,2]')).toEqual({ raw: [1, 2], details: [], issues: [] });
    expect(parseErrorBody('{"errorDetails": "not a list"}').details).toEqual([]);
  });
});

describe('retryAfterMsOf', () => {
  it('prefers the retry-info detail, then Retry-After, then the rate-limit reset headers', () => {
    const detail = parseErrorBody(JSON.stringify({ errorDetails: [{ type: 'retry info', retryAfterSeconds: 30 }] }));
    expect(retryAfterMsOf(detail, { 'ratelimit-reset': '5' })).toBe(30_000);
    expect(retryAfterMsOf(undefined, { 'ratelimit-reset': '5' })).toBe(5_000);
    expect(retryAfterMsOf(undefined, { 'x-ratelimit-reset': '2' })).toBe(2_000);
    expect(retryAfterMsOf(undefined, { 'x-ratelimit-reset': '1700000060' }, 1_700_000_000_000)).toBe(60_000);
    expect(retryAfterMsOf(undefined, { 'retry-after': '3' })).toBe(3_000);
    // A subscriptions 429: the request may be repeated in 15 s, the whole quota is back in 60 s.
    expect(retryAfterMsOf(undefined, { 'retry-after': '15', 'ratelimit-reset': '60' })).toBe(15_000);
    expect(retryAfterMsOf(undefined, {})).toBeUndefined();
  });
});

describe('isSafeToRetry', () => {
  it('repeats reads on transient failures and writes only where the server cannot have acted', () => {
    const read = (kind: Parameters<typeof isSafeToRetry>[0]) => isSafeToRetry(kind, false);
    const write = (kind: Parameters<typeof isSafeToRetry>[0]) => isSafeToRetry(kind, true);
    expect([408, 429, 500, 502, 503, 504].map((status) => read({ status }))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([400, 401, 403, 404, 409, 412, 422, 451].map((status) => read({ status }))).toEqual(Array(8).fill(false));
    expect([429, 503].map((status) => write({ status }))).toEqual([true, true]);
    expect([408, 500, 502, 504].map((status) => write({ status }))).toEqual([false, false, false, false]);
    expect([
      read({ connection: 'maybeSent' }),
      write({ connection: 'notSent' }),
      write({ connection: 'maybeSent' }),
      write({ timeout: true }),
    ]).toEqual([true, true, false, false]);
  });
});

describe('createHttpError', () => {
  const make = (status: number, body: unknown = { message: 'no' }) =>
    createHttpError({
      operationId: 'users.inviteUser',
      status,
      bodyText: JSON.stringify(body),
      headers: {},
      write: true,
      permission: { permission: 'User Account', level: 'edit' },
    });

  it('types the error by status with a stable code', () => {
    expect(make(403)).toBeInstanceOf(PermissionDeniedError);
    expect(make(403).message).toContain('It needs permission User Account (edit).');
    expect(make(409)).toBeInstanceOf(ConflictError);
    expect(make(412)).toBeInstanceOf(PreconditionFailedError);
    expect(make(422)).toBeInstanceOf(UnprocessableEntityError);
    expect(make(451)).toMatchObject({ code: 'UNAVAILABLE_FOR_LEGAL_REASONS', status: 451 });
    expect(make(451)).toBeInstanceOf(UnavailableForLegalReasonsError);
    expect(make(405)).toBeInstanceOf(UnexpectedStatusError);
    expect(make(405).code).toBe('HTTP_405');
    expect(make(504)).toMatchObject({ code: 'SERVER_ERROR', retryable: false });
    expect(make(503)).toMatchObject({ code: 'SERVER_ERROR', retryable: true });
  });

  it('keeps facts for JSON output in details', () => {
    expect(make(404, { errorCode: 'NOT_FOUND', debugId: 'd-2' }).details).toEqual({
      operationId: 'users.inviteUser',
      status: 404,
      errorCode: 'NOT_FOUND',
      debugId: 'd-2',
    });
  });
});

describe('asFinal', () => {
  it('marks a retryable error final and keeps its type, body and retry hint', () => {
    const error = createHttpError({
      operationId: 'auth.createToken',
      status: 429,
      bodyText: JSON.stringify({
        errorCode: 'TOO_MANY',
        message: 'slow down',
        errorDetails: [{ type: 'retry info', retryAfterSeconds: 9 }],
      }),
      headers: {},
      write: true,
    });
    expect(error).toMatchObject({ retryable: true, retryAfterMs: 9000 });
    const final = asFinal(error);
    expect(final).toBeInstanceOf(error.constructor);
    expect(final).toMatchObject({
      name: 'RateLimitedError',
      code: 'RATE_LIMITED',
      status: 429,
      retryable: false,
      retryAfterMs: 9000,
      body: { errorCode: 'TOO_MANY' },
    });
  });
});

describe('serverLimitPerMinute', () => {
  it('reads ratelimit-limit per minute, or over the window ratelimit-policy names', () => {
    expect(serverLimitPerMinute({ 'ratelimit-limit': '90' })).toBe(90);
    expect(serverLimitPerMinute({ 'x-ratelimit-limit': '40' })).toBe(40);
    expect(serverLimitPerMinute({ 'ratelimit-limit': '10', 'ratelimit-policy': '10;w=1' })).toBe(600);
    expect(serverLimitPerMinute({ 'ratelimit-limit': 'lots' })).toBeUndefined();
    expect(serverLimitPerMinute({})).toBeUndefined();
  });
});
