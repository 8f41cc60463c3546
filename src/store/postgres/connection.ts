/**
 * The PostgreSQL store's connections: the pool (opened and migrated, or refused in the
 * operator's terms), the one queue all calls of a store go through (`serial`), transactions,
 * and what a failure is called.
 */
import type pg from 'pg';
import { postgresMigrations, postgresSchemaVersion } from './schema.js';
import {
  SQL_CREATE_VERSION_TABLE,
  SQL_LOCK_MIGRATIONS,
  SQL_RUN_FENCE,
  SQL_SCHEMA_VERSION,
  SQL_SET_SCHEMA_VERSION,
} from './sql.js';
import { runNotFound } from '../run-row.js';
import { StoreError, StoreErrorCode } from '../store-error.js';
import type { RunStoreOptions } from '../types.js';

export interface PostgresRunStoreOptions extends RunStoreOptions {
  /** `postgres://user:password@host:port/database` (libpq's URL form). */
  url: string;
  /** Connections kept open by this process. @default 4 */
  maxConnections?: number;
  /** How long to wait for the server when connecting. @default 5000 */
  connectTimeoutMs?: number;
  /** The longest a buffered journal entry waits for its commit. @default 50 */
  flushAfterMs?: number;
  /** Buffered journal entries that make the buffer full. @default 256 */
  maxBufferedEntries?: number;
}

/** A store's way to its database: every call of the store goes through `serial`. */
export interface PostgresLink {
  driver: typeof pg;
  pool: pg.Pool;
  url: string;
  /** Runs `work` after every call made before it (one process's journal stays in order). */
  serial<T>(work: () => Promise<T>): Promise<T>;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  /** `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Whether `close` began: a call queued after it is refused. */
  readonly closed: boolean;
  markClosed(): void;
}

/**
 * Connects to `options.url` and migrates the database (or refuses one a newer Fleetbook
 * migrated). Every failure to get there is a StoreError with exit code 2 and a message naming
 * the URL without its password.
 */
export async function openPostgresLink(options: PostgresRunStoreOptions): Promise<PostgresLink> {
  const url = options.url;
  // Loaded when a shared store is opened: the driver costs every other process (the SQLite
  // store's `fleetbook run`) about 10 MB of memory and start-up time it never uses.
  const { default: driver } = await import('pg');
  let pool: pg.Pool;
  try {
    pool = new driver.Pool({
      connectionString: url,
      max: options.maxConnections ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    });
  } catch (error) {
    throw connectionProblem(error, url);
  }
  // An idle connection the server drops (a restart) must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  try {
    await migrate(pool, url);
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof StoreError) throw error;
    throw connectionProblem(error, url);
  }
  return linkOf(driver, pool, url);
}

function linkOf(driver: typeof pg, pool: pg.Pool, url: string): PostgresLink {
  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();
  return {
    driver,
    pool,
    url,
    serial<T>(work: () => Promise<T>): Promise<T> {
      const result = chain.then(async () => {
        if (closed) throw new StoreError('The run store is closed.', StoreErrorCode.storeClosed);
        try {
          return await work();
        } catch (error) {
          throw unavailable(error, url);
        }
      });
      chain = result.catch(() => undefined);
      return result;
    },
    query: <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => pool.query<R>(text, values),
    inTransaction: (work) => inTransaction(pool, work),
    get closed() {
      return closed;
    },
    markClosed() {
      closed = true;
    },
  };
}

/** `postgres://user:***@host:port/db`: a URL fit for a message (never the password). */
export function redactStoreUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** Why a write changed no row: no such run, or a fence that is no longer the run's. */
export async function refusedWrite(
  client: pg.Pool | pg.PoolClient,
  runId: string,
  fence: number | undefined,
): Promise<StoreError> {
  const row = (await client.query<{ fence: string }>(SQL_RUN_FENCE, [runId])).rows[0];
  if (!row) return runNotFound(runId);
  return new StoreError(
    `run ${runId}: this worker's claim (token ${fence}) was taken over by another (token ${row.fence}); it must not write to the run any more.`,
    StoreErrorCode.staleFence,
    { runId, fence, current: Number(row.fence) },
  );
}

export function pgCode(error: unknown): string | undefined {
  return (error as { code?: string } | null)?.code;
}

/** Why a connection could not be made, in the operator's terms. */
function connectionProblem(error: unknown, url: string): StoreError {
  const where = redactStoreUrl(url);
  const code = pgCode(error);
  const reason =
    code === '28P01' || code === '28000'
      ? 'the server refused the user name or password'
      : code === '3D000'
        ? 'the database does not exist (create it first: `createdb <name>`)'
        : code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH'
          ? `the server cannot be reached (${code})`
          : (error as Error).message;
  return new StoreError(
    `Cannot open the run store ${where}: ${reason}. Check FLEETBOOK_STORE (or the profile's \`store:\`).`,
    StoreErrorCode.storeUnreachable,
    { url: where, pgCode: code },
  );
}

/** A failure of the server or the connection once open: the run stops where its journal is. */
export function unavailable(error: unknown, url: string): StoreError {
  if (error instanceof StoreError) return error;
  return new StoreError(
    `The run store ${redactStoreUrl(url)} failed: ${(error as Error).message}.`,
    StoreErrorCode.storeUnavailable,
    { pgCode: pgCode(error) },
  );
}

async function migrate(pool: pg.Pool, url: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(SQL_LOCK_MIGRATIONS);
    await client.query(SQL_CREATE_VERSION_TABLE);
    const found = (await client.query<{ version: number }>(SQL_SCHEMA_VERSION)).rows[0]?.version ?? 0;
    if (found > postgresSchemaVersion) {
      await client.query('ROLLBACK');
      throw new StoreError(
        `The run store ${redactStoreUrl(url)} was migrated by a newer Fleetbook (schema version ${found}; this one knows up to ${postgresSchemaVersion}). ` +
          `Upgrade Fleetbook, or point FLEETBOOK_STORE at another database.`,
        StoreErrorCode.storeTooNew,
        { url: redactStoreUrl(url), found, supported: postgresSchemaVersion },
      );
    }
    for (let version = found; version < postgresSchemaVersion; version += 1)
      await client.query(postgresMigrations[version] ?? '');
    if (found < postgresSchemaVersion) await client.query(SQL_SET_SCHEMA_VERSION, [postgresSchemaVersion]);
  });
}

/** `work` in one transaction on one connection of `pool`: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
