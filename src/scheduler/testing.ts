/**
 * A clock moved by hand, for tests of the scheduler and the daemon: timers fire in order of
 * their due time as `advanceTo` passes them, and the work they start runs between them.
 */
import type { Clock, Timer } from '../timers/index.js';

export interface ManualClock extends Clock {
  /** Moves time to `targetMs`, firing every timer due on the way (each at its due time). */
  advanceTo(targetMs: number): Promise<void>;
  advanceBy(ms: number): Promise<void>;
  /** Timers not yet fired or cancelled. */
  pendingTimers(): number;
}

/** Lets promise chains and I/O callbacks started by a timer run before the next one fires. */
async function settle(): Promise<void> {
  for (let round = 0; round < 5; round += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

export function createManualClock(startMs: number): ManualClock {
  let nowMs = startMs;
  let nextId = 0;
  const timers = new Map<number, { dueMs: number; callback: () => void }>();
  const clock: ManualClock = {
    now: () => nowMs,
    setTimer(callback, delayMs) {
      const id = nextId++;
      timers.set(id, { dueMs: nowMs + Math.max(0, delayMs), callback });
      const timer: Timer = { cancel: () => timers.delete(id), unref: () => timer };
      return timer;
    },
    async advanceTo(targetMs) {
      await settle();
      for (;;) {
        let dueId: number | undefined;
        for (const [id, timer] of timers) {
          const due = dueId === undefined ? undefined : timers.get(dueId);
          if (timer.dueMs <= targetMs && (due === undefined || timer.dueMs < due.dueMs)) dueId = id;
        }
        const timer = dueId === undefined ? undefined : timers.get(dueId);
        if (dueId === undefined || timer === undefined) break;
        timers.delete(dueId);
        nowMs = Math.max(nowMs, timer.dueMs);
        timer.callback();
        await settle();
      }
      nowMs = Math.max(nowMs, targetMs);
      await settle();
    },
    advanceBy: (ms) => clock.advanceTo(nowMs + ms),
    pendingTimers: () => timers.size,
  };
  return clock;
}
