import { sqliteAudit } from './audit.js';
import type { RunStore } from '../types.js';
import { sqliteJournal } from './journal.js';
import { sqliteLeases } from './leases.js';
import { openSqliteContext, type SqliteRunStoreOptions } from './open.js';
import { sqliteOutbox } from './outbox.js';
import { sqliteRuns } from './runs.js';
import { sqliteSessions } from './sessions.js';
import { sqliteTokens } from './tokens.js';
export type { SqliteRunStoreOptions } from './open.js';

/**
 * The embedded run store: one SQLite file in WAL mode, so readers (`fleetbook runs`) never
 * block the run that is writing, and several processes can share it. `synchronous =
 * NORMAL` makes each append durable against a crash of the process (what resume is for)
 * without an fsync per journal entry; a power loss may cost the last entries. Its facets (runs, journal,
 * outbox, leases, tokens, sessions) are one file each, over one `SqliteContext` (`open.ts`).
 */
export function createSqliteRunStore(options: SqliteRunStoreOptions): RunStore {
  const context = openSqliteContext(options);
  const { db, commit } = context;
  return {
    ...sqliteRuns(context),
    ...sqliteJournal(context),
    ...sqliteOutbox(context),
    ...sqliteLeases(context),
    ...sqliteTokens(context),
    ...sqliteSessions(context),
    ...sqliteAudit(context),
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
