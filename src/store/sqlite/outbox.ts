import { newNotificationToRow, rowToNotification, settledColumns } from '../notification-row.js';
import { assertLeaseTtl, normaliseFilter, runNotFound } from '../run-row.js';
import type { OutboxFacet } from '../types.js';
import { type SqliteContext } from './open.js';
import { isSqliteError } from './statements.js';

export function sqliteOutbox(context: SqliteContext): OutboxFacet {
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
