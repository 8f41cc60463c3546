import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { abortListenerCount, createVirtualClock, sleepOn } from '../timers/index.js';
import { createRateLimiter, type RateLimiterOptions } from './rate-limiter.js';

// Time is virtual: it jumps to the next timer once nothing else can run, so each start is seen at its exact time.
const virtualLimiter = (options: Omit<RateLimiterOptions, 'clock'> = {}) => {
  const clock = createVirtualClock(0);
  return { clock, limiter: createRateLimiter({ ...options, clock }) };
};

describe('rate limiter', () => {
  it('spreads the per-minute cap of a group evenly over the window, other groups unaffected', async () => {
    // 6 a "minute" of 600 ms: one start per 100 ms slice, never a burst of 6 at a boundary.
    const { clock, limiter } = virtualLimiter({ windowMs: 600 });
    const started: Record<string, number> = {};
    const run = (group: string, perMinute: number, label: string) =>
      limiter.schedule(group, perMinute, async () => void (started[label] = clock.now()));
    await Promise.all([run('a', 6, 'a1'), run('a', 6, 'a2'), run('a', 6, 'a3'), run('b', 1, 'b1')]);
    expect(started).toEqual({ a1: 0, b1: 0, a2: 100, a3: 200 });
  });

  it('prefers an override over the published limit', async () => {
    const { clock, limiter } = virtualLimiter({ windowMs: 10_000, perMinute: { a: 1 } });
    const started: number[] = [];
    await Promise.all([1, 2].map(() => limiter.schedule('a', 100, async () => void started.push(clock.now()))));
    // 1 a window, not the published 100 (which would start both at once).
    expect(started).toEqual([0, 10_000]);
  });

  it("follows the server's stated limit over the published and default ones", async () => {
    const { clock, limiter } = virtualLimiter({ windowMs: 10_000, defaultPerMinute: 6000 });
    const started: number[] = [];
    const start = () => limiter.schedule('a', undefined, async () => void started.push(clock.now()));
    await start();
    // The server says a minute's worth is 1: the burst of the default pace is no longer there.
    limiter.adoptServerLimit('a', 1);
    expect(limiter.currentCap('a')).toBe(1);
    await Promise.all([start(), start()]);
    expect(started).toEqual([0, 0, 10_000]);
    // A higher stated limit raises the pace of a group not slowed by 429s.
    limiter.adoptServerLimit('a', 1200);
    expect(limiter.currentCap('a')).toBe(1200);
  });

  it('caps requests in flight across groups', async () => {
    const { clock, limiter } = virtualLimiter({ maxConcurrency: 2 });
    let inFlight = 0;
    let peak = 0;
    const task = async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await sleepOn(clock, 10);
      inFlight -= 1;
    };
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((group) => limiter.schedule(group, undefined, task)));
    expect(peak).toBe(2);
    // Five tasks of 10 ms, two at a time.
    expect(clock.now()).toBe(30);
  });

  it('holds a paused group until its pause ends', async () => {
    const { clock, limiter } = virtualLimiter();
    void limiter.schedule('a', undefined, async () => undefined);
    limiter.pauseGroup('a', 80);
    let ranAt = 0;
    await limiter.schedule('a', undefined, async () => void (ranAt = clock.now()));
    expect(ranAt).toBeGreaterThanOrEqual(80);
  });

  it('rejects with the abort reason of a waiting request', async () => {
    const limiter = createRateLimiter({ perMinute: { a: 1 } });
    await limiter.schedule('a', undefined, async () => undefined);
    const controller = new AbortController();
    const waiting = limiter.schedule('a', undefined, async () => 'never', controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('rejects with the abort reason of a request waiting for a global slot, and the next one takes the slot', async () => {
    const limiter = createRateLimiter({ maxConcurrency: 1 });
    let release: () => void = () => undefined;
    const blocker = limiter.schedule('a', undefined, () => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    const aborted = limiter.schedule('a', undefined, async () => 'never', controller.signal);
    const next = limiter.schedule('b', undefined, async () => 'next');
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    release();
    await blocker;
    await expect(next).resolves.toBe('next');
  });

  it('starts a request that finds a token and a slot free with one abort listener (for its run), removed when it ends', async () => {
    const limiter = createRateLimiter();
    const controller = new AbortController();
    let listening = -1;
    const task = async (): Promise<string> => {
      await Promise.resolve();
      listening = abortListenerCount(controller.signal);
      return 'done';
    };
    await expect(limiter.schedule('a', undefined, task, controller.signal)).resolves.toBe('done');
    expect(listening).toBe(1);
    expect(abortListenerCount(controller.signal)).toBe(0);
  });

  it('keeps nothing of a request that has ended while others still wait for a slot', async () => {
    // Thousands of polls wait for a slot at once (benchmark 5): an ended request (its task, and
    // what the task holds: the request built, its answer) must not stay reachable from the queue.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const limiter = createRateLimiter({ maxConcurrency: 1, defaultPerMinute: Infinity });
    const gate = () => {
      let open: () => void = () => undefined;
      const task = () => new Promise<void>((resolve) => (open = resolve));
      return { task, open: () => open() };
    };
    const [first, second] = [gate(), gate()];
    const blocker = limiter.schedule('a', undefined, first.task);
    // The request lives in the task's closure only.
    const schedule = () => {
      const request = { body: 'x'.repeat(1000) };
      return { ended: limiter.schedule('a', undefined, async () => request.body.length), held: new WeakRef(request) };
    };
    const { ended, held } = schedule();
    const blocking = limiter.schedule('a', undefined, second.task);
    const waiting = Array.from({ length: 300 }, () => limiter.schedule('a', undefined, async () => undefined));
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    await settled();
    first.open();
    await blocker;
    await expect(ended).resolves.toBe(1000);
    await settled();
    gc();
    expect(held.deref()).toBeUndefined();
    second.open();
    await Promise.all([blocking, ...waiting]);
  });

  describe('after a 429', () => {
    afterEach(() => void vi.useRealTimers());

    it('halves the cap once per slowdown and grows it back by a tenth of the limit per calm window', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const limiter = createRateLimiter({ perMinute: { a: 20 } });
      await limiter.schedule('a', undefined, async () => undefined);
      const sentBefore = Date.now();
      await vi.advanceTimersByTimeAsync(10);
      limiter.pauseGroup('a', 1000, { sentAt: sentBefore });
      expect(limiter.currentCap('a')).toBe(10);
      // A second 429 to a request sent at the old pace: the same slowdown, not another halving.
      limiter.pauseGroup('a', 1000, { sentAt: sentBefore });
      expect(limiter.currentCap('a')).toBe(10);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(limiter.currentCap('a')).toBe(12);
      limiter.pauseGroup('a', 1000, { sentAt: Date.now() });
      expect(limiter.currentCap('a')).toBe(6);
      const caps: Array<number | undefined> = [];
      for (let window = 0; window < 8; window += 1) {
        await vi.advanceTimersByTimeAsync(60_000);
        caps.push(limiter.currentCap('a'));
      }
      expect(caps).toEqual([8, 10, 12, 14, 16, 18, 20, 20]);
      // A 429 that is no sign of the pace (slowDown: false) pauses the group only.
      limiter.pauseGroup('a', 1000, { slowDown: false });
      expect(limiter.currentCap('a')).toBe(20);
    });

    it('starts the requests of the group at the lowered pace once the pause the server asked for is over', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const limiter = createRateLimiter({ perMinute: { a: 20 } });
      const startedAt: number[] = [];
      const origin = Date.now();
      limiter.pauseGroup('a', 1000);
      const calls = Array.from({ length: 30 }, () =>
        limiter.schedule('a', undefined, async () => void startedAt.push(Date.now() - origin)),
      );
      await vi.advanceTimersByTimeAsync(999);
      expect(startedAt).toEqual([]);
      await vi.advanceTimersByTimeAsync(59_000);
      // 10 a minute (one per 6 s) from the end of the pause, instead of the configured 20.
      expect(startedAt).toEqual([1000, 7000, 13_000, 19_000, 25_000, 31_000, 37_000, 43_000, 49_000, 55_000]);
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      await Promise.all(calls);
    });

    it('holds a request already waiting for a global slot until the pause ends', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const limiter = createRateLimiter({ maxConcurrency: 1 });
      let release: () => void = () => undefined;
      const blocker = limiter.schedule('b', undefined, () => new Promise<void>((resolve) => (release = resolve)));
      let started = false;
      const waiting = limiter.schedule('a', undefined, async () => void (started = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(limiter.pending()).toMatchObject({ a: 1 });
      limiter.pauseGroup('a', 5000);
      release();
      await blocker;
      await vi.advanceTimersByTimeAsync(4900);
      expect(started).toBe(false);
      await vi.advanceTimersByTimeAsync(200);
      expect(started).toBe(true);
      await waiting;
    });
  });
});
