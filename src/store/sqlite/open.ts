import Database from 'better-sqlite3';
import { journalViewParts } from '../journal-view.js';
import { drivenEnd, resolveStoreOptions, runNotFound, statusChange, type ResolvedStoreOptions } from '../run-row.js';
import { migrations, schemaVersion } from './schema.js';
import { SqliteJournalBuffer } from './journal-buffer.js';
import { prepareStatements, type SqliteStatements } from './statements.js';
import { StoreError, StoreErrorCode } from '../store-error.js';
import { newNotificationToRow, type NotificationRow } from '../notification-row.js';
import type { JournalView, RunResultRecord, RunStatus, RunStoreOptions } from '../types.js';

export interface SqliteRunStoreOptions extends RunStoreOptions {
  /** The database file (created when missing). `:memory:` works for tests. */
  file: string;
  /** How long a write waits for another process's write lock before failing. @default 5000 */
  busyTimeoutMs?: number;
  /** The longest a buffered journal entry waits for its commit. @default 50 */
  flushAfterMs?: number;
  /**
   * Buffered journal entries that make the buffer full: the one that fills it commits them all.
   * A commit's own cost (its pages to the WAL) was a third of a quiet loop step's SQLite time at
   * 256. @default 1024
   */
  maxBufferedEntries?: number;
}

/**
 * What every group of the SQLite store's methods works on: the open file, its statements, the
 * journal's buffer, and the writes several methods share (a driver's end and its notifications).
 */
export interface SqliteContext {
  resolved: ResolvedStoreOptions;
  db: Database.Database;
  statements: SqliteStatements;
  journal: SqliteJournalBuffer;
  /** Refuses a call on a closed store. */
  open(): void;
  /** Commits the buffered journal entries (see `SqliteJournalBuffer.commit`). */
  commit(): void;
  changedRun(runId: string, changes: number): void;
  addNotifications(rows: NotificationRow[]): void;
  /** A view's parts in one transaction; false (nothing written) when the run is unknown or its view is later. */
  saveViewParts: Database.Transaction<(runId: string, view: JournalView) => boolean>;
  /** Writes a status, its result and the notifications it causes (inside a transaction). */
  writeEnd(runId: string, status: RunStatus, result: RunResultRecord | undefined): RunStatus;
  /**
   * A driver's end, the status and the notifications it causes in one transaction (both are
   * recorded or neither), decided on the row as it is then (`drivenEnd`: a cancellation wins).
   */
  endDrive: Database.Transaction<(runId: string, status: RunStatus, result: RunResultRecord | undefined) => RunStatus>;
}

/** Opens (and migrates) the file of `options`, and prepares what the store's methods share. */
export function openSqliteContext(options: SqliteRunStoreOptions): SqliteContext {
  const resolved = resolveStoreOptions(options);
  const db = openDatabase(options);
  const statements = prepareStatements(db);
  const journal = new SqliteJournalBuffer(
    db,
    statements,
    resolved,
    options.flushAfterMs ?? 50,
    options.maxBufferedEntries ?? 1024,
  );
  const context: SqliteContext = {
    resolved,
    db,
    statements,
    journal,
    open() {
      if (!db.open) throw new StoreError('The run store is closed.', StoreErrorCode.storeClosed);
    },
    commit: () => journal.commit(),
    changedRun(runId, changes) {
      if (changes === 0) throw runNotFound(runId);
    },
    addNotifications(rows) {
      for (const row of rows) statements.addNotification.run(row);
    },
    saveViewParts: db.transaction((runId: string, view: JournalView): boolean => {
      const parts = journalViewParts(view);
      const first = parts.next();
      if (first.done) return false;
      const { throughSeq } = view;
      if (statements.saveJournalView.run({ runId, throughSeq, viewJson: first.value }).changes === 0) return false;
      statements.dropJournalViewParts.run(runId);
      let part = 0;
      for (const viewJson of parts) statements.addJournalViewPart.run(runId, (part += 1), throughSeq, viewJson);
      return true;
    }),
    writeEnd: (runId, status, result) => writeEnd(context, runId, status, result),
    endDrive: db.transaction((runId: string, status: RunStatus, result: RunResultRecord | undefined): RunStatus => {
      const row = statements.getRun.get(runId);
      if (!row) throw runNotFound(runId);
      const ended = drivenEnd(row, runId, status, result);
      return context.writeEnd(runId, ended.status, ended.result);
    }),
  };
  return context;
}

function writeEnd(
  { resolved, statements, changedRun, addNotifications }: SqliteContext,
  runId: string,
  status: RunStatus,
  result: RunResultRecord | undefined,
): RunStatus {
  const change = statusChange(runId, status, result, resolved);
  const notifications = (result?.notifications ?? []).map((item) => newNotificationToRow(item, resolved));
  const { changes } =
    change.outputsJson === undefined
      ? statements.setStatus.run({ id: runId, status: change.status, endedAt: change.endedAt })
      : statements.setStatusAndResult.run({
          id: runId,
          status: change.status,
          endedAt: change.endedAt,
          outputsJson: change.outputsJson,
          errorJson: change.errorJson ?? null,
        });
  changedRun(runId, changes);
  addNotifications(notifications);
  return status;
}

/**
 * The file in WAL mode, so readers (`fleetbook runs`) never block the run that is writing, and
 * several processes can share it. `synchronous = NORMAL` makes each append durable against a
 * crash of the process (what resume is for) without an fsync per journal entry; a power loss
 * may cost the last entries.
 */
function openDatabase(options: SqliteRunStoreOptions): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(options.file, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw new StoreError(
      `Cannot open the run store ${options.file}: ${(error as Error).message}.`,
      StoreErrorCode.storeUnreadable,
      { file: options.file },
    );
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db, options.file);
  } catch (error) {
    db.close();
    if (error instanceof StoreError) throw error;
    throw new StoreError(
      `The run store ${options.file} cannot be read (${(error as Error).message}). Is it a Fleetbook store? Set FLEETBOOK_HOME to another directory to start afresh.`,
      StoreErrorCode.storeUnreadable,
      { file: options.file },
    );
  }
  return db;
}

/** Brings the file to `schemaVersion`, or refuses one written by a newer Fleetbook. */
function migrate(db: Database.Database, file: string): void {
  const found = db.pragma('user_version', { simple: true }) as number;
  if (found > schemaVersion) {
    throw new StoreError(
      `The run store ${file} was written by a newer Fleetbook (schema version ${found}; this one knows up to ${schemaVersion}). ` +
        `Upgrade Fleetbook, or set FLEETBOOK_HOME to another directory.`,
      StoreErrorCode.storeTooNew,
      { file, found, supported: schemaVersion },
    );
  }
  if (found === schemaVersion) return;
  // IMMEDIATE takes the write lock first, so two processes opening a new store at once
  // migrate it once: the second re-reads the version inside the lock and finds it done.
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let version = current; version < schemaVersion; version += 1) db.exec(migrations[version] ?? '');
    db.pragma(`user_version = ${schemaVersion}`);
  }).immediate();
}
