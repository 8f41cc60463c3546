/**
 * Client-side rate limiting: one bucket per operation group (`x-fleetbook-rate-limit`
 * group) starting at most its per-minute cap, then one global queue capping requests in
 * flight. A 429 pauses its bucket until the server's hint and halves the bucket's cap,
 * which then grows back step by step over the windows that pass without a 429.
 */
import { offAbort, onAbort, systemClock, untilAborted, type Clock, type Timer } from '../timers/index.js';
import { InvalidClientOptionsError } from './errors.js';

export interface RateLimiterOptions {
  /** Per-minute caps by group, overriding the published limits (`{ 'subscriptions.add': 2 }`). */
  perMinute?: Record<string, number>;
  /** Per-minute cap of groups without a published limit. @default 600 */
  defaultPerMinute?: number;
  /** Requests in flight at once, all groups together. @default 16 */
  maxConcurrency?: number;
  /** Length of a rate window in ms; only tests shorten it. @default 60_000 */
  windowMs?: number;
  /** Time of the buckets: refills, pauses, recovery. @default systemClock */
  clock?: Clock;
}

export interface RateLimiter {
  /**
   * Runs `task` once the group's bucket allows another start and a global slot is free.
   * `publishedPerMinute` is the description's limit, used unless overridden.
   */
  schedule<T>(
    group: string,
    publishedPerMinute: number | undefined,
    task: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T>;
  /**
   * The server answered 429: starts nothing more in `group` for `ms` (a longer pause wins
   * over a shorter one). With `slowDown` (the default) it also halves the group's cap,
   * unless the refused request was sent (`sentAt`, epoch ms, default now) before an earlier
   * 429 had already slowed the group down.
   */
  pauseGroup(group: string, ms: number, options?: { sentAt?: number; slowDown?: boolean }): void;
  /**
   * The server said its limit for `group` (`ratelimit-limit`, per window): the group's pace
   * follows it from now on, over the published and configured ones (the server is the one that
   * answers 429). A cap lowered by 429s stays lowered and recovers towards the new limit.
   * `remaining` (`ratelimit-remaining`): what the server still allows now; starts beyond it wait.
   */
  adoptServerLimit(group: string, perWindow: number, remaining?: number): void;
  /** The group's current per-window cap (below its limit after 429s), for logs and tests. */
  currentCap(group: string): number | undefined;
  /** Requests waiting, by group (for logs and benchmarks). */
  pending(): Record<string, number>;
}

/**
 * A rate budget shared with other processes (team mode, or several on one machine): the store's
 * GCRA buckets, one per connection and group. The client reserves each start there after its
 * own pacing admitted it, and waits what the budget says; a 429 or a spent quota pushes the
 * group for every process.
 */
export interface SharedRateBudget {
  /** Reserves a start in `group` at `perMinute` with a burst of `burst`; resolves with the ms to wait first. */
  take(group: string, perMinute: number, burst: number): Promise<number>;
  /** Nobody starts in `group` for `ms` from now. */
  push(group: string, ms: number, perMinute: number, burst: number): Promise<void>;
}

interface Waiter {
  resolve: () => void;
}

/**
 * A request waiting for a global slot: one object, which is also its abort listener. Thousands
 * wait at once when thousands of waits poll together (benchmark 5), so each holds this entry and
 * its promise, and nothing once it has started: p-queue held eight closures, the options and an
 * abort listener per queued task, and kept the tasks it had started (with their results) in its
 * queue's consumed prefix until it compacted.
 */
class SlotWaiter {
  constructor(
    readonly resolve: () => void,
    readonly reject: (reason: unknown) => void,
    readonly signal: AbortSignal | undefined,
    readonly slots: Slots,
  ) {}

  handleEvent(): void {
    this.slots.drop(this);
    this.reject(this.signal?.reason);
  }
}

/** The cap of requests in flight, all groups together: free slots and the requests waiting for one, in order. */
class Slots {
  private readonly waiting: SlotWaiter[] = [];

  constructor(private free: number) {}

  /** Takes a free slot if there is one, which the caller gives back with `release`. */
  take(): boolean {
    if (this.free === 0) return false;
    this.free -= 1;
    return true;
  }

  /** Resolves when the caller holds a slot (after `take` found none), which it gives back with `release`. */
  wait(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const waiter = new SlotWaiter(resolve, reject, signal, this);
      if (signal) onAbort(signal, waiter);
      this.waiting.push(waiter);
    });
  }

  /** Hands the slot to the first request waiting, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (!next) {
      this.free += 1;
      return;
    }
    if (next.signal) offAbort(next.signal, next);
    next.resolve();
  }

  drop(waiter: SlotWaiter): void {
    const index = this.waiting.indexOf(waiter);
    if (index >= 0) this.waiting.splice(index, 1);
  }
}

interface Bucket {
  /** The configured cap per window: what recovery grows back to. */
  limit: number;
  /** The cap per window in force; lower than `limit` after 429s. */
  cap: number;
  /** Starts available now, refilled continuously at `cap` per window up to a small burst. */
  tokens: number;
  refilledAt: number;
  pausedUntil: number;
  /** When the last 429 lowered the cap; a 429 to a request sent earlier does not lower it again. */
  decreasedAt: number;
  /** Start of the current stretch without a 429: each full window of it adds a recovery step. */
  calmSince: number;
  /** Admitted by the bucket and queued for a global slot, not started yet. */
  reserved: number;
  waiters: Waiter[];
  timer: Timer | undefined;
}

