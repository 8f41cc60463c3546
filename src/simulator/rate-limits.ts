import type { OperationDescriptor } from '../openapi/index.js';
import { SimHttpError } from './errors.js';

const REAL_MINUTE_MS = 60_000;

export interface RateLimitOutcome {
  headers: Record<string, string>;
}

export interface RateLimits {
  /** The per-minute limit of a group, after scaling and overrides; undefined when unlimited. */
  limitOf(group: string, publishedPerMinute: number | undefined): number | undefined;
  /** Takes one request from the client's bucket of `group`: the rate-limit headers, or a 429 carrying them. */
  take(clientId: string, group: string, perMinute: number): RateLimitOutcome;
}

interface Bucket {
  tokens: number;
  refilledAt: number;
}

/**
 * Per client and group token buckets of capacity = the per-minute limit, refilled
 * continuously over one real minute (limits are about real throughput, not simulated time).
 */
export function createRateLimits(
  options: { scale?: number; overrides?: Record<string, number>; nowMs?: () => number } = {},
): RateLimits {
  const scale = options.scale ?? 1;
  const overrides = options.overrides ?? {};
  const nowMs = options.nowMs ?? (() => performance.now());
  const buckets = new Map<string, Bucket>();

  return {
    limitOf(group, published) {
      const override = overrides[group];
      if (override !== undefined) return override;
      return published === undefined ? undefined : Math.max(1, Math.round(published * scale));
    },
    take(clientId, group, perMinute) {
      const key = `${clientId}\u0000${group}`;
      const now = nowMs();
      const perMs = perMinute / REAL_MINUTE_MS;
      let bucket = buckets.get(key);
      if (!bucket) buckets.set(key, (bucket = { tokens: perMinute, refilledAt: now }));
      bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.refilledAt) * perMs);
      bucket.refilledAt = now;
      const allowed = bucket.tokens >= 1;
      if (allowed) bucket.tokens -= 1;
      const headers = {
        'ratelimit-limit': String(perMinute),
        'ratelimit-remaining': String(Math.floor(bucket.tokens)),
        // Seconds until the bucket is full again.
        'ratelimit-reset': String(Math.ceil((perMinute - bucket.tokens) / perMs / 1000)),
      };
      if (!allowed) {
        const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
        throw new SimHttpError(
          429,
          'TOO_MANY_REQUESTS',
          `Rate limit of ${perMinute} requests per minute exceeded for '${group}'; retry in ${retryAfterSeconds} s`,
          [{ type: 'retry info', retryAfterSeconds }],
          headers,
        );
      }
      return { headers };
    },
  };
}

/** Takes one request of the operation's rate-limit group, adding the rate-limit headers to `headers`; a 429 when none is left. */
export function applyRateLimit(
  rateLimits: RateLimits,
  op: OperationDescriptor,
  clientId: string,
  headers: Record<string, string>,
): void {
  const group = op.rateLimit?.group;
  if (group === undefined) return;
  const limit = rateLimits.limitOf(group, op.rateLimit?.perMinute);
  if (limit === undefined) return;
  Object.assign(headers, rateLimits.take(clientId, group, limit).headers);
}
