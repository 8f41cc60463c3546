import { AUDIT_GENESIS, auditLimit, auditRowMatches, rowToAuditEntry, sealAuditRow } from '../audit-row.js';
import type { AuditFacet } from '../types.js';
import type { MemoryTables } from './open.js';

/** The audit log: rows in order, each chained to the one before (see audit-row.ts). */
export function memoryAudit(tables: MemoryTables): AuditFacet {
  const { resolved, auditLog, open } = tables;
  return {
    async appendAudit(entry) {
      open();
      const last = auditLog[auditLog.length - 1];
      const row = sealAuditRow(entry, (last?.seq ?? 0) + 1, resolved.now().toISOString(), last?.hash ?? AUDIT_GENESIS);
      auditLog.push(row);
      return rowToAuditEntry(row);
    },

    async listAudit(filter = {}) {
      open();
      const limit = auditLimit(filter);
      return auditLog
        .filter((row) => auditRowMatches(row, filter))
        .slice(0, limit)
        .map(rowToAuditEntry);
    },
  };
}
