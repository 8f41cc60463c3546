import type pg from 'pg';
import {
  openPostgresLink,
  pgCode,
  refusedWrite,
  type PostgresLink,
  type PostgresRunStoreOptions,
} from './connection.js';
import { PostgresJournalBuffer } from './journal-buffer.js';
import {
  notificationValues,
  runRowValues,
  SQL_ADD_NOTIFICATION,
  SQL_INSERT_RUN,
  SQL_LOCK_RUN_STATUS,
  SQL_SET_STATUS,
  SQL_SET_STATUS_AND_RESULT,
} from './sql.js';
import {
  newRunToRow,
  resolveStoreOptions,
  rowToRun,
  runExists,
  runNotFound,
  statusChange,
  type ResolvedStoreOptions,
  type RunRow,
} from '../run-row.js';
import { newNotificationToRow } from '../notification-row.js';
import type { NewRun, QueueStore, RunRecord, RunResultRecord, RunStatus } from '../types.js';

/**
 * What every group of the PostgreSQL store's methods works on: its connections (`link`), the
 * journal's buffer, and the writes several methods share. `self` is the whole store (its fenced
 * views and its paged journal reads go through it), known once the groups are put together.
 */
export interface PostgresContext {
  resolved: ResolvedStoreOptions;
  options: PostgresRunStoreOptions;
  link: PostgresLink;
  driver: typeof pg;
  url: string;
  serial: PostgresLink['serial'];
  query: PostgresLink['query'];
  inTransaction: PostgresLink['inTransaction'];
  pool: pg.Pool;
  journal: PostgresJournalBuffer;
  /** Commits the buffered journal entries; called inside `serial`. */
  commit(): Promise<void>;
  knownRuns: Set<string>;
  /** The connections holding a leadership (`tryLeadership`), ended by `close`. */
  leaderships: Set<pg.Client>;
  self(): QueueStore;
  changedRun(runId: string, rowCount: number | null, fence: number | undefined): Promise<void>;
  /** The run's status and cancellation, its row locked until the transaction ends (a cancel waits for it). */
  lockedRun(client: pg.PoolClient, runId: string): Promise<Pick<RunRow, 'status' | 'cancelJson'>>;
  /** Writes a status, its result and the notifications it causes in `client`'s transaction; fenced. */
  writeEnd(
    client: pg.PoolClient,
    runId: string,
    status: RunStatus,
    result: RunResultRecord | undefined,
    fence: number | undefined,
  ): Promise<RunStatus>;
  insertRun(run: NewRun, status: RunStatus): Promise<RunRecord>;
}

/** Opens the store's connections (see `openPostgresLink`) and what its methods share. */
export async function openPostgresContext(
  options: PostgresRunStoreOptions,
  self: () => QueueStore,
): Promise<PostgresContext> {
  const resolved = resolveStoreOptions(options);
  const link = await openPostgresLink(options);
  const { serial, query, pool } = link;
  const journal = new PostgresJournalBuffer(link, options.flushAfterMs ?? 50, options.maxBufferedEntries ?? 256);
  const { knownRuns } = journal;
  const context: PostgresContext = {
    resolved,
    options,
    link,
    driver: link.driver,
    url: link.url,
    serial,
    query,
    inTransaction: link.inTransaction,
    pool,
    journal,
    commit: () => journal.commit(),
    knownRuns,
    leaderships: new Set<pg.Client>(),
    self,
    async changedRun(runId, rowCount, fence) {
      if (!rowCount) throw await refusedWrite(pool, runId, fence);
    },
    async lockedRun(client, runId) {
      const row = (await client.query<Pick<RunRow, 'status' | 'cancelJson'>>(SQL_LOCK_RUN_STATUS, [runId])).rows[0];
      if (!row) throw runNotFound(runId);
      return row;
    },
    writeEnd: (client, runId, status, result, fence) => writeEnd(resolved, client, runId, status, result, fence),
    insertRun: (run, status) =>
      serial(async () => {
        const row = { ...newRunToRow(run, resolved), status };
        try {
          await query(SQL_INSERT_RUN, runRowValues(row));
        } catch (error) {
          if (pgCode(error) === '23505') throw runExists(row.id);
          throw error;
        }
        knownRuns.add(row.id);
        return rowToRun(row);
      }),
  };
  return context;
}

async function writeEnd(
  resolved: ResolvedStoreOptions,
  client: pg.PoolClient,
  runId: string,
  status: RunStatus,
  result: RunResultRecord | undefined,
  fence: number | undefined,
): Promise<RunStatus> {
  const change = statusChange(runId, status, result, resolved);
  const notifications = (result?.notifications ?? []).map((item) => newNotificationToRow(item, resolved));
  const info =
    change.outputsJson === undefined
      ? await client.query(SQL_SET_STATUS, [runId, change.status, change.endedAt, fence ?? null])
      : await client.query(SQL_SET_STATUS_AND_RESULT, [
          runId,
          change.status,
          change.endedAt,
          change.outputsJson,
          change.errorJson ?? null,
          fence ?? null,
        ]);
  if (!info.rowCount) throw await refusedWrite(client, runId, fence);
  for (const row of notifications) await client.query(SQL_ADD_NOTIFICATION, notificationValues(row));
  return status;
}
