import type { AsyncFaultKind, AsyncFaultSource } from './async-operations.js';
import { loadConfigFile } from './config-file.js';
import type { Rng } from './context.js';
import { createRng } from './rng.js';

/** One request fault rule. Probabilities are drawn from the seeded fault rng, so a run is reproducible. */
export interface FaultRule {
  /** Operation id, or a glob on operation ids (`devices.*`, `*`). */
  route: string;
  /** Status to answer instead of serving the request (e.g. 503). */
  status?: number;
  /** Share of matching requests that get `status`. @default 1 */
  rate?: number;
  /** Real milliseconds added before the request is served. */
  latencyMs?: number;
  /** Share of matching requests whose connection is dropped (socket destroyed, no answer). */
  drop?: number;
  /**
   * Drop the connection after the handler ran: the write is applied, the client never hears
   * of it. Alone (no `drop`), drops at `rate`. @default false
   */
  afterAccept?: boolean;
  /** Apply at most this many times (latency-only rules count each delayed request). @default unlimited */
  count?: number;
}

export interface AsyncFaultRule {
  /** Async operation type (`software-update`), or a glob. */
  type: string;
  /**
   * `FAILED`: ends FAILED when it would have ended. `TIMEDOUT`: RUNNING until its
   * `timeoutMinutes` pass, then TIMEDOUT. `never`: stays RUNNING for good (the waiter's
   * own deadline must end the wait).
   */
  outcome: AsyncFaultKind;
  /** @default unlimited */
  count?: number;
}

export interface FaultSettings {
  rules?: FaultRule[];
  asyncOperations?: AsyncFaultRule[];
  /**
   * Revoke every token issued so far, once. `true`: when the settings are applied, or, when
   * no token exists yet (a faults file given at start), just before the first authenticated
   * request. `{afterRequests: N}`: after N more authenticated requests (those that reach the
   * token check; the token endpoint does not count), just before the next one, which is then
   * answered 401 `revoked`.
   */
  revokeTokens?: boolean | { afterRequests: number };
}

/** What to do to one request. */
export interface FaultDecision {
  latencyMs: number;
  status?: number;
  drop?: 'before' | 'after';
}

const FAULTS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['route'],
        properties: {
          route: { type: 'string', minLength: 1 },
          status: { type: 'integer', minimum: 400, maximum: 599 },
          rate: { type: 'number', minimum: 0, maximum: 1 },
          latencyMs: { type: 'number', minimum: 0 },
          drop: { type: 'number', minimum: 0, maximum: 1 },
          afterAccept: { type: 'boolean' },
          count: { type: 'integer', minimum: 0 },
        },
      },
    },
    asyncOperations: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'outcome'],
        properties: {
          type: { type: 'string', minLength: 1 },
          outcome: { enum: ['FAILED', 'TIMEDOUT', 'never'] },
          count: { type: 'integer', minimum: 0 },
        },
      },
    },
    // One schema for both forms (the object keywords only apply to an object), so a mistake
    // is reported once rather than once per alternative.
    revokeTokens: {
      type: ['boolean', 'object'],
      additionalProperties: false,
      required: ['afterRequests'],
      properties: { afterRequests: { type: 'integer', minimum: 0 } },
    },
  },
} as const;

/** Reads and checks fault settings from a YAML/JSON path or an object (`UsageError` `INVALID_FAULTS`). */
export function loadFaultSettings(source: string | object): FaultSettings {
  return loadConfigFile<FaultSettings>(source, FAULTS_SCHEMA, 'INVALID_FAULTS', 'faults file');
}

function globMatcher(glob: string): (name: string) => boolean {
  if (!glob.includes('*')) return (name) => name === glob;
  const pattern = new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return (name) => pattern.test(name);
}

interface Counted<R> {
  rule: R;
  matches: (name: string) => boolean;
  remaining: number;
}

function counted<R extends { count?: number }>(rule: R, key: string): Counted<R> {
  return { rule, matches: globMatcher(key), remaining: rule.count ?? Number.POSITIVE_INFINITY };
}

