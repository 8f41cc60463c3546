import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { linkSignal } from './linked-signal.js';
import { systemClock } from './clock.js';
import { MAX_TIMER_MS, sleep } from './sleep.js';

const DAY_MS = 24 * 60 * 60 * 1000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled once the timers due now have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe('sleep', () => {
  it('waits the whole of a delay longer than one timer allows (60 days), not a moment', async () => {
    const nap = sleep(60 * DAY_MS);
    expect(await settled(nap)).toBe(false);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
    expect(await settled(nap)).toBe(false);
    await vi.advanceTimersByTimeAsync(60 * DAY_MS - MAX_TIMER_MS - 2);
    expect(await settled(nap)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(nap)).toBe(true);
  });

  it('is cut short by its signal in any of its chained timers, leaving none armed', async () => {
    const controller = new AbortController();
    const nap = sleep(60 * DAY_MS, controller.signal);
    const outcome = nap.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + DAY_MS);
    controller.abort(new Error('stopped'));
    expect(((await outcome) as Error).message).toBe('stopped');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('linkSignal with a long timeout', () => {
  it('times out after the whole of a 30-day timeout, not at once', async () => {
    const linked = linkSignal(undefined, 30 * DAY_MS, () => new Error('too slow'));
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    expect(linked.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(30 * DAY_MS - MAX_TIMER_MS - 1);
    expect(linked.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(linked.timedOut()).toBe(true);
    expect((linked.signal.reason as Error).message).toBe('too slow');
    linked.dispose();
  });

  it('leaves no timer armed once disposed, even between chained timers', async () => {
    const linked = linkSignal(undefined, 30 * DAY_MS);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + DAY_MS);
    linked.dispose();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(30 * DAY_MS);
    expect(linked.signal.aborted).toBe(false);
  });
});

describe("a clock timer unref'd", () => {
  it('keeps no link of a long chain holding the process open, and still fires', async () => {
    const handles: Array<ReturnType<typeof setTimeout>> = [];
    const realSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const handle = realSetTimeout(...args);
      handles.push(handle);
      return handle;
    }) as typeof setTimeout);
    let fired = false;
    systemClock.setTimer(() => (fired = true), MAX_TIMER_MS + DAY_MS).unref();
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    expect(fired).toBe(false);
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect(fired).toBe(true);
    spy.mockRestore();
    // The first link and the one armed after it: neither refs the event loop.
    expect(handles).toHaveLength(2);
    expect(handles.map((handle) => handle.hasRef())).toEqual([false, false]);
  });
});
