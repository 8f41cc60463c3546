import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limiter.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('rate limiter', () => {
  it('spreads the per-minute cap of a group evenly over the window, other groups unaffected', async () => {
    // 6 a "minute" of 600 ms: one start per 100 ms slice, never a burst of 6 at a boundary.
    const limiter = createRateLimiter({ windowMs: 600 });
    const started: string[] = [];
    const run = (group: string, perMinute: number, label: string) => limiter.schedule(group, perMinute, async () => void started.push(label));
    const all = [run('a', 6, 'a1'), run('a', 6, 'a2'), run('a', 6, 'a3'), run('b', 1, 'b1')];
    await tick(50);
    expect(started.sort()).toEqual(['a1', 'b1']);
    await tick(100);
    expect(started.sort()).toEqual(['a1', 'a2', 'b1']);
    await Promise.all(all);
    expect(started).toContain('a3');
  });

  it('prefers an override over the published limit', async () => {
    const limiter = createRateLimiter({ windowMs: 10_000, perMinute: { a: 1 } });
    let started = 0;
    void limiter.schedule('a', 100, async () => void (started += 1));
    void limiter.schedule('a', 100, async () => void (started += 1));
    await tick(30);
    expect(started).toBe(1);
  });

  it('caps requests in flight across groups', async () => {
    const limiter = createRateLimiter({ maxConcurrency: 2 });
    let inFlight = 0;
    let peak = 0;
    const task = async () => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await tick(10);
      inFlight -= 1;
    };
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((group) => limiter.schedule(group, undefined, task)));
    expect(peak).toBe(2);
  });

  it('holds a paused group until its pause ends', async () => {
    const limiter = createRateLimiter();
    void limiter.schedule('a', undefined, async () => undefined);
    limiter.pauseGroup('a', 80);
    const startedAt = Date.now();
    let ranAt = 0;
    await limiter.schedule('a', undefined, async () => void (ranAt = Date.now()));
    expect(ranAt - startedAt).toBeGreaterThanOrEqual(75);
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
});
