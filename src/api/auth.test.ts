import { afterEach, describe, expect, it, vi } from 'vitest';
import { renewalTime } from './auth.js';
import { secretSpellings } from '../logging/index.js';
import { AuthenticationError, RateLimitedError, ServerError } from './errors.js';
import { captureLogs, createMockPlatform, serialiseError, testCredentials } from './testing.js';

const systemPath = '/private-cloud-business/v1beta1/systems/sys-1';

/** Answers every GET of the system with 200 and records the Authorization header of each. */
function recordAuthorization(platform: ReturnType<typeof createMockPlatform>, answerDelayMs = 0): string[] {
  const seen: string[] = [];
  const interceptor = platform
    .regional('eu-central')
    .intercept({ path: systemPath, method: 'GET' })
    .reply((request) => {
      seen.push(String((request.headers as Record<string, string>).authorization));
      return {
        statusCode: 200,
        data: { id: 'sys-1' },
        responseOptions: { headers: { 'content-type': 'application/json' } },
      };
    });
  if (answerDelayMs > 0) interceptor.delay(answerDelayMs);
  interceptor.persist();
  return seen;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('renewalTime', () => {
  it('renews 5 minutes ahead of a long token and a third of the lifetime ahead of a short one', () => {
    expect(renewalTime(0, 7199)).toBe(7199_000 - 300_000);
    expect(renewalTime(0, 900)).toBe(600_000);
    expect(renewalTime(1_000, 60)).toBe(1_000 + 40_000);
    expect(renewalTime(0, undefined)).toBe(Infinity);
  });
});

describe('token cache', () => {
  it('reuses the token until its renewal time, then fetches a new one ahead of expiry', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const platform = createMockPlatform(900);
    const seen = recordAuthorization(platform);
    const client = platform.client();
    await client.call('privateCloud.getSystem', { id: 'sys-1' });
    vi.setSystemTime(new Date('2026-01-01T00:09:59Z'));
    await client.call('privateCloud.getSystem', { id: 'sys-1' });
    expect(platform.tokenRequests()).toBe(1);
    // 15-minute token: renewed 5 minutes before it expires, while it is still valid.
    vi.setSystemTime(new Date('2026-01-01T00:10:01Z'));
    await client.call('privateCloud.getSystem', { id: 'sys-1' });
    expect(platform.tokenRequests()).toBe(2);
    expect(seen).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-2']);
  });

  it('renews the token once after a 401 and repeats the call', async () => {
    const platform = createMockPlatform();
    const pool = platform.regional('eu-central');
    pool
      .intercept({ path: systemPath, method: 'GET' })
      .reply(401, { httpStatusCode: 401, errorCode: 'TOKEN_REVOKED', message: 'token revoked' });
    const seen = recordAuthorization(platform);
    const result = await platform.client().call('privateCloud.getSystem', { id: 'sys-1' });
    expect(result.status).toBe(200);
    expect(platform.tokenRequests()).toBe(2);
    expect(seen).toEqual(['Bearer token-2']);
  });

  it('gives up with an AuthenticationError when the renewed token is refused too', async () => {
    const platform = createMockPlatform();
    platform
      .regional('eu-central')
      .intercept({ path: systemPath, method: 'GET' })
      .reply(401, { message: 'invalid token' })
      .times(2);
    const error = await platform
      .client()
      .call('privateCloud.getSystem', { id: 'sys-1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({
      code: 'UNAUTHORIZED',
      status: 401,
      retryable: false,
      operationId: 'privateCloud.getSystem',
    });
    expect(platform.tokenRequests()).toBe(2);
    platform.agent.assertNoPendingInterceptors();
  });

  it('fetches one token for 50 concurrent calls', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const platform = createMockPlatform(7199, { tokenDelayMs: 1000 });
    // The mock records a request when it arrives and answers a second later.
    const seen = recordAuthorization(platform, 1000);
    // 64 slots, so all 50 calls are past the concurrency cap and wait on the token together
    // (with the default 16, 34 of them would only ask for it once the token is cached).
    const client = platform.client({ maxConcurrency: 64 });
    const calls = Promise.all(Array.from({ length: 50 }, () => client.call('privateCloud.getSystem', { id: 'sys-1' })));
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual([]);
    expect(platform.tokenRequests()).toBe(1);
    // The token arrives: all 50 waiters send at once, before any answer came back.
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toHaveLength(50);
    await vi.advanceTimersByTimeAsync(1000);
    await calls;
    expect(platform.tokenRequests()).toBe(1);
    expect(new Set(seen)).toEqual(new Set(['Bearer token-1']));
    expect(seen).toHaveLength(50);
  });

  it('retries the token endpoint after a 503 and a 429', async () => {
    const platform = createMockPlatform();
    recordAuthorization(platform);
    platform.failTokenRequests(503, 1);
    await platform.client().call('privateCloud.getSystem', { id: 'sys-1' });
    expect(platform.tokenRequests()).toBe(2);
    platform.failTokenRequests(429, 2);
    const other = platform.client();
    await other.call('privateCloud.getSystem', { id: 'sys-1' });
    expect(platform.tokenRequests()).toBe(5);
  });

  it('stops after the retry budget when the token endpoint keeps failing', async () => {
    const platform = createMockPlatform();
    platform.failTokenRequests(500, 10);
    const error = await platform
      .client({ retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2 } })
      .call('privateCloud.getSystem', { id: 'sys-1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ operationId: 'auth.createToken', status: 500 });
    expect(platform.tokenRequests()).toBe(3);
  });

  it("keeps the server's retry hint on a final 429 of the token endpoint", async () => {
    const platform = createMockPlatform();
    platform.failTokenRequests(429, 10, 42);
    const error = await platform
      .client({ retry: { maxAttempts: 1 } })
      .call('privateCloud.getSystem', { id: 'sys-1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({
      operationId: 'auth.createToken',
      status: 429,
      code: 'RATE_LIMITED',
      retryable: false,
      retryAfterMs: 42_000,
    });
    expect(platform.tokenRequests()).toBe(1);
  });
});

