import type { SimClock } from './context.js';

export interface SimClockOptions {
  /**
   * How many simulated milliseconds pass per real millisecond: 60 makes a 45-minute
   * update last 45 real seconds.
   * @default 1
   */
  timeScale?: number;
  /**
   * Simulated time at creation, epoch milliseconds.
   * @default Date.now()
   */
  startMs?: number;
}

/**
 * Simulated time: real elapsed time (monotonic) times `timeScale`, plus whatever
 * `advance()` added. Nothing is scheduled on it; readers derive state from `now()`.
 */
export function createSimClock(options: SimClockOptions = {}): SimClock {
  const timeScale = options.timeScale ?? 1;
  if (!(Number.isFinite(timeScale) && timeScale > 0)) {
    throw new RangeError(`Expected \`timeScale\` to be a positive number, got ${String(timeScale)}`);
  }
  const startMs = options.startMs ?? Date.now();
  const realStart = performance.now();
  let offsetMs = 0;

  const now = (): number => Math.floor(startMs + (performance.now() - realStart) * timeScale + offsetMs);
  return {
    now,
    nowIso: () => new Date(now()).toISOString(),
    wallNow: () => Math.floor(startMs + (performance.now() - realStart) + offsetMs),
    timeScale,
    advance(ms) {
      if (!(Number.isFinite(ms) && ms >= 0)) {
        throw new RangeError(`Expected \`ms\` to be a non-negative number, got ${String(ms)}`);
      }
      offsetMs += ms;
    },
  };
}
