/**
 * The team store: the RunStore contract on a PostgreSQL server, so processes on any number of
 * machines share runs, journals, leases and schedules. Every statement is a named constant
 * (postgres-sql.ts), with the race it closes. All calls of one store go through one queue
 * (`serial`, postgres-connection.ts), so the journal of a process is written in the order it was
 * appended, as with SQLite. Its methods come in groups by the tables they keep, over one
 * `PostgresContext`.
 */
import { playbooksJsonOf, rowToApiToken, tokenExists, withoutPlaybooks, type ApiTokenRow } from './api-token-row.js';
import { pgCode, type PostgresRunStoreOptions } from './postgres-connection.js';
import { openPostgresContext, type PostgresContext } from './postgres-context.js';
import {
  postgresJournalReads,
  postgresQueue,
  postgresRunReads,
  postgresRunWrites,
  postgresWaits,
} from './postgres-runs.js';
import {
  notificationValues,
  SQL_ACQUIRE_LEASE,
  SQL_ADD_NOTIFICATION,
  SQL_CLAIM_NOTIFICATION,
  SQL_CREATE_API_TOKEN,
  SQL_CREATE_WEB_SESSION,
  SQL_DELETE_WEB_SESSION,
  SQL_GET_API_TOKEN,
  SQL_GET_SCHEDULE,
  SQL_GET_WEB_SESSION,
  SQL_LEASE_HOLDER,
  SQL_LIST_API_TOKENS,
  SQL_LIST_NOTIFICATIONS,
  SQL_PATCH_SCHEDULE,
  SQL_PUSH_RATE,
  SQL_RELEASE_LEASE,
  SQL_RENEW_LEASE,
  SQL_REVOKE_API_TOKEN,
  SQL_SET_SCHEDULE,
  SQL_SETTLE_NOTIFICATION,
  SQL_STILL_LEADER,
  SQL_SWEEP_WEB_SESSIONS,
  SQL_TAKE_RATE,
  SQL_TRY_LEADERSHIP,
} from './postgres-sql.js';
import { assertLeaseTtl, normaliseFilter, runNotFound } from './run-row.js';
import { newNotificationToRow, rowToNotification, settledColumns, type NotificationRow } from './notification-row.js';
import type { QueueStore, RunQueue } from './types.js';
import { webSessionFromRow, webSessionToRow, type WebSessionRow } from './web-session-row.js';
import type {
  LeaseAndScheduleMethods,
  OutboxMethods,
  RateAndTokenMethods,
  WebSessionMethods,
} from './method-groups.js';

export { redactStoreUrl, type PostgresRunStoreOptions } from './postgres-connection.js';

/**
 * Opens the store at `url`: connects, migrates the database (or refuses one a newer Fleetbook
 * migrated), and resolves once it is ready. Every failure to get there is a StoreError with
 * exit code 2 and a message naming the URL without its password.
 */
export async function createPostgresRunStore(options: PostgresRunStoreOptions): Promise<QueueStore> {
  const context = await openPostgresContext(options, () => store);
  const { link, serial, commit, leaderships, pool } = context;
  const store: QueueStore = {
    ...postgresQueue(context),
    ...leadershipMethods(context),
    ...postgresRunWrites(context),
    ...postgresWaits(context),
    ...postgresRunReads(context),
    ...postgresJournalReads(context),
    ...outboxMethods(context),
    ...leaseAndScheduleMethods(context),
    ...rateAndTokenMethods(context),
    ...webSessionMethods(context),
    close: async () => {
      if (link.closed) return;
      try {
        await serial(() => commit());
      } finally {
        link.markClosed();
        for (const client of leaderships) await client.end().catch(() => undefined);
        await pool.end().catch(() => undefined);
      }
    },
  };
  return store;
}

function leadershipMethods(context: PostgresContext): Pick<RunQueue, 'tryLeadership'> {
  const { serial, driver, url, options, leaderships } = context;
  return {
    tryLeadership: (name) =>
      serial(async () => {
        // Its own connection, outside the pool: the lock lives exactly as long as it does.
        const client = new driver.Client({
          connectionString: url,
          connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
        });
        let lost = false;
        client.on('error', () => (lost = true));
        client.on('end', () => (lost = true));
        await client.connect();
        const held = (await client.query<{ held: boolean }>(SQL_TRY_LEADERSHIP, [name])).rows[0]?.held === true;
        if (!held) {
          await client.end().catch(() => undefined);
          return undefined;
        }
        leaderships.add(client);
        // A daemon checks on a timer and before each fire: checks that overlap share the one in
        // flight, since a second query on this client while one runs is what pg warns against.
        let checking: Promise<boolean> | undefined;
        const check = async (): Promise<boolean> => {
          if (lost) return false;
          try {
            return (await client.query<{ held: boolean }>(SQL_STILL_LEADER, [name])).rows[0]?.held === true;
          } catch {
            return false;
          }
        };
        return {
          stillHeld() {
            checking ??= check().finally(() => (checking = undefined));
            return checking;
          },
          async release() {
            leaderships.delete(client);
            await client.end().catch(() => undefined);
          },
        };
      }),
  };
}

