/** Timers of any length, linked abort signals, shared abort listeners and the injectable clock: a leaf every layer may use. */
export { MAX_TIMER_MS, setLongTimeout, sleep, type LongTimer } from './sleep.js';
export { abortListenerCount, offAbort, onAbort, type AbortListener } from './abort-listeners.js';
export { linkSignal, untilAborted, type LinkedSignal } from './linked-signal.js';
export { sleepOn, systemClock, type Clock, type Timer } from './clock.js';
export { createVirtualClock, type VirtualClock } from './virtual-clock.js';
export {
  earliestWallTimeAfter,
  instantOf,
  isValidTimezone,
  latestWallTimeUntil,
  offsetAt,
  wallTimeAt,
  type WallTimeMs,
} from './zoned-time.js';
