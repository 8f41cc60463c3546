import { normaliseFilter, assertLeaseTtl, runNotFound } from './run-row.js';
import { playbooksJsonOf, rowToApiToken, tokenExists, withoutPlaybooks } from './api-token-row.js';
import { newNotificationToRow, rowToNotification, settledColumns } from './notification-row.js';
import { openSqliteContext, type SqliteContext, type SqliteRunStoreOptions } from './sqlite-context.js';
import { sqliteJournalReads, sqliteRunReads, sqliteRunWrites, sqliteWaits } from './sqlite-runs.js';
import { isSqliteError } from './sqlite-statements.js';
import { webSessionFromRow, webSessionToRow } from './web-session-row.js';
import type { RunStore } from './types.js';
import type {
  LeaseAndScheduleMethods,
  OutboxMethods,
  RateAndTokenMethods,
  WebSessionMethods,
} from './method-groups.js';

export type { SqliteRunStoreOptions } from './sqlite-context.js';

/**
 * The embedded run store: one SQLite file in WAL mode, so readers (`fleetbook runs`) never
 * block the run that is writing, and several processes can share it. `synchronous =
 * NORMAL` makes each append durable against a crash of the process (what resume is for)
 * without an fsync per journal entry; a power loss may cost the last entries. Its methods come
 * in groups by the tables they keep, over one `SqliteContext`.
 */
export function createSqliteRunStore(options: SqliteRunStoreOptions): RunStore {
  const context = openSqliteContext(options);
  const { db, commit } = context;
  return {
    ...sqliteRunWrites(context),
    ...sqliteWaits(context),
    ...sqliteRunReads(context),
    ...sqliteJournalReads(context),
    ...outboxMethods(context),
    ...leaseAndScheduleMethods(context),
    ...rateAndTokenMethods(context),
    ...webSessionMethods(context),
    async close() {
      if (!db.open) return;
      try {
        commit();
      } finally {
        db.close();
      }
    },
  };
}

function outboxMethods(context: SqliteContext): OutboxMethods {
  const { resolved, db, statements, open, addNotifications } = context;
  return {
    async addNotifications(items) {
      open();
      const rows = items.map((item) => newNotificationToRow(item, resolved));
      try {
        db.transaction(() => addNotifications(rows))();
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_FOREIGNKEY')) throw runNotFound(rows[0]?.runId ?? '');
        throw error;
      }
    },

    async listNotifications(filter = {}) {
      open();
      const { limit } = normaliseFilter(filter);
      return statements.listNotifications
        .all({ runId: filter.runId ?? null, state: filter.state ?? null, limit })
        .map(rowToNotification);
    },

    async claimNotification(key, owner, ttlMs, claimOptions) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      const row = statements.claimNotification.get({
        key,
        owner,
        nowMs,
        expiresAtMs: nowMs + ttlMs,
        takeOverFrom: claimOptions?.takeOverFrom ?? null,
      });
      return row && rowToNotification(row);
    },

    async settleNotification(key, owner, outcome) {
      open();
      return statements.settleNotification.run({ key, owner, ...settledColumns(outcome, resolved) }).changes === 1;
    },
  };
}

function leaseAndScheduleMethods(context: SqliteContext): LeaseAndScheduleMethods {
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

function rateAndTokenMethods(context: SqliteContext): RateAndTokenMethods {
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

    async createApiToken(token) {
      open();
      try {
        statements.createApiToken.run({ ...withoutPlaybooks(token), playbooksJson: playbooksJsonOf(token) });
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY'))
          throw tokenExists(token.name);
        throw error;
      }
      return rowToApiToken({ ...withoutPlaybooks(token), revokedAt: null, playbooksJson: playbooksJsonOf(token) });
    },

    async getApiToken(id) {
      open();
      const row = statements.getApiToken.get(id);
      return row && { ...rowToApiToken(row), hash: row.hash };
    },

    async listApiTokens() {
      open();
      return statements.listApiTokens.all().map(rowToApiToken);
    },

    async revokeApiToken(idOrName) {
      open();
      const row = statements.revokeApiToken.get(resolved.now().toISOString(), idOrName, idOrName);
      return row && rowToApiToken(row);
    },
  };
}

function webSessionMethods(context: SqliteContext): WebSessionMethods {
  const { resolved, statements, open } = context;
  return {
    async createWebSession(session) {
      open();
      statements.createWebSession.run(webSessionToRow(session));
    },

    async getWebSession(idHash) {
      open();
      const row = statements.getWebSession.get(idHash, resolved.now().getTime());
      return row && webSessionFromRow(row);
    },

    async deleteWebSession(idHash) {
      open();
      statements.deleteWebSession.run(idHash);
    },

    async sweepWebSessions() {
      open();
      return statements.sweepWebSessions.run(resolved.now().getTime()).changes;
    },
  };
}
