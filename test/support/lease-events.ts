/**
 * A run store that tells when a lease is taken, so a test waits for the event itself (a run
 * holds its lock, a run took its lease) instead of sleeping and hoping it happened by then.
 */
import type { RunStore } from '../../src/store/index.js';

export interface LeaseEvents {
  store: RunStore;
  /** Resolves once `key` has been acquired (at once if it was already). */
  taken(key: string): Promise<void>;
}

export function watchLeases(inner: RunStore): LeaseEvents {
  const acquired = new Set<string>();
  const waiting = new Map<string, Array<() => void>>();
  const store: RunStore = {
    ...inner,
    async acquireLease(key, owner, ttlMs) {
      const held = await inner.acquireLease(key, owner, ttlMs);
      if (held && !acquired.has(key)) {
        acquired.add(key);
        for (const resolve of waiting.get(key) ?? []) resolve();
        waiting.delete(key);
      }
      return held;
    },
  };
  return {
    store,
    taken: (key) =>
      acquired.has(key)
        ? Promise.resolve()
        : new Promise((resolve) => {
            waiting.set(key, [...(waiting.get(key) ?? []), resolve]);
          }),
  };
}
