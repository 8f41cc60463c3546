import { offAbort, onAbort } from './abort-listeners.js';

/**
 * The longest delay one timer takes: `setTimeout` stores it in 32 bits and fires at once
 * (with a warning) for anything longer, so a 25-day sleep or timeout would end immediately.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer that may be longer than one `setTimeout` allows. */
export interface LongTimer {
  clear(): void;
  /** Lets the process exit while this timer is all that is left (Node's `unref`), for timers of background upkeep. */
  unref(): LongTimer;
}

/**
 * Calls `fire` after `ms`, chaining timers of at most MAX_TIMER_MS when it is longer.
 * Anything that is not a positive number fires on the next turn, as `setTimeout` does;
 * `Infinity` never fires.
 */
export function setLongTimeout(fire: () => void, ms: number): LongTimer {
  let remaining = ms > 0 ? ms : 0;
  let timer: ReturnType<typeof setTimeout>;
  // Each link of a long chain keeps the setting, not only the first.
  let unref = false;
  const arm = (): void => {
    const step = Math.min(remaining, MAX_TIMER_MS);
    remaining -= step;
    timer = setTimeout(() => (remaining > 0 ? arm() : fire()), step);
    if (unref) timer.unref();
  };
  arm();
  const handle: LongTimer = {
    clear: () => clearTimeout(timer),
    unref() {
      unref = true;
      timer.unref();
      return handle;
    },
  };
  return handle;
}

/**
 * Waits `ms` (any length: see setLongTimeout), rejecting with the signal's reason when it
 * aborts (`setTimer`: a clock's timers). No polling and nothing kept after it settles, so thousands of waits cost a timer each.
 */
export function sleep(
  ms: number,
  signal?: AbortSignal,
  setTimer: (fire: () => void, ms: number) => LongTimer = setLongTimeout,
): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  if (setTimer === setLongTimeout && !(ms > MAX_TIMER_MS)) {
    return new Promise((resolve, reject) => {
      const sleeper = new Sleeper(resolve, reject, signal);
      sleeper.timeout = setTimeout(wake, ms > 0 ? ms : 0, sleeper);
      if (signal) onAbort(signal, sleeper);
    });
  }
  return new Promise((resolve, reject) => {
    const abort = (): void => {
      timer.clear();
      reject(signal?.reason as Error);
    };
    const timer = setTimer(() => {
      if (signal) offAbort(signal, abort);
      resolve();
    }, ms);
    if (signal) onAbort(signal, abort);
  });
}

/**
 * A sleep of one timer: one object, which is also its abort listener, and a module-level callback.
 * Thousands of waits sleep at once (benchmark 5): the general path holds seven closures and their
 * contexts for each.
 */
class Sleeper {
  timeout: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly resolve: () => void,
    readonly reject: (reason: unknown) => void,
    readonly signal: AbortSignal | undefined,
  ) {}

  handleEvent(): void {
    clearTimeout(this.timeout);
    this.reject(this.signal?.reason);
  }
}

function wake(sleeper: Sleeper): void {
  if (sleeper.signal) offAbort(sleeper.signal, sleeper);
  sleeper.resolve();
}
