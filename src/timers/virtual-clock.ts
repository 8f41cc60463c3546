/**
 * A clock whose time moves only when nothing else can: once the promises in flight have
 * settled (a macrotask later), it jumps to the next timer due and fires it. A run under it
 * takes the time its steps say (a 30 s retry delay, a 1 h timeout) in virtual time and a few
 * milliseconds of real time, in the same order as under the system clock.
 */
import type { Clock, Timer } from './clock.js';

interface Pending {
  due: number;
  /** Order of arming, for timers due at the same instant. */
  order: number;
  fire: () => void;
}

export interface VirtualClock extends Clock {
  /** Timers armed and not yet fired or cleared. */
  pending(): number;
}

export function createVirtualClock(start = 0): VirtualClock {
  let current = start;
  let order = 0;
  let scheduled = false;
  const timers = new Set<Pending>();
  const tick = (): void => {
    scheduled = false;
    let next: Pending | undefined;
    for (const timer of timers)
      if (next === undefined || timer.due < next.due || (timer.due === next.due && timer.order < next.order))
        next = timer;
    if (next === undefined) return;
    timers.delete(next);
    current = Math.max(current, next.due);
    next.fire();
    schedule();
  };
  const schedule = (): void => {
    if (scheduled || timers.size === 0) return;
    scheduled = true;
    setImmediate(tick);
  };
  const setTimer = (fire: () => void, ms: number): Timer => {
    const timer: Pending = { due: current + (ms > 0 ? ms : 0), order: (order += 1), fire };
    if (ms !== Infinity) timers.add(timer);
    schedule();
    // Nothing keeps a process alive in virtual time: unref has nothing to do.
    const handle: Timer = { cancel: () => timers.delete(timer), unref: () => handle };
    return handle;
  };
  return {
    now: () => current,
    setTimer,
    pending: () => timers.size,
  };
}
