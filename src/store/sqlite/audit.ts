import type Database from 'better-sqlite3';
import { AUDIT_GENESIS, auditLimit, rowToAuditEntry, sealAuditRow, type AuditRow } from '../audit-row.js';
import type { AuditFacet } from '../types.js';
import type { SqliteContext } from './open.js';

const auditColumns = `seq, at, action, outcome, actor_json AS actorJson, object_json AS objectJson,
  detail_json AS detailJson, prev_hash AS prevHash, hash`;

interface AuditQuery {
  action: string | null;
  actor: string | null;
  since: string | null;
  afterSeq: number;
  limit: number;
}

function prepareAudit(db: Database.Database) {
  return {
    last: db.prepare<[], Pick<AuditRow, 'seq' | 'hash'>>(`SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1`),
    insert: db.prepare<AuditRow>(`
      INSERT INTO audit_log (seq, at, action, outcome, actor_json, object_json, detail_json, prev_hash, hash)
      VALUES (@seq, @at, @action, @outcome, @actorJson, @objectJson, @detailJson, @prevHash, @hash)`),
    list: db.prepare<AuditQuery, AuditRow>(`
      SELECT ${auditColumns} FROM audit_log
      WHERE seq > @afterSeq AND (@action IS NULL OR action = @action) AND (@since IS NULL OR at >= @since)
        AND (@actor IS NULL OR json_extract(actor_json, '$.name') = @actor)
      ORDER BY seq LIMIT @limit`),
  };
}

/** The audit log (`audit_log`): an entry is chained to the last one under the write lock. */
export function sqliteAudit(context: SqliteContext): AuditFacet {
  const { resolved, db, open } = context;
  let statements: ReturnType<typeof prepareAudit> | undefined;
  const prepared = () => (statements ??= prepareAudit(db));
  return {
    async appendAudit(entry) {
      open();
      const { last, insert } = prepared();
      // IMMEDIATE: the last entry is read under the write lock, so two processes never chain to the same one.
      const row = db
        .transaction(() => {
          const before = last.get();
          const sealed = sealAuditRow(
            entry,
            (before?.seq ?? 0) + 1,
            resolved.now().toISOString(),
            before?.hash ?? AUDIT_GENESIS,
          );
          insert.run(sealed);
          return sealed;
        })
        .immediate();
      return rowToAuditEntry(row);
    },

    async listAudit(filter = {}) {
      open();
      return prepared()
        .list.all({
          action: filter.action ?? null,
          actor: filter.actor ?? null,
          since: filter.since ?? null,
          afterSeq: filter.afterSeq ?? 0,
          limit: auditLimit(filter),
        })
        .map(rowToAuditEntry);
    },
  };
}