function checkCount(name: string, value: number, min: number): number {
  if (!(typeof value === 'number' && value >= min && (Number.isInteger(value) || value === Infinity))) {
    throw new InvalidClientOptionsError(`Expected \`${name}\` to be an integer from ${min}, got ${String(value)}.`);
  }
  return value;
}

/**
 * Starts allowed back to back: a sixtieth of the cap (at least one). A whole window's worth
 * at once would let a client send a minute's worth at the end of one window and again at
 * the start of the next, which a server counting with a token bucket answers with 429s.
 */
export function burstOf(cap: number): number {
  return Number.isFinite(cap) ? Math.max(1, Math.ceil(cap / 60)) : Infinity;
}

/** What a calm window gives back: a tenth of the configured limit, at least one request. */
function recoveryStep(limit: number): number {
  return Math.max(1, Math.ceil(limit / 10));
}

/** The groups' token buckets: their pacing, their queues of waiting requests, their slowdowns. */
class Buckets {
  readonly byGroup = new Map<string, Bucket>();

  constructor(
    private readonly overrides: Record<string, number>,
    private readonly defaultPerMinute: number,
    private readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  of(group: string, published: number | undefined): Bucket {
    let bucket = this.byGroup.get(group);
    if (!bucket) {
      const limit = this.overrides[group] ?? published ?? this.defaultPerMinute;
      const now = this.clock.now();
      bucket = {
        limit,
        cap: limit,
        tokens: burstOf(limit),
        refilledAt: now,
        pausedUntil: 0,
        decreasedAt: -Infinity,
        calmSince: now,
        reserved: 0,
        waiters: [],
        timer: undefined,
      };
      this.byGroup.set(group, bucket);
    }
    return bucket;
  }

  /** Brings the cap (recovery) and the tokens (refill) up to `now`. */
  refresh(bucket: Bucket, now: number): void {
    const { windowMs } = this;
    if (bucket.cap < bucket.limit) {
      const calmWindows = Math.floor((now - bucket.calmSince) / windowMs);
      if (calmWindows > 0) {
        bucket.cap = Math.min(bucket.limit, bucket.cap + calmWindows * recoveryStep(bucket.limit));
        bucket.calmSince += calmWindows * windowMs;
      }
    }
    const burst = burstOf(bucket.cap);
    bucket.tokens = Number.isFinite(burst)
      ? Math.min(burst, bucket.tokens + ((now - bucket.refilledAt) * bucket.cap) / windowMs)
      : Infinity;
    bucket.refilledAt = now;
  }

  private arm(bucket: Bucket, ms: number): void {
    bucket.timer?.cancel();
    bucket.timer = this.clock.setTimer(
      () => {
        bucket.timer = undefined;
        this.pump(bucket);
      },
      Math.max(1, Math.ceil(ms)),
    );
  }

  /** Admits waiters, first come first served, while the bucket has unreserved tokens. */
  pump(bucket: Bucket): void {
    const now = this.clock.now();
    this.refresh(bucket, now);
    while (bucket.waiters.length > 0) {
      if (now < bucket.pausedUntil) return this.arm(bucket, bucket.pausedUntil - now);
      const free = bucket.tokens - bucket.reserved;
      if (free < 1) {
        // Requests admitted earlier still wait for a global slot; the next start calls pump.
        if (bucket.reserved >= burstOf(bucket.cap)) return;
        return this.arm(bucket, ((1 - free) * this.windowMs) / bucket.cap);
      }
      bucket.reserved += 1;
      bucket.waiters.shift()?.resolve();
    }
    bucket.timer?.cancel();
    bucket.timer = undefined;
  }

  /** Admits a request at once when nobody waits before it and the bucket has an unreserved token. */
  admitNow(bucket: Bucket): boolean {
    if (bucket.waiters.length > 0) return false;
    const now = this.clock.now();
    this.refresh(bucket, now);
    if (now < bucket.pausedUntil || bucket.tokens - bucket.reserved < 1) return false;
    bucket.reserved += 1;
    return true;
  }

  admit(bucket: Bucket, signal: AbortSignal | undefined, first: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const leave = (): void => {
        const index = bucket.waiters.indexOf(waiter);
        if (index >= 0) bucket.waiters.splice(index, 1);
        reject(signal?.reason as Error);
      };
      const waiter: Waiter = {
        resolve: () => {
          if (signal) offAbort(signal, leave);
          resolve();
        },
      };
      if (signal) onAbort(signal, leave);
      if (first) bucket.waiters.unshift(waiter);
      else bucket.waiters.push(waiter);
      this.pump(bucket);
    });
  }

  /**
   * Called when an admitted request gets its global slot. A 429 may have paused the bucket
   * (or used up its tokens) while the request waited for the slot: then it must not start.
   */
  begin(bucket: Bucket): boolean {
    const now = this.clock.now();
    this.refresh(bucket, now);
    bucket.reserved -= 1;
    const allowed = now >= bucket.pausedUntil && bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.pump(bucket);
    return allowed;
  }

  pause(group: string, ms: number, sentAt: number, slowDown: boolean): void {
    const bucket = this.of(group, undefined);
    const now = this.clock.now();
    this.refresh(bucket, now);
    // Requests sent at the old rate answer 429 together; one halving per slowdown.
    if (slowDown && sentAt >= bucket.decreasedAt && Number.isFinite(bucket.cap)) {
      bucket.cap = Math.max(1, Math.floor(bucket.cap / 2));
      bucket.decreasedAt = now;
    }
    bucket.calmSince = now;
    bucket.pausedUntil = Math.max(bucket.pausedUntil, now + ms);
    // The server counts this group as spent: one start when the pause ends, then the new pace.
    if (Number.isFinite(bucket.cap))
      bucket.tokens = Math.min(bucket.tokens, 1 - ((bucket.pausedUntil - now) * bucket.cap) / this.windowMs);
    this.pump(bucket);
  }

  adoptServerLimit(group: string, perWindow: number, remaining: number | undefined): void {
    if (!(Number.isInteger(perWindow) && perWindow >= 1)) return;
    const bucket = this.byGroup.get(group);
    if (!bucket) return;
    this.refresh(bucket, this.clock.now());
    if (bucket.limit !== perWindow) {
      const slowed = bucket.cap < bucket.limit;
      bucket.limit = perWindow;
      bucket.cap = slowed ? Math.min(bucket.cap, perWindow) : perWindow;
      bucket.tokens = Math.min(bucket.tokens, burstOf(bucket.cap));
    }
    if (remaining !== undefined && remaining >= 0) bucket.tokens = Math.min(bucket.tokens, remaining);
    this.pump(bucket);
  }
}

