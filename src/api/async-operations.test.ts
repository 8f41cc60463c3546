import { describe, expect, it } from 'vitest';
import { createVirtualClock, type Clock } from '../timers/index.js';
import { terminalOutcome } from './async-operations.js';
import { UnfollowableOperationError } from './errors.js';
import { createMockPlatform } from './testing.js';

const json = { headers: { 'content-type': 'application/json' } };
const fast = { minPollMs: 1, maxPollMs: 5 };

/** Serves `records` in order at `path` of `pool`, the last one for every later poll; returns the poll times. */
function serve(
  pool: ReturnType<ReturnType<typeof createMockPlatform>['regional']>,
  path: string,
  records: Array<Record<string, unknown>>,
): number[] {
  const times: number[] = [];
  pool
    .intercept({ path, method: 'GET' })
    .reply(() => {
      times.push(Date.now());
      const record = records[Math.min(times.length, records.length) - 1];
      return { statusCode: 200, data: record ?? {}, responseOptions: json };
    })
    .persist();
  return times;
}

describe('terminalOutcome', () => {
  it('reads every spelling of the terminal states, case-insensitively', () => {
    expect(
      ['SUCCEEDED', 'succeeded', 'FAILED', 'TIMEDOUT', 'TIMEOUT', 'Timed_Out', 'CANCELLED', 'canceled'].map(
        terminalOutcome,
      ),
    ).toEqual(['succeeded', 'succeeded', 'failed', 'timedOut', 'timedOut', 'timedOut', 'cancelled', 'cancelled']);
    expect(['INITIALIZED', 'RUNNING', 'PAUSED', 'SOMETHING_NEW', undefined].map(terminalOutcome)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('data-services operations (state)', () => {
  const location = '/data-services/v1beta1/async-operations/op-1';
  const start = (platform: ReturnType<typeof createMockPlatform>) => {
    platform
      .regional('eu-west')
      .intercept({ path: '/private-cloud-business/v1beta1/systems/sys-1/software-prechecks', method: 'POST' })
      .reply(202, '', { headers: { location } });
    return platform
      .client()
      .call(
        'privateCloud.runSoftwarePrechecks',
        { id: 'sys-1', body: { catalogVersion: '2.4.0' } },
        { region: 'eu-west' },
      );
  };

  it('follows the Location on the regional address of the call to success, reporting progress', async () => {
    const platform = createMockPlatform();
    const times = serve(platform.regional('eu-west'), location, [
      { id: 'op-1', state: 'INITIALIZED', suggestedPollingIntervalSeconds: 30 },
      { id: 'op-1', state: 'RUNNING', progressPercent: 40, suggestedPollingIntervalSeconds: 30 },
      { id: 'op-1', state: 'RUNNING', progressPercent: 40 },
      { id: 'op-1', state: 'SUCCEEDED', progressPercent: 100 },
    ]);
    const accepted = await start(platform);
    const progress: number[] = [];
    const result = await platform
      .client()
      .waitForOperation(accepted, { ...fast, onProgress: (percent) => progress.push(percent) });
    expect(result).toMatchObject({
      outcome: 'succeeded',
      flavour: 'dataServices',
      location,
      polls: 4,
      operation: { state: 'SUCCEEDED' },
    });
    expect(result.error).toBeUndefined();
    expect(progress).toEqual([40, 100]);
    expect(times).toHaveLength(4);
  });

  it('ends failed with the operation error', async () => {
    const platform = createMockPlatform();
    serve(platform.regional('eu-west'), location, [
      { state: 'RUNNING' },
      {
        state: 'FAILED',
        error: { error: 'cluster c1 failed the storage check', errorCode: 'PRECHECK_FAILED', traceId: 't-1' },
      },
    ]);
    const result = await platform.client().waitForOperation(await start(platform), fast);
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatchObject({ message: 'cluster c1 failed the storage check', code: 'PRECHECK_FAILED' });
  });

  it('ends timedOut when the platform says TIMEOUT', async () => {
    const platform = createMockPlatform();
    serve(platform.regional('eu-west'), location, [{ state: 'TIMEOUT' }]);
    const result = await platform.client().waitForOperation(await start(platform), fast);
    expect(result).toMatchObject({ outcome: 'timedOut', error: { message: 'the platform timed the operation out' } });
  });
});

describe('device and subscription operations (status)', () => {
  it('follows a device operation to success', async () => {
    const platform = createMockPlatform();
    serve(platform.global, '/devices/v1/async-operations/d-1', [
      { status: 'running', progressPercent: 50 },
      { status: 'succeeded', result: 'SUCCEEDED' },
    ]);
    const result = await platform.client().waitForOperation('/devices/v1/async-operations/d-1', fast);
    expect(result).toMatchObject({ outcome: 'succeeded', flavour: 'devices', polls: 2 });
  });

  it('reports the serials of a failed device addition', async () => {
    const platform = createMockPlatform();
    serve(platform.global, '/devices/v1/async-operations/d-2', [
      { status: 'FAILED', resultType: 'DeviceAddResult', result: { failedDevicesSerial: ['SN1', 'SN2'] } },
    ]);
    const result = await platform.client().waitForOperation('https://api.test/devices/v1/async-operations/d-2', fast);
    expect(result).toMatchObject({ outcome: 'failed', error: { message: 'devices failed: SN1, SN2' } });
  });

  it("times out a subscription operation at the record's timeoutMinutes", async () => {
    const platform = createMockPlatform();
    const times = serve(platform.global, '/subscriptions/v1/async-operations/s-1', [
      { status: 'RUNNING', timeoutMinutes: 0.001 },
    ]);
    const result = await platform
      .client()
      .waitForOperation('/subscriptions/v1/async-operations/s-1', { minPollMs: 10, maxPollMs: 10 });
    expect(result).toMatchObject({
      outcome: 'timedOut',
      flavour: 'subscriptions',
      error: { code: 'WAIT_DEADLINE_EXCEEDED' },
    });
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect(times.length).toBeLessThanOrEqual(10);
  });

  it("times out at the caller's deadline and cancels on CANCELLED", async () => {
    const platform = createMockPlatform();
    serve(platform.global, '/subscriptions/v1/async-operations/s-2', [{ status: 'PAUSED' }]);
    serve(platform.global, '/subscriptions/v1/async-operations/s-3', [{ status: 'CANCELLED' }]);
    const clock = createVirtualClock(0);
    const client = platform.client({ clock });
    const timedOut = await client.waitForOperation('/subscriptions/v1/async-operations/s-2', {
      timeoutMs: 50,
      minPollMs: 10,
      maxPollMs: 10,
    });
    expect(timedOut.outcome).toBe('timedOut');
    // Given up at the deadline (virtual time), not a poll interval later.
    expect(clock.now()).toBe(50);
    expect((await client.waitForOperation('/subscriptions/v1/async-operations/s-3', fast)).outcome).toBe('cancelled');
  });
});

describe('reporting operations (state)', () => {
  it('follows an export by the id of its 202 body to the report link', async () => {
    const platform = createMockPlatform();
    platform.global
      .intercept({ path: '/reporting/v1/report-exports', method: 'POST' })
      .reply(202, { id: 'exp-1', status: 'ACCEPTED' }, json);
    serve(platform.global, '/reporting/v1/async-operations/exp-1', [
      { state: 'RUNNING' },
      { state: 'SUCCEEDED', results: [{ name: 'report.csv', resourceUri: 'https://files.test/report.csv' }] },
    ]);
    const client = platform.client();
    const accepted = await client.invoke('reporting.createReportExport', {
      body: { name: 'nightly', kind: 'REPORT.EXPORTS' },
    });
    const result = await client.waitForOperation(accepted, fast);
    expect(result).toMatchObject({
      outcome: 'succeeded',
      flavour: 'reporting',
      location: '/reporting/v1/async-operations/exp-1',
    });
    expect(result.operation.results?.[0]?.resourceUri).toBe('https://files.test/report.csv');
  });

  it('ends failed with the reporting error shape', async () => {
    const platform = createMockPlatform();
    serve(platform.global, '/reporting/v1alpha1/async-operations/r-9', [
      {
        state: 'FAILED',
        error: { debugId: 'd-9', message: 'no data for the filter', timestamp: '2026-01-01T00:00:00Z' },
      },
    ]);
    const result = await platform.client().waitForOperation('/reporting/v1alpha1/async-operations/r-9', fast);
    expect(result).toMatchObject({
      outcome: 'failed',
      flavour: 'reporting',
      error: { message: 'no data for the filter' },
    });
  });

  it('ends timedOut when the platform says TIMEDOUT, with the reporting error shape', async () => {
    const platform = createMockPlatform();
    serve(platform.global, '/reporting/v1/async-operations/r-10', [
      { state: 'RUNNING' },
      {
        state: 'TIMEDOUT',
        error: {
          debugId: 'd-10',
          message: 'the export took longer than 60 minutes',
          timestamp: '2026-01-01T01:00:00Z',
        },
      },
    ]);
    const result = await platform.client().waitForOperation('/reporting/v1/async-operations/r-10', fast);
    expect(result).toMatchObject({
      outcome: 'timedOut',
      flavour: 'reporting',
      polls: 2,
      error: { message: 'the export took longer than 60 minutes', details: { debugId: 'd-10' } },
    });
  });

  it("ends timedOut at the caller's deadline when an export never finishes", async () => {
    const platform = createMockPlatform();
    platform.global
      .intercept({ path: '/reporting/v1/report-exports', method: 'POST' })
      .reply(202, { id: 'exp-2', status: 'ACCEPTED' }, json);
    const polls = serve(platform.global, '/reporting/v1/async-operations/exp-2', [
      { state: 'RUNNING', suggestedPollingIntervalSeconds: 30 },
    ]);
    const client = platform.client();
    const accepted = await client.invoke('reporting.createReportExport', {
      body: { name: 'nightly', kind: 'REPORT.EXPORTS' },
    });
    const result = await client.waitForOperation(accepted, { timeoutMs: 40, minPollMs: 10, maxPollMs: 10 });
    expect(result).toMatchObject({
      outcome: 'timedOut',
      flavour: 'reporting',
      location: '/reporting/v1/async-operations/exp-2',
      operation: { state: 'RUNNING' },
      error: { code: 'WAIT_DEADLINE_EXCEEDED' },
    });
    expect(result.error?.message).toContain('the operation may still be running on the platform');
    expect(polls.length).toBeGreaterThanOrEqual(2);
  });
});

describe('waiting', () => {
  it('honours the suggested interval within the clamp', async () => {
    const platform = createMockPlatform();
    const times = serve(platform.global, '/devices/v1/async-operations/d-3', [
      { status: 'RUNNING', suggestedPollingIntervalSeconds: 0.001 },
      { status: 'RUNNING', suggestedPollingIntervalSeconds: 30 },
      { status: 'SUCCEEDED' },
    ]);
    await platform.client().waitForOperation('/devices/v1/async-operations/d-3', { minPollMs: 60, maxPollMs: 120 });
    const [first = 0, second = 0, third = 0] = times;
    expect(second - first).toBeGreaterThanOrEqual(55);
    expect(second - first).toBeLessThan(110);
    expect(third - second).toBeGreaterThanOrEqual(115);
  });

  it('stops waiting when the signal aborts, with its reason', async () => {
    const platform = createMockPlatform();
    const times = serve(platform.global, '/devices/v1/async-operations/d-4', [
      { status: 'RUNNING', suggestedPollingIntervalSeconds: 30 },
    ]);
    const controller = new AbortController();
    const reason = new Error('run cancelled by the operator');
    // Aborted the moment the wait for the next poll (10 s) begins, in virtual time.
    const virtual = createVirtualClock(0);
    const clock: Clock = {
      now: virtual.now,
      setTimer(callback, delayMs) {
        const timer = virtual.setTimer(callback, delayMs);
        if (delayMs === 10_000) queueMicrotask(() => controller.abort(reason));
        return timer;
      },
    };
    await expect(
      platform
        .client({ clock })
        .waitForOperation('/devices/v1/async-operations/d-4', { signal: controller.signal, maxPollMs: 10_000 }),
    ).rejects.toBe(reason);
    // Stopped at once: the 10 s wait never ran out, and no second poll was sent.
    expect(virtual.now()).toBeLessThan(10_000);
    expect(times).toHaveLength(1);
  });

  describe('paced by progress', () => {
    const path = '/devices/v1/async-operations/d-5';
    const MINUTE = 60_000;
    /** An operation of `durationMs` from virtual time 0, its progress linear; returns the poll times. */
    const linearOperation = (platform: ReturnType<typeof createMockPlatform>, clock: Clock, durationMs: number) => {
      const times: number[] = [];
      platform.global
        .intercept({ path, method: 'GET' })
        .reply(() => {
          const now = clock.now();
          times.push(now);
          const data =
            now >= durationMs
              ? { status: 'SUCCEEDED', progressPercent: 100 }
              : {
                  status: 'RUNNING',
                  progressPercent: Math.floor((now / durationMs) * 100),
                  suggestedPollingIntervalSeconds: 30,
                };
          return { statusCode: 200, data, responseOptions: json };
        })
        .persist();
      return times;
    };

    it('asks about a 45-minute operation a dozen times instead of ninety, and notices its end as soon', async () => {
      const platform = createMockPlatform();
      const clock = createVirtualClock(0);
      const times = linearOperation(platform, clock, 45 * MINUTE);
      const result = await platform.client({ clock }).waitForOperation(path, { maxPollMs: 60 * MINUTE });
      expect(result).toMatchObject({ outcome: 'succeeded' });
      expect(times.length).toBeLessThanOrEqual(12);
      // Far from the end it sleeps longer than the suggested 30 s; near it, the suggested interval
      // (a percent is 27 s: the pace cannot say the end more closely than the interval).
      const gaps = times.slice(1).map((at, index) => at - times[index]!);
      expect(Math.max(...gaps)).toBeGreaterThan(10 * MINUTE);
      expect(gaps.at(-1)).toBe(30_000);
      expect(times.at(-1)! - 45 * MINUTE).toBeLessThanOrEqual(30_000);
    });

    it('aims its last poll at the end of a 5-minute operation, where a percent is 3 s of a 30 s interval', async () => {
      const platform = createMockPlatform();
      const clock = createVirtualClock(0);
      const times = linearOperation(platform, clock, 5 * MINUTE);
      const result = await platform.client({ clock }).waitForOperation(path, { maxPollMs: 60 * MINUTE });
      expect(result).toMatchObject({ outcome: 'succeeded' });
      expect(times.length).toBeLessThanOrEqual(5);
      const gaps = times.slice(1).map((at, index) => at - times[index]!);
      expect(gaps.at(-1)).toBeGreaterThan(30_000);
      // Noticed within two percents (6 s) of its end, where the interval would have taken up to 30 s.
      expect(times.at(-1)! - 5 * MINUTE).toBeGreaterThanOrEqual(0);
      expect(times.at(-1)! - 5 * MINUTE).toBeLessThanOrEqual(6_000);
    });

    it('polls at the suggested interval after an aimed poll that came before the end', async () => {
      const platform = createMockPlatform();
      const clock = createVirtualClock(0);
      const times: number[] = [];
      // Linear for 30 minutes of a 45-minute plan, then the last 34 % take 15 minutes more than planned.
      platform.global
        .intercept({ path, method: 'GET' })
        .reply(() => {
          const now = clock.now();
          times.push(now);
          const percent =
            now < 30 * MINUTE
              ? Math.floor((now / (45 * MINUTE)) * 100)
              : Math.min(99, 66 + Math.floor(((now - 30 * MINUTE) / (30 * MINUTE)) * 34));
          const data =
            now >= 60 * MINUTE
              ? { status: 'SUCCEEDED', progressPercent: 100 }
              : { status: 'RUNNING', progressPercent: percent, suggestedPollingIntervalSeconds: 30 };
          return { statusCode: 200, data, responseOptions: json };
        })
        .persist();
      const result = await platform.client({ clock }).waitForOperation(path, { maxPollMs: 60 * MINUTE });
      expect(result).toMatchObject({ outcome: 'succeeded' });
      expect(times.at(-1)! - 60 * MINUTE).toBeLessThanOrEqual(30_000);
      expect(times.length).toBeLessThan(20);
    });

    it('never sleeps longer than maxPollMs, and polls at the suggested interval while progress stands still', async () => {
      const platform = createMockPlatform();
      const clock = createVirtualClock(0);
      const times = linearOperation(platform, clock, 45 * MINUTE);
      await platform.client({ clock }).waitForOperation(path, { maxPollMs: 2 * MINUTE });
      const gaps = times.slice(1).map((at, index) => at - times[index]!);
      expect(Math.max(...gaps)).toBe(2 * MINUTE);
      // The first poll sees 0 %: the pace is unknown, so the second comes after the suggested 30 s.
      expect(gaps[0]).toBe(30_000);
      expect(times.length).toBeGreaterThan(22);
    });
  });

  it('refuses a Location that is no async-operation path', async () => {
    await expect(createMockPlatform().client().waitForOperation('/devices/v1/devices/abc')).rejects.toBeInstanceOf(
      UnfollowableOperationError,
    );
  });
});
