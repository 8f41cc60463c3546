import { AUDIT_GENESIS, auditLimit, rowToAuditEntry, sealAuditRow, type AuditRow } from '../audit-row.js';
import type { AuditFacet } from '../types.js';
import type { PostgresContext } from './open.js';
import { SQL_APPEND_AUDIT, SQL_LAST_AUDIT, SQL_LIST_AUDIT, SQL_LOCK_AUDIT } from './sql.js';

/** The audit log (`audit_log`): an entry is chained to the last one under a lock on the table. */
export function postgresAudit(context: PostgresContext): AuditFacet {
  const { resolved, serial, query, inTransaction } = context;
  return {
    appendAudit: (entry) =>
      serial(() =>
        inTransaction(async (client) => {
          await client.query(SQL_LOCK_AUDIT);
          const before = (await client.query<Pick<AuditRow, 'seq' | 'hash'>>(SQL_LAST_AUDIT)).rows[0];
          const at = resolved.now().toISOString();
          const row = sealAuditRow(entry, Number(before?.seq ?? 0) + 1, at, before?.hash ?? AUDIT_GENESIS);
          await client.query(SQL_APPEND_AUDIT, [
            row.seq,
            row.at,
            row.action,
            row.outcome,
            row.actorJson,
            row.objectJson,
            row.detailJson,
            row.prevHash,
            row.hash,
          ]);
          return rowToAuditEntry(row);
        }),
      ),

    listAudit: (filter = {}) =>
      serial(async () => {
        const values = [filter.afterSeq ?? 0, filter.action ?? null, filter.actor ?? null, filter.since ?? null];
        const rows = (await query<AuditRow>(SQL_LIST_AUDIT, [...values, auditLimit(filter)])).rows;
        return rows.map(rowToAuditEntry);
      }),
  };
}
