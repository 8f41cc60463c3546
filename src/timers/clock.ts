/**
 * Time as the engine and the call executor see it. Injected, so the engine's semantics
 * (retry delays, timeouts, sleeps) are tested in virtual time, in milliseconds of real time.
 * The scheduler, the run's lease, the rate limiter and the call executor take the same `Clock`,
 * so one clock object serves a daemon and its runs.
 */
import { setLongTimeout, sleep, type LongTimer } from './sleep.js';

export interface Timer {
  cancel(): void;
  /**
   * Lets the process exit while this timer is all that is left (Node's `unref`): for background
   * upkeep such as lease renewals, which must not keep a finished process alive. A no-op on a
   * virtual clock. Returns the timer.
   */
  unref(): Timer;
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
    const handle: Timer = {
      cancel: () => timer.clear(),
      unref() {
        timer.unref();
        return handle;
      },
    };
    return handle;
  },
};

/** Waits `ms` on `clock`, rejecting with the signal's reason when it aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (clock === systemClock) return sleep(ms, signal);
  return sleep(ms, signal, (fire, delayMs) => {
    const timer = clock.setTimer(fire, delayMs);
    const handle: LongTimer = {
      clear: () => timer.cancel(),
      unref() {
        timer.unref();
        return handle;
      },
    };
    return handle;
  });
}
