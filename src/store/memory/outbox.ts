import { claimable, newNotificationToRow, rowToNotification, settledColumns } from '../notification-row.js';
import { assertLeaseTtl, normaliseFilter } from '../run-row.js';
import type { OutboxFacet } from '../types.js';
import type { MemoryTables } from './open.js';

export function memoryOutbox(tables: MemoryTables): OutboxFacet {
  const { resolved, outbox, open, existing, record } = tables;
  return {
    async addNotifications(items) {
      open();
      const rows = items.map((item) => newNotificationToRow(item, resolved));
      for (const item of rows) existing(item.runId);
      record(rows);
    },

    async listNotifications(filter = {}) {
      open();
      const { limit } = normaliseFilter(filter);
      return [...outbox.values()]
        .filter(
          (row) =>
            (filter.runId === undefined || row.runId === filter.runId) &&
            (filter.state === undefined || row.state === filter.state),
        )
        .slice(0, limit)
        .map(rowToNotification);
    },

    async claimNotification(key, owner, ttlMs, options) {
      open();
      assertLeaseTtl(ttlMs);
      const row = outbox.get(key);
      const nowMs = resolved.now().getTime();
      if (!row || !claimable(row, nowMs, options?.takeOverFrom)) return undefined;
      Object.assign(row, { claimedBy: owner, claimExpiresAtMs: nowMs + ttlMs, attempts: row.attempts + 1 });
      return rowToNotification(row);
    },

    async settleNotification(key, owner, outcome) {
      open();
      const row = outbox.get(key);
      if (!row || row.claimedBy !== owner || row.state !== 'pending') return false;
      const settled = settledColumns(outcome, resolved);
      Object.assign(row, {
        ...settled,
        nextAttemptAtMs: settled.nextAttemptAtMs ?? row.nextAttemptAtMs,
        claimedBy: null,
        claimExpiresAtMs: null,
      });
      return true;
    },
  };
}
