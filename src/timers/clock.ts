/**
 * Time as the engine and the call executor see it. Injected, so the engine's semantics
 * (retry delays, timeouts, sleeps) are tested in virtual time, in milliseconds of real time.
 * The scheduler's `Clock` has the same shape, so one clock object serves a daemon and its runs.
 */
import { setLongTimeout, sleep } from './sleep.js';

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once, `delayMs` from now (of any length; at once when zero or negative). */
  setTimer(callback: () => void, delayMs: number): Timer;
}

/** The process's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const timer = setLongTimeout(callback, delayMs);
    return { cancel: () => timer.clear() };
  },
};

/** Waits `ms` on `clock`, rejecting with the signal's reason when it aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (clock === systemClock) return sleep(ms, signal);
  return sleep(ms, signal, (fire, delayMs) => {
    const timer = clock.setTimer(fire, delayMs);
    return { clear: () => timer.cancel() };
  });
}
