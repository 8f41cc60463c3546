/**
 * Time as the scheduler sees it. Everything that waits goes through a `Clock`, so tests
 * move time by hand (`createManualClock` in `testing.ts`) and never wait for real time.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once, `delayMs` from now (at once when zero or negative). */
  setTimer(callback: () => void, delayMs: number): Timer;
}

// setTimeout fires at once for delays beyond 2^31-1 ms (about 24.8 days); a yearly schedule
// is further away than that, so long waits are made of shorter ones.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The machine's clock and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const dueMs = Date.now() + Math.max(0, delayMs);
    let handle: NodeJS.Timeout;
    const arm = (): void => {
      const remainingMs = dueMs - Date.now();
      handle = remainingMs > MAX_TIMEOUT_MS ? setTimeout(arm, MAX_TIMEOUT_MS) : setTimeout(callback, Math.max(0, remainingMs));
    };
    arm();
    return { cancel: () => clearTimeout(handle) };
  },
};
