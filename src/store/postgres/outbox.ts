import { newNotificationToRow, rowToNotification, settledColumns, type NotificationRow } from '../notification-row.js';
import { assertLeaseTtl, normaliseFilter, runNotFound } from '../run-row.js';
import type { OutboxFacet } from '../types.js';
import { pgCode } from './connection.js';
import { type PostgresContext } from './open.js';
import {
  notificationValues,
  SQL_ADD_NOTIFICATION,
  SQL_CLAIM_NOTIFICATION,
  SQL_LIST_NOTIFICATIONS,
  SQL_SETTLE_NOTIFICATION,
} from './sql.js';

export function postgresOutbox(context: PostgresContext): OutboxFacet {
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
