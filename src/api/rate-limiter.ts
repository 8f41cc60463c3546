/**
 * Client-side rate limiting: one p-queue bucket per operation group (`x-fleetbook-rate-limit`
 * group) starting at most `perMinute` requests per minute, then one global queue capping
 * requests in flight. A 429 pauses its bucket until the reset the server gave.
 */
import PQueue from 'p-queue';
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
}

export interface RateLimiter {
  /**
   * Runs `task` once the group's bucket has room in the current window and a global slot
   * is free. `publishedPerMinute` is the description's limit, used unless overridden.
   */
  schedule<T>(group: string, publishedPerMinute: number | undefined, task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Starts nothing more in `group` for `ms` (after a 429); a longer pause wins over a shorter one. */
  pauseGroup(group: string, ms: number): void;
  /** Requests waiting, by group (for logs and benchmarks). */
  pending(): Record<string, number>;
}

interface Bucket {
  queue: PQueue;
  pausedUntil: number;
  timer: NodeJS.Timeout | undefined;
}

function checkCount(name: string, value: number, min: number): number {
  if (!(typeof value === 'number' && value >= min && (Number.isInteger(value) || value === Infinity))) {
    throw new InvalidClientOptionsError(`Expected \`${name}\` to be an integer from ${min}, got ${String(value)}.`);
  }
  return value;
}

/**
 * Into how many equal windows a minute is cut: the largest divisor of the limit up to 60.
 * A whole-minute window lets a client send a minute's worth at the end of one window and
 * again at the start of the next, which a server counting with a token bucket answers
 * with 429s; with slices no span of a minute ever carries more than the limit.
 */
function sliceCount(perMinute: number): number {
  if (!Number.isFinite(perMinute)) return 1;
  for (let slices = Math.min(60, perMinute); slices > 1; slices -= 1) if (perMinute % slices === 0) return slices;
  return 1;
}

export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const overrides = options.perMinute ?? {};
  for (const [group, value] of Object.entries(overrides)) checkCount(`rateLimits.perMinute['${group}']`, value, 1);
  const defaultPerMinute = checkCount('rateLimits.defaultPerMinute', options.defaultPerMinute ?? 600, 1);
  const windowMs = options.windowMs ?? 60_000;
  const global = new PQueue({ concurrency: checkCount('maxConcurrency', options.maxConcurrency ?? 16, 1) });
  const buckets = new Map<string, Bucket>();

  const bucketOf = (group: string, published: number | undefined): Bucket => {
    let bucket = buckets.get(group);
    if (!bucket) {
      const perMinute = overrides[group] ?? published ?? defaultPerMinute;
      // The rate gate comes first and the concurrency slot second, so requests held back by
      // a slow group never occupy slots other groups could use. Carrying over the tasks still
      // waiting for a slot or an answer into the next window's count keeps a backlog that
      // passed the gate late from bursting above the limit.
      const slices = sliceCount(perMinute);
      bucket = {
        queue: new PQueue({ intervalCap: perMinute / slices, interval: windowMs / slices, carryoverIntervalCount: true }),
        pausedUntil: 0,
        timer: undefined,
      };
      buckets.set(group, bucket);
    }
    return bucket;
  };

  const rethrowAbort = (error: unknown, signal: AbortSignal | undefined): never => {
    // p-queue rejects with its own AbortError; callers expect the reason they aborted with.
    if (signal?.aborted) throw signal.reason;
    throw error;
  };

  return {
    async schedule(group, publishedPerMinute, task, signal) {
      const bucket = bucketOf(group, publishedPerMinute);
      try {
        return await bucket.queue.add(() => global.add(task, { signal }), { signal });
      } catch (error) {
        return rethrowAbort(error, signal);
      }
    },
    pauseGroup(group, ms) {
      const bucket = bucketOf(group, undefined);
      const until = Date.now() + ms;
      if (until <= bucket.pausedUntil) return;
      bucket.pausedUntil = until;
      bucket.queue.pause();
      clearTimeout(bucket.timer);
      bucket.timer = setTimeout(() => {
        bucket.timer = undefined;
        bucket.queue.start();
      }, ms);
    },
    pending() {
      return Object.fromEntries([...buckets].map(([group, bucket]) => [group, bucket.queue.size + bucket.queue.pending]));
    },
  };
}