export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const overrides = options.perMinute ?? {};
  for (const [group, value] of Object.entries(overrides)) checkCount(`rateLimits.perMinute['${group}']`, value, 1);
  const defaultPerMinute = checkCount('rateLimits.defaultPerMinute', options.defaultPerMinute ?? 600, 1);
  const clock = options.clock ?? systemClock;
  const slots = new Slots(checkCount('maxConcurrency', options.maxConcurrency ?? 16, 1));
  const buckets = new Buckets(overrides, defaultPerMinute, options.windowMs ?? 60_000, clock);

  return {
    async schedule<T>(
      group: string,
      publishedPerMinute: number | undefined,
      task: () => Promise<T>,
      signal?: AbortSignal,
    ): Promise<T> {
      const bucket = buckets.of(group, publishedPerMinute);
      // The rate gate comes first and the concurrency slot second, so requests held back by
      // a slow group never occupy slots other groups could use. A request turned back at its
      // slot (the group was paused meanwhile) waits again at the head of its group.
      for (let turnedBack = false; ; turnedBack = true) {
        // Most requests find a token and a slot free: they take them at once, without a promise or
        // an abort listener.
        if (signal?.aborted) throw signal.reason;
        if (turnedBack || !buckets.admitNow(bucket)) await buckets.admit(bucket, signal, turnedBack);
        if (!slots.take()) {
          try {
            await slots.wait(signal);
          } catch (error) {
            bucket.reserved -= 1;
            buckets.pump(bucket);
            throw error;
          }
        }
        if (!buckets.begin(bucket)) {
          slots.release();
          continue;
        }
        try {
          return await (signal ? untilAborted(task(), signal) : task());
        } finally {
          slots.release();
        }
      }
    },
    pauseGroup(group, ms, { sentAt = clock.now(), slowDown = true } = {}) {
      buckets.pause(group, ms, sentAt, slowDown);
    },
    adoptServerLimit(group, perWindow, remaining) {
      buckets.adoptServerLimit(group, perWindow, remaining);
    },
    currentCap(group) {
      const bucket = buckets.byGroup.get(group);
      if (!bucket) return undefined;
      buckets.refresh(bucket, clock.now());
      return bucket.cap;
    },
    pending() {
      return Object.fromEntries(
        [...buckets.byGroup].map(([group, bucket]) => [group, bucket.waiters.length + bucket.reserved]),
      );
    },
  };
}