function outboxMethods(context: PostgresContext): OutboxMethods {
  const { resolved, serial, query, inTransaction } = context;
  return {
    addNotifications: (items) =>
      serial(async () => {
        const rows = items.map((item) => newNotificationToRow(item, resolved));
        try {
          await inTransaction(async (client) => {
            for (const row of rows) await client.query(SQL_ADD_NOTIFICATION, notificationValues(row));
          });
        } catch (error) {
          if (pgCode(error) === '23503') throw runNotFound(rows[0]?.runId ?? '');
          throw error;
        }
      }),

    listNotifications: (filter = {}) =>
      serial(async () => {
        const { limit } = normaliseFilter(filter);
        return (
          await query<NotificationRow>(SQL_LIST_NOTIFICATIONS, [filter.runId ?? null, filter.state ?? null, limit])
        ).rows.map(rowToNotification);
      }),

    claimNotification: (key, owner, ttlMs, claimOptions) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        const row = (
          await query<NotificationRow>(SQL_CLAIM_NOTIFICATION, [
            key,
            owner,
            nowMs,
            nowMs + ttlMs,
            claimOptions?.takeOverFrom ?? null,
          ])
        ).rows[0];
        return row && rowToNotification(row);
      }),

    settleNotification: (key, owner, outcome) =>
      serial(async () => {
        const settled = settledColumns(outcome, resolved);
        return (
          (
            await query(SQL_SETTLE_NOTIFICATION, [
              key,
              owner,
              settled.state,
              settled.sentAt,
              settled.lastError,
              settled.nextAttemptAtMs,
            ])
          ).rowCount === 1
        );
      }),
  };
}

function leaseAndScheduleMethods(context: PostgresContext): LeaseAndScheduleMethods {
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

function rateAndTokenMethods(context: PostgresContext): RateAndTokenMethods {
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

    createApiToken: (token) =>
      serial(async () => {
        try {
          await query(SQL_CREATE_API_TOKEN, [
            token.id,
            token.name,
            token.role,
            token.hash,
            token.createdAt,
            playbooksJsonOf(token),
          ]);
        } catch (error) {
          if (pgCode(error) === '23505') throw tokenExists(token.name);
          throw error;
        }
        return rowToApiToken({ ...withoutPlaybooks(token), revokedAt: null, playbooksJson: playbooksJsonOf(token) });
      }),

    getApiToken: (id) =>
      serial(async () => {
        const row = (await query<ApiTokenRow>(SQL_GET_API_TOKEN, [id])).rows[0];
        return row && { ...rowToApiToken(row), hash: row.hash };
      }),

    listApiTokens: () => serial(async () => (await query<ApiTokenRow>(SQL_LIST_API_TOKENS)).rows.map(rowToApiToken)),

    revokeApiToken: (idOrName) =>
      serial(async () => {
        const row = (await query<ApiTokenRow>(SQL_REVOKE_API_TOKEN, [resolved.now().toISOString(), idOrName])).rows[0];
        return row && rowToApiToken(row);
      }),
  };
}

function webSessionMethods(context: PostgresContext): WebSessionMethods {
  const { resolved, serial, query } = context;
  return {
    createWebSession: (session) =>
      serial(async () => {
        const row = webSessionToRow(session);
        await query(SQL_CREATE_WEB_SESSION, [row.idHash, row.tokenId, row.createdAt, row.expiresAtMs, row.userJson]);
      }),

    getWebSession: (idHash) =>
      serial(async () => {
        const row = (await query<WebSessionRow>(SQL_GET_WEB_SESSION, [idHash, resolved.now().getTime()])).rows[0];
        return row && webSessionFromRow(row);
      }),

    deleteWebSession: (idHash) =>
      serial(async () => {
        await query(SQL_DELETE_WEB_SESSION, [idHash]);
      }),

    sweepWebSessions: () =>
      serial(async () => (await query(SQL_SWEEP_WEB_SESSIONS, [resolved.now().getTime()])).rowCount ?? 0),
  };
}
