import { assertLeaseTtl } from '../run-row.js';
import type { LeasesFacet } from '../types.js';
import type { MemoryTables } from './open.js';

function leaseAndScheduleMethods(tables: MemoryTables): Omit<LeasesFacet, 'takeRate' | 'pushRate'> {
  const { resolved, leases, schedules, open } = tables;
  return {
    async acquireLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      const lease = leases.get(key);
      if (lease && lease.owner !== owner && lease.expiresAtMs > nowMs) return false;
      leases.set(key, { owner, expiresAtMs: nowMs + ttlMs });
      return true;
    },

    async renewLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      const lease = leases.get(key);
      if (lease?.owner !== owner || lease.expiresAtMs <= nowMs) return false;
      lease.expiresAtMs = nowMs + ttlMs;
      return true;
    },

    async releaseLease(key, owner) {
      open();
      if (leases.get(key)?.owner === owner) leases.delete(key);
    },

    async leaseHolder(key) {
      open();
      const lease = leases.get(key);
      if (!lease || lease.expiresAtMs <= resolved.now().getTime()) return undefined;
      return { owner: lease.owner, expiresAt: new Date(lease.expiresAtMs).toISOString() };
    },

    async getScheduleState(scheduleKey) {
      open();
      const text = schedules.get(scheduleKey);
      return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
    },

    async setScheduleState(scheduleKey, state) {
      open();
      schedules.set(scheduleKey, JSON.stringify(state));
    },

    async patchScheduleState(scheduleKey, patch) {
      open();
      const text = schedules.get(scheduleKey);
      const state = text === undefined ? {} : (JSON.parse(text) as Record<string, unknown>);
      for (const [name, value] of Object.entries(patch)) {
        if (value === null) delete state[name];
        else state[name] = value;
      }
      schedules.set(scheduleKey, JSON.stringify(state));
    },
  };
}

function rateMethods(tables: MemoryTables): Pick<LeasesFacet, 'takeRate' | 'pushRate'> {
  const { resolved, rateBuckets, open } = tables;
  return {
    async takeRate(key, intervalMs, toleranceMs) {
      open();
      const now = resolved.now().getTime();
      const tat = Math.max(rateBuckets.get(key) ?? now, now) + Math.ceil(intervalMs);
      rateBuckets.set(key, tat);
      return Math.max(tat - Math.ceil(intervalMs) - Math.floor(toleranceMs) - now, 0);
    },

    async pushRate(key, notBeforeMs, toleranceMs) {
      open();
      rateBuckets.set(key, Math.max(rateBuckets.get(key) ?? 0, Math.ceil(notBeforeMs + toleranceMs)));
    },
  };
}

/** Leases, the scheduler's state and rate buckets: what processes sharing the store coordinate by. */
export function memoryLeases(tables: MemoryTables): LeasesFacet {
  return { ...leaseAndScheduleMethods(tables), ...rateMethods(tables) };
}
