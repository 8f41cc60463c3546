import { assertLeaseTtl } from '../run-row.js';
import type { LeasesFacet } from '../types.js';
import { type SqliteContext } from './open.js';

function leaseAndScheduleMethods(context: SqliteContext): Omit<LeasesFacet, 'takeRate' | 'pushRate'> {
  const { resolved, db, statements, open } = context;
  return {
    async acquireLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      return statements.acquireLease.run({ key, owner, nowMs, expiresAtMs: nowMs + ttlMs }).changes === 1;
    },

    async renewLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      return statements.renewLease.run({ key, owner, nowMs, expiresAtMs: nowMs + ttlMs }).changes === 1;
    },

    async releaseLease(key, owner) {
      open();
      statements.releaseLease.run(key, owner);
    },

    async leaseHolder(key) {
      open();
      const row = statements.leaseHolder.get(key, resolved.now().getTime());
      return row ? { owner: row.owner, expiresAt: new Date(row.expiresAtMs).toISOString() } : undefined;
    },

    async getScheduleState(scheduleKey) {
      open();
      const row = statements.getSchedule.get(scheduleKey);
      return row && (JSON.parse(row.stateJson) as Record<string, unknown>);
    },

    async setScheduleState(scheduleKey, state) {
      open();
      statements.setSchedule.run(scheduleKey, JSON.stringify(state), resolved.now().toISOString());
    },

    async patchScheduleState(scheduleKey, patch) {
      open();
      // Read and write in one IMMEDIATE transaction: it holds the write lock from its start, so
      // another process's patch lands wholly before or after this one.
      db.transaction(() => {
        const row = statements.getSchedule.get(scheduleKey);
        const state = row ? (JSON.parse(row.stateJson) as Record<string, unknown>) : {};
        for (const [name, value] of Object.entries(patch)) {
          if (value === null) delete state[name];
          else state[name] = value;
        }
        statements.setSchedule.run(scheduleKey, JSON.stringify(state), resolved.now().toISOString());
      }).immediate();
    },
  };
}

function rateMethods(context: SqliteContext): Pick<LeasesFacet, 'takeRate' | 'pushRate'> {
  const { resolved, statements, open } = context;
  return {
    async takeRate(key, intervalMs, toleranceMs) {
      open();
      const row = statements.takeRate.get({
        key,
        now: resolved.now().getTime(),
        interval: Math.ceil(intervalMs),
        tolerance: Math.floor(toleranceMs),
      });
      return row?.waitMs ?? 0;
    },

    async pushRate(key, notBeforeMs, toleranceMs) {
      open();
      statements.pushRate.run({ key, tat: Math.ceil(notBeforeMs + toleranceMs) });
    },
  };
}

/** Leases, the scheduler's state and rate buckets: what processes sharing the store coordinate by. */
export function sqliteLeases(context: SqliteContext): LeasesFacet {
  return { ...leaseAndScheduleMethods(context), ...rateMethods(context) };
}
