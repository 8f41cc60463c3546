/**
 * Failed logins, counted per client address and per token id, each key held off for a delay
 * that doubles with every failure past the first few: guessing tokens from one address, or one
 * token's secret from many, slows to a few tries an hour. The caller answers 429 with the
 * delay (Retry-After) instead of holding the request open. Time is the server's clock, so
 * tests move it.
 */
import type { Clock } from '../../timers/index.js';

/** Failures before the first delay (a mistyped paste or two costs nothing). */
const FREE_FAILURES = 3;
const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 15 * 60_000;
/** A key with no failure for this long starts again from nothing. */
const FORGET_AFTER_MS = 60 * 60_000;
/** Keys kept at most (the oldest go first): an attacker cycling addresses cannot grow the process without bound. */
const MAX_KEYS = 10_000;

interface Failures {
  count: number;
  lastMs: number;
  blockedUntilMs: number;
}

export interface LoginThrottle {
  /** How long the caller must wait before a login with these keys is looked at (0: now). */
  waitMs(keys: readonly string[]): number;
  /** Counts a failure for each key; returns the wait it sets. */
  failed(keys: readonly string[]): number;
  /** A success ends the delay of the token's key (an address keeps its count until forgotten). */
  succeeded(key: string): void;
}

export function createLoginThrottle(clock: Pick<Clock, 'now'>): LoginThrottle {
  const keys = new Map<string, Failures>();
  const live = (key: string): Failures | undefined => {
    const found = keys.get(key);
    if (found && clock.now() - found.lastMs > FORGET_AFTER_MS) {
      keys.delete(key);
      return undefined;
    }
    return found;
  };
  return {
    waitMs: (list) => Math.max(0, ...list.map((key) => (live(key)?.blockedUntilMs ?? 0) - clock.now())),
    failed(list) {
      const now = clock.now();
      let wait = 0;
      for (const key of list) {
        const failures = live(key) ?? { count: 0, lastMs: now, blockedUntilMs: 0 };
        failures.count += 1;
        failures.lastMs = now;
        const over = failures.count - FREE_FAILURES;
        const delay = over <= 0 ? 0 : Math.min(FIRST_DELAY_MS * 2 ** Math.min(over - 1, 20), MAX_DELAY_MS);
        failures.blockedUntilMs = now + delay;
        keys.delete(key);
        keys.set(key, failures);
        wait = Math.max(wait, delay);
      }
      while (keys.size > MAX_KEYS) keys.delete(keys.keys().next().value as string);
      return wait;
    },
    succeeded(key) {
      keys.delete(key);
    },
  };
}