export interface Faults extends AsyncFaultSource {
  /** Replaces the settings (and revokes tokens when they say so). */
  set(settings: FaultSettings): void;
  /** The settings with the uses left of each counted rule. */
  current(): FaultSettings;
  decide(operationId: string): FaultDecision;
  /**
   * Called once per authenticated request, before its token is checked: true when a pending
   * `revokeTokens` is due now (the caller revokes every token issued so far).
   */
  revocationDue(): boolean;
}

/**
 * Fault injection, reproducible by seed: the same settings and the same sequence of
 * requests (and of settings) give the same faults; one random sequence serves every setting. `revokeTokens` revokes every token issued so far and
 * returns how many there were.
 */
export function createFaults(seed: number, revokeTokens: () => number): Faults {
  const rng: Rng = createRng(seed).fork('faults');
  let rules: Array<Counted<FaultRule>> = [];
  let asyncRules: Array<Counted<AsyncFaultRule>> = [];
  /** Authenticated requests still served before the pending revocation; undefined: none pending. */
  let revokeAfter: number | undefined;

  const withRemaining = <R extends { count?: number }>(entry: Counted<R>): R =>
    entry.rule.count === undefined ? entry.rule : { ...entry.rule, count: entry.remaining };

  return {
    set(settings) {
      // The random sequence runs on across updates: restarting it at each `set` would give a
      // test that adjusts its faults as it goes the same draws after every adjustment.
      rules = (settings.rules ?? []).map((rule) => counted(rule, rule.route));
      asyncRules = (settings.asyncOperations ?? []).map((rule) => counted(rule, rule.type));
      revokeAfter = undefined;
      const revoke = settings.revokeTokens;
      if (typeof revoke === 'object') revokeAfter = revoke.afterRequests;
      // With no token issued yet, revoking now would do nothing: the first token used is revoked instead.
      else if (revoke === true && revokeTokens() === 0) revokeAfter = 0;
    },
    current: () => ({
      rules: rules.map(withRemaining),
      asyncOperations: asyncRules.map(withRemaining),
      ...(revokeAfter === undefined ? {} : { revokeTokens: { afterRequests: revokeAfter } }),
    }),
    revocationDue() {
      if (revokeAfter === undefined) return false;
      if (revokeAfter > 0) {
        revokeAfter -= 1;
        return false;
      }
      revokeAfter = undefined;
      return true;
    },
    decide(operationId) {
      const decision: FaultDecision = { latencyMs: 0 };
      // Rules that answer instead of serving (a status, a drop) share one draw per request, each
      // taking its own slice of [0, 1) in rule order: `rate: 0.1` means a tenth of the matching
      // requests whatever other rules on the route ask, as an operator reads the file. Slices
      // past 1 are cut (the rules' rates add up to more than every request).
      let draw: number | undefined;
      let edge = 0;
      const hits = (rate: number): boolean => {
        const from = edge;
        edge = Math.min(1, edge + rate);
        if (from === 0 && edge >= 1) return true;
        draw ??= rng.next();
        return draw >= from && draw < edge;
      };
      for (const entry of rules) {
        if (entry.remaining <= 0 || !entry.matches(operationId)) continue;
        const { rule } = entry;
        let applied = false;
        if (rule.latencyMs) {
          decision.latencyMs += rule.latencyMs;
          applied = true;
        }
        if (decision.status === undefined && decision.drop === undefined) {
          // `afterAccept` alone means: drop after the handler, at `rate`.
          const dropRate = rule.drop ?? (rule.afterAccept ? (rule.rate ?? 1) : 0);
          if (dropRate > 0 && hits(dropRate)) {
            decision.drop = rule.afterAccept ? 'after' : 'before';
            applied = true;
          } else if (rule.status !== undefined && hits(rule.rate ?? 1)) {
            decision.status = rule.status;
            applied = true;
          }
        }
        if (applied) entry.remaining -= 1;
      }
      return decision;
    },
    takeAsyncFault(type) {
      const entry = asyncRules.find((candidate) => candidate.remaining > 0 && candidate.matches(type));
      if (!entry) return undefined;
      entry.remaining -= 1;
      return entry.rule.outcome;
    },
  };
}
