import { postgresAudit } from './audit.js';
/**
 * The team store: the RunStore contract on a PostgreSQL server, so processes on any number of
 * machines share runs, journals, leases and schedules. Every statement is a named constant
 * (sql.ts), with the race it closes. All calls of one store go through one queue
 * (`serial`, connection.ts), so the journal of a process is written in the order it was
 * appended, as with SQLite. Its facets (runs, journal, outbox, leases, tokens, sessions,
 * and the queue) are one file each, over one `PostgresContext` (`open.ts`).
 */
import { postgresJournal } from './journal.js';
import { postgresLeases } from './leases.js';
import { postgresOutbox } from './outbox.js';
import { postgresRuns } from './runs.js';
import { postgresSessions } from './sessions.js';
import { postgresTokens } from './tokens.js';
import type { QueueStore } from '../types.js';
import { type PostgresRunStoreOptions } from './connection.js';
import { openPostgresContext } from './open.js';
import { postgresQueue } from './queue.js';
export { redactStoreUrl, type PostgresRunStoreOptions } from './connection.js';

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
    ...postgresRuns(context),
    ...postgresJournal(context),
    ...postgresOutbox(context),
    ...postgresLeases(context),
    ...postgresTokens(context),
    ...postgresSessions(context),
    ...postgresAudit(context),
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
