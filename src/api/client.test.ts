import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationDescriptor } from '../openapi/description.js';
import { loadPlatformDescription } from '../openapi/description.js';
import {
  BadRequestError,
  ConnectionError,
  InvalidInputError,
  RateLimitedError,
  ServerError,
  UnknownOperationError,
  UnknownRegionError,
} from './errors.js';
import { captureLogs, createMockPlatform, testUrls } from './testing.js';
import { createVirtualClock } from '../timers/index.js';

const json = { headers: { 'content-type': 'application/json' } };
const devicePath = '/devices/v1/devices/dev-1';
const addDevicesPath = (path: string): boolean =>
  path.startsWith('/devices/v1/devices') && !path.startsWith('/devices/v1/devices/');

describe('addresses', () => {
  it('sends regional calls to the region of the template and global calls to the base URL', async () => {
    const platform = createMockPlatform();
    platform
      .regional('us-west')
      .intercept({ path: '/private-cloud-business/v1beta1/systems/s1', method: 'GET' })
      .reply(200, { id: 's1' }, json);
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(200, { id: 'dev-1' }, json);
    const client = platform.client();
    const system = await client.call('privateCloud.getSystem', { id: 's1' }, { region: 'us-west' });
    expect(system).toMatchObject({ status: 200, body: { id: 's1' }, region: 'us-west' });
    expect((await client.devices.getDevice({ id: 'dev-1' })).body).toEqual({ id: 'dev-1' });
    platform.agent.assertNoPendingInterceptors();
  });

  it('names the region in x-fleetbook-region when one URL serves every region', async () => {
    const platform = createMockPlatform();
    const seen: string[] = [];
    platform.global.intercept({ path: '/consumption-analytics/v1/reports', method: 'GET' }).reply((request) => {
      seen.push((request.headers as Record<string, string>)['x-fleetbook-region'] ?? 'none');
      return { statusCode: 200, data: [], responseOptions: json };
    });
    await platform
      .client({ regionalUrl: testUrls.baseUrl, region: 'ap-northeast' })
      .call('consumptionAnalytics.listReports');
    expect(seen).toEqual(['ap-northeast']);
  });

  it('refuses an unknown region, listing the valid ones, before sending anything', async () => {
    const platform = createMockPlatform();
    const error = await platform
      .client()
      .call('consumptionAnalytics.listReports', {}, { region: 'eu-west' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnknownRegionError);
    expect((error as Error).message).toContain("not served in region 'eu-west'");
    expect((error as Error).message).toContain('us-west, ap-northeast, eu-central');
    expect(platform.tokenRequests()).toBe(0);
  });

  it('names close matches of an unknown operation id and of an unknown input', async () => {
    const client = createMockPlatform().client();
    const unknown = await client.invoke('privateCloud.getSytem', { id: 'x' }).catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(UnknownOperationError);
    expect((unknown as Error).message).toContain("Did you mean 'privateCloud.getSystem'");
    const typo = await client
      .invoke('privateCloud.listSystems', { fitler: "name eq 'a'" })
      .catch((caught: unknown) => caught);
    expect(typo).toBeInstanceOf(InvalidInputError);
    expect((typo as Error).message).toContain("Did you mean 'filter'");
    await expect(client.invoke('privateCloud.getSystem', {})).rejects.toThrow("needs 'id'");
    await expect(client.invoke('auth.createToken', {})).rejects.toThrow('not callable');
  });

  it('writes query parameters, repeats array values and sends the body with its content type', async () => {
    const platform = createMockPlatform();
    let sent: { path: string; body: string; type: string } | undefined;
    platform.global
      .intercept({ path: (path) => path.startsWith('/devices/v1/devices?'), method: 'PATCH' })
      .reply((request) => {
        sent = {
          path: request.path,
          body: String(request.body),
          type: (request.headers as Record<string, string>)['content-type'] ?? '',
        };
        return {
          statusCode: 202,
          data: { code: 202, status: 'INITIALIZED', transactionId: 't1' },
          responseOptions: { headers: { ...json.headers, location: '/devices/v1/async-operations/op-1' } },
        };
      });
    await platform
      .client()
      .call('devices.updateDevices', { id: ['a b', 'c'], body: { application: { id: 'app' }, region: 'eu' } });
    expect(sent).toEqual({
      path: '/devices/v1/devices?id=a%20b&id=c',
      body: JSON.stringify({ application: { id: 'app' }, region: 'eu' }),
      type: 'application/merge-patch+json',
    });
  });
});

describe('retries', () => {
  it('retries a GET after 5xx answers and returns the success', async () => {
    const platform = createMockPlatform();
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(502, 'bad gateway').times(2);
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(200, { id: 'dev-1' }, json);
    const logs = captureLogs();
    const result = await platform.client({ logger: logs.logger }).call('devices.getDevice', { id: 'dev-1' });
    expect(result.body).toEqual({ id: 'dev-1' });
    const retries = logs.lines().filter((line) => line.msg === 'platform call failed; retrying');
    expect(retries.map((line) => [line.operationId, line.attempt, line.httpStatus])).toEqual([
      ['devices.getDevice', 1, 502],
      ['devices.getDevice', 2, 502],
    ]);
    expect(
      logs
        .lines()
        .filter((line) => line.msg === 'platform answered')
        .every((line) => typeof line.durationMs === 'number'),
    ).toBe(true);
  });

  it('does not repeat a POST after a 500: the server may have acted', async () => {
    const platform = createMockPlatform();
    platform.global.intercept({ path: addDevicesPath, method: 'POST' }).reply(500, {
      httpStatusCode: 500,
      errorCode: 'INTERNAL',
      message: 'boom',
      errorDetails: [{ type: 'retry info', retryAfterSeconds: 30 }],
    });
    const error = await platform
      .client()
      .call('devices.addDevices', { body: { network: [], compute: [], storage: [] } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ code: 'SERVER_ERROR', status: 500, retryable: false, retryAfterMs: 30_000 });
    platform.agent.assertNoPendingInterceptors();
  });

  it('repeats a POST after a 503 and a 429', async () => {
    const platform = createMockPlatform();
    platform.global.intercept({ path: addDevicesPath, method: 'POST' }).reply(503, 'unavailable');
    platform.global
      .intercept({ path: addDevicesPath, method: 'POST' })
      .reply(429, { errorCode: 'TOO_MANY', message: 'slow down' }, { headers: { 'ratelimit-reset': '0' } });
    platform.global
      .intercept({ path: addDevicesPath, method: 'POST' })
      .reply(
        202,
        { code: 202, status: 'INITIALIZED' },
        { headers: { ...json.headers, location: '/devices/v1/async-operations/op-1' } },
      );
    const result = await platform
      .client()
      .call('devices.addDevices', { body: { network: [], compute: [], storage: [] } });
    expect(result.status).toBe(202);
    expect(result.headers.location).toBe('/devices/v1/async-operations/op-1');
  });

  it('repeats a write whose connection was refused, never one whose connection broke after sending', async () => {
    const platform = createMockPlatform();
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    platform.global.intercept({ path: addDevicesPath, method: 'POST' }).replyWithError(refused);
    platform.global.intercept({ path: addDevicesPath, method: 'POST' }).reply(202, {}, json);
    const client = platform.client();
    const body = { network: [], compute: [], storage: [] };
    expect((await client.call('devices.addDevices', { body })).status).toBe(202);
    platform.global.intercept({ path: addDevicesPath, method: 'POST' }).replyWithError(reset);
    const error = await client.call('devices.addDevices', { body }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'CONNECTION_FAILED', retryable: false });
  });

  it('stops at a 400 with the platform message and issues', async () => {
    const platform = createMockPlatform();
    platform
      .regional('eu-central')
      .intercept({ path: (path) => path.startsWith('/private-cloud-business/v1beta1/systems?'), method: 'GET' })
      .reply(400, {
        httpStatusCode: 400,
        errorCode: 'INVALID_LIMIT',
        message: 'limit out of range',
        debugId: 'dbg-1',
        errorDetails: [
          {
            type: 'bad request',
            issues: [{ source: 'query.parameter', subject: 'limit', description: 'must be at most 100' }],
          },
        ],
      });
    const error = await platform
      .client()
      .call('privateCloud.listSystems', { limit: 500 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toBe(
      "privateCloud.listSystems failed with HTTP 400 INVALID_LIMIT: limit out of range (query.parameter 'limit': must be at most 100). Fix the input named above and run again. [debugId dbg-1]",
    );
  });
});

describe('rate limits', () => {
  afterEach(() => void vi.useRealTimers());

  it('pauses the group after a 429 until the reset the server gave, then goes on', async () => {
    const platform = createMockPlatform();
    // Virtual time: the reset's second passes at once, and exactly.
    const clock = createVirtualClock(1_000_000);
    const startedAt = clock.now();
    const times: number[] = [];
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(() => {
      times.push(clock.now());
      return {
        statusCode: 429,
        data: { message: 'rate limited' },
        responseOptions: { headers: { 'ratelimit-reset': '1', 'ratelimit-remaining': '0' } },
      };
    });
    platform.global
      .intercept({ path: (path) => path.startsWith('/devices/v1/devices/'), method: 'GET' })
      .reply(() => {
        times.push(clock.now());
        return { statusCode: 200, data: { id: 'x' }, responseOptions: json };
      })
      .times(2);
    let second: Promise<unknown> | undefined;
    // Sent the moment the 429 was handled (the group is paused then): it must wait for the reset too.
    const { logger } = captureLogs((line) => {
      if (line.msg === 'platform call failed; retrying' && line.httpStatus === 429 && !second)
        second = client.call('devices.getDevice', { id: 'dev-2' });
    });
    const client = platform.client({ clock, logger });
    await client.call('devices.getDevice', { id: 'dev-1' });
    await second;
    expect(second).toBeDefined();
    expect(times).toHaveLength(3);
    expect(times[0]).toBe(startedAt);
    expect(times[1]! - startedAt).toBeGreaterThanOrEqual(1000);
    expect(times[2]! - startedAt).toBeGreaterThanOrEqual(1000);
  });

  it('paces the group with the smallest published limit (subscriptions.add, 4 a minute) at that limit by default', async () => {
    const published = loadPlatformDescription().operations.flatMap((operation) =>
      operation.rateLimit?.perMinute ? [operation.rateLimit] : [],
    );
    expect(Math.min(...published.map((limit) => limit.perMinute ?? Infinity))).toBe(4);
    expect(published.filter((limit) => limit.perMinute === 4).map((limit) => limit.group)).toEqual([
      'subscriptions.add',
    ]);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const platform = createMockPlatform();
    let sent = 0;
    platform.global
      .intercept({ path: '/subscriptions/v1/subscriptions', method: 'POST' })
      .reply(() => {
        sent += 1;
        return {
          statusCode: 202,
          data: { code: 202, status: 'INITIALIZED' },
          responseOptions: { headers: { ...json.headers, location: '/subscriptions/v1/async-operations/op-1' } },
        };
      })
      .persist();
    // The published limits, not the unlimited ones the other tests of this file use.
    const client = platform.client({ rateLimits: {} });
    const body = { subscriptions: [{ key: 'KX7Q2M9RTV4L' }] };
    const calls = Array.from({ length: 9 }, () => client.call('subscriptions.addSubscriptions', { body }));
    await vi.advanceTimersByTimeAsync(59_000);
    expect(sent).toBe(4);
    await vi.advanceTimersByTimeAsync(2000);
    expect(sent).toBe(5);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toBe(9);
    await Promise.all(calls);
  });

  it('slows a group down after a 429 that reports its quota spent, not after a 429 without quota headers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    /** Requests of devices.getDevice in the first 20.5 s when the first is answered 429 with `headers`. */
    const sentAfter429 = async (headers: Record<string, string>): Promise<number> => {
      const platform = createMockPlatform();
      let sent = 0;
      platform.global
        .intercept({ path: (path) => path.startsWith('/devices/v1/devices/'), method: 'GET' })
        .reply<Record<string, unknown>>(() => {
          sent += 1;
          return sent === 1
            ? {
                statusCode: 429,
                data: {
                  errorCode: 'TOO_MANY_REQUESTS',
                  message: 'slow down',
                  errorDetails: [{ type: 'retry info', retryAfterSeconds: 1 }],
                },
                responseOptions: { headers: { ...json.headers, ...headers } },
              }
            : { statusCode: 200, data: { id: 'x' }, responseOptions: json };
        })
        .persist();
      // One a second, one at a time: the published 40 a minute made round.
      const client = platform.client({ rateLimits: { perMinute: { 'devices.get': 60 } } });
      const calls = Array.from({ length: 30 }, (_, index) => client.call('devices.getDevice', { id: `d${index}` }));
      await vi.advanceTimersByTimeAsync(20_500);
      const count = sent;
      await vi.advanceTimersByTimeAsync(120_000);
      await Promise.all(calls);
      return count;
    };
    // Paused for the 1 s hint, then one every 2 s (30 a minute) instead of one a second.
    expect(await sentAfter429({ 'ratelimit-limit': '60', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' })).toBe(
      11,
    );
    expect(await sentAfter429({})).toBe(21);
  });

  it('keeps a group within its per-minute cap', async () => {
    const platform = createMockPlatform();
    platform.global
      .intercept({ path: (path) => path.startsWith('/devices/v1/devices/'), method: 'GET' })
      .reply(200, { id: 'x' }, json)
      .persist();
    // The client's time is virtual: the half-minute waits pass at once, and each answer is seen at its exact time.
    const clock = createVirtualClock(0);
    const client = platform.client({ rateLimits: { perMinute: { 'devices.get': 2 } }, clock });
    const answeredAt = await Promise.all(
      Array.from({ length: 3 }, (_, index) =>
        client.call('devices.getDevice', { id: `d${index}` }).then(() => clock.now()),
      ),
    );
    // Two a minute means one per half minute.
    expect(answeredAt).toEqual([0, 30_000, 60_000]);
  });

  it('reads a 429 without hint as retryable with no delay of its own', async () => {
    const platform = createMockPlatform();
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(429, '').times(5);
    const error = await platform
      .client({ retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 } })
      .call('devices.getDevice', { id: 'dev-1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: undefined });
  });
});

describe('catalogue', () => {
  const description = loadPlatformDescription();
  const callable = description.operations.filter((operation) => operation.base !== 'auth');

  function minimalInput(operation: OperationDescriptor): Record<string, unknown> {
    const input: Record<string, unknown> = {};
    for (const param of operation.pathParams) input[param.name] = `${param.name}-1`;
    for (const param of operation.queryParams)
      if (param.required) input[param.name] = param.schema.type === 'array' ? ['v'] : 'v';
    if (operation.requestBody?.required) input.body = {};
    return input;
  }

  it('calls every operation of the description with its method and path, and offers it as an area method', async () => {
    const platform = createMockPlatform();
    const client = platform.client();
    const seen: string[] = [];
    for (const origin of [
      testUrls.baseUrl,
      ...['us-west', 'eu-west', 'eu-central', 'ap-northeast'].map((region) =>
        testUrls.regionalUrl.replace('{region}', region),
      ),
    ]) {
      platform.agent
        .get(origin)
        .intercept({ path: () => true, method: () => true })
        .reply((request) => {
          seen.push(`${request.method} ${origin}${request.path.split('?')[0] ?? ''}`);
          return { statusCode: 200, data: {}, responseOptions: json };
        })
        .persist();
    }
    for (const operation of callable) {
      const areaMethods = (client as unknown as Record<string, Record<string, unknown>>)[operation.area];
      expect(typeof areaMethods?.[operation.id.slice(operation.area.length + 1)], operation.id).toBe('function');
      const region = operation.regions?.[0];
      await client.invoke(operation.id, minimalInput(operation), { region });
      const origin =
        operation.base === 'regional' ? testUrls.regionalUrl.replace('{region}', region ?? '') : testUrls.baseUrl;
      const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => `${name}-1`);
      expect(seen.at(-1), operation.id).toBe(`${operation.method} ${origin}${path}`);
    }
    expect(seen).toHaveLength(callable.length);
  });
});

describe('a rate budget shared with other processes', () => {
  /** A budget recording what the client asks of it; `waitMs` is what each reservation answers. */
  function recordingBudget(waitMs = 0) {
    const calls: Array<[string, ...unknown[]]> = [];
    return {
      calls,
      budget: {
        take: async (group: string, perMinute: number, burst: number) => {
          calls.push(['take', group, perMinute, burst]);
          return waitMs;
        },
        push: async (group: string, ms: number) => {
          calls.push(['push', group, ms]);
        },
      },
    };
  }

  it('reserves each attempt in the shared bucket at the group pace and waits what it answers', async () => {
    const platform = createMockPlatform();
    let sentAt = 0;
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(() => {
      sentAt = Date.now();
      return { statusCode: 200, data: { id: 'dev-1' }, responseOptions: json };
    });
    const { calls, budget } = recordingBudget(300);
    const startedAt = Date.now();
    await platform
      .client({ sharedRateBudget: budget, rateLimits: { perMinute: { 'devices.get': 120 } } })
      .call('devices.getDevice', { id: 'dev-1' });
    expect(calls).toEqual([['take', 'devices.get', 120, 2]]);
    expect(sentAt - startedAt).toBeGreaterThanOrEqual(290);
  });

  it('pushes the group for every process on a 429, and on a success that spent the quota', async () => {
    const platform = createMockPlatform();
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(() => ({
      statusCode: 429,
      data: { message: 'rate limited' },
      responseOptions: { headers: { 'ratelimit-reset': '2', 'ratelimit-remaining': '0' } },
    }));
    platform.global.intercept({ path: devicePath, method: 'GET' }).reply(() => ({
      statusCode: 200,
      data: { id: 'dev-1' },
      responseOptions: { headers: { ...json.headers, 'ratelimit-reset': '5', 'ratelimit-remaining': '0' } },
    }));
    const { calls, budget } = recordingBudget();
    await platform.client({ sharedRateBudget: budget }).call('devices.getDevice', { id: 'dev-1' });
    const pushes = calls.filter(([kind]) => kind === 'push');
    expect(pushes.map(([, group]) => group)).toEqual(['devices.get', 'devices.get']);
    expect(pushes.map(([, , ms]) => ms)).toEqual([2000, 5000]);
  });
});
