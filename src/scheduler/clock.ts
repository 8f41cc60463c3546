/**
 * Time as the scheduler sees it: the `Clock` of src/timers, which the runs it starts take too.
 * Everything that waits goes through it, so tests move time by hand (`createManualClock` in
 * `testing.ts`) and never wait for real time.
 */
export { systemClock, type Clock, type Timer } from '../timers/index.js';
