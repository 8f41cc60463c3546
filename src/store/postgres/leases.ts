import { assertLeaseTtl } from '../run-row.js';
import type { LeasesFacet } from '../types.js';
import { type PostgresContext } from './open.js';
import {
  SQL_ACQUIRE_LEASE,
  SQL_GET_SCHEDULE,
  SQL_LEASE_HOLDER,
  SQL_PATCH_SCHEDULE,
  SQL_PUSH_RATE,
  SQL_RELEASE_LEASE,
  SQL_RENEW_LEASE,
  SQL_SET_SCHEDULE,
  SQL_TAKE_RATE,
} from './sql.js';

function leaseAndScheduleMethods(context: PostgresContext): Omit<LeasesFacet, 'takeRate' | 'pushRate'> {
  const { resolved, serial, query } = context;
  return {
    acquireLease: (key, owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        return (await query(SQL_ACQUIRE_LEASE, [key, owner, nowMs, nowMs + ttlMs])).rowCount === 1;
      }),

    renewLease: (key, owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        return (await query(SQL_RENEW_LEASE, [key, owner, nowMs, nowMs + ttlMs])).rowCount === 1;
      }),

    releaseLease: (key, owner) =>
      serial(async () => {
        await query(SQL_RELEASE_LEASE, [key, owner]);
      }),

    leaseHolder: (key) =>
      serial(async () => {
        const row = (
          await query<{ owner: string; expiresAtMs: string }>(SQL_LEASE_HOLDER, [key, resolved.now().getTime()])
        ).rows[0];
        return row ? { owner: row.owner, expiresAt: new Date(Number(row.expiresAtMs)).toISOString() } : undefined;
      }),

    getScheduleState: (scheduleKey) =>
      serial(
        async () => (await query<{ state: Record<string, unknown> }>(SQL_GET_SCHEDULE, [scheduleKey])).rows[0]?.state,
      ),

    setScheduleState: (scheduleKey, state) =>
      serial(async () => {
        await query(SQL_SET_SCHEDULE, [scheduleKey, JSON.stringify(state), resolved.now().toISOString()]);
      }),

    patchScheduleState: (scheduleKey, patch) =>
      serial(async () => {
        const entries = Object.entries(patch);
        const set = Object.fromEntries(entries.filter(([, value]) => value !== null));
        const removed = entries.filter(([, value]) => value === null).map(([name]) => name);
        await query(SQL_PATCH_SCHEDULE, [scheduleKey, JSON.stringify(set), resolved.now().toISOString(), removed]);
      }),
  };
}

function rateMethods(context: PostgresContext): Pick<LeasesFacet, 'takeRate' | 'pushRate'> {
  const { resolved, serial, query } = context;
  return {
    takeRate: (key, intervalMs, toleranceMs) =>
      serial(async () => {
        const row = (
          await query<{ waitMs: string }>(SQL_TAKE_RATE, [
            key,
            resolved.now().getTime(),
            Math.ceil(intervalMs),
            Math.floor(toleranceMs),
          ])
        ).rows[0];
        return Number(row?.waitMs ?? 0);
      }),

    pushRate: (key, notBeforeMs, toleranceMs) =>
      serial(async () => {
        await query(SQL_PUSH_RATE, [key, Math.ceil(notBeforeMs + toleranceMs)]);
      }),
  };
}

/** Leases, the scheduler's state and rate buckets: what processes sharing the store coordinate by. */
export function postgresLeases(context: PostgresContext): LeasesFacet {
  return { ...leaseAndScheduleMethods(context), ...rateMethods(context) };
}