describe('secrets', () => {
  it('never puts the client secret or a token into an error or a log line', async () => {
    const platform = createMockPlatform();
    const logs = captureLogs();
    const client = platform.client({
      logger: logs.logger,
      retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 },
    });
    const pool = platform.regional('eu-central');
    pool.intercept({ path: systemPath, method: 'GET' }).reply(401, { message: 'expired' }).times(2);
    pool
      .intercept({ path: '/private-cloud-business/v1beta1/systems/sys-2', method: 'GET' })
      .reply(500, 'upstream broke')
      .times(2);
    const errors = [
      await client.call('privateCloud.getSystem', { id: 'sys-1' }).catch((caught: unknown) => caught),
      await client.call('privateCloud.getSystem', { id: 'sys-2' }).catch((caught: unknown) => caught),
    ];
    // The token endpoint refuses the credentials and echoes the form back.
    const refusing = createMockPlatform();
    const badAuth = refusing.agent.get('https://auth-echo.test');
    badAuth
      .intercept({ path: '/as/token.oauth2', method: 'POST' })
      .reply((request) => ({ statusCode: 401, data: { message: `bad credentials in ${String(request.body)}` } }));
    const refused = await refusing
      .client({ authUrl: 'https://auth-echo.test', logger: logs.logger })
      .call('privateCloud.getSystem', { id: 'sys-1' })
      .catch((caught: unknown) => caught);
    errors.push(refused);
    expect(refused).toMatchObject({ code: 'UNAUTHORIZED', operationId: 'auth.createToken' });
    expect((refused as Error).message).toContain(testCredentials.clientId);

    const everything = [...errors.map(serialiseError), logs.text()].join('\n');
    expect(logs.lines().length).toBeGreaterThan(3);
    expect(everything).not.toContain(testCredentials.clientSecret);
    for (const spelling of secretSpellings(testCredentials.clientSecret)) expect(everything).not.toContain(spelling);
    for (const token of platform.issuedTokens()) expect(everything).not.toContain(token);
  });
});
