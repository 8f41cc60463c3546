import Database from 'better-sqlite3';
import { journalViewParts, viewOfParts } from './journal-view.js';
import { foldJournal, mapIterable, SMALL_EVENT_BYTES, STEP_EVENT_JSON_START, withoutValues } from './fold-journal.js';
import { normaliseTimestamp } from './payload.js';
import {
  assertLeaseTtl,
  cancelEvent,
  cancellableAtOnce,
  cancelledError,
  drivenEnd,
  defaultListLimit,
  waitColumns,
  encodeEvent,
  newRunToRow,
  normaliseFilter,
  resolveStoreOptions,
  rowToEntry,
  rowToRun,
  runExists,
  runNotFound,
  statusChange,
  waitEndingOf,
  type JournalRow,
  type RunRow,
} from './run-row.js';
import { rowToApiToken, tokenExists, type ApiTokenRow } from './api-token-row.js';
import { migrations, schemaVersion } from './schema.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import { newNotificationToRow, rowToNotification, settledColumns, type NotificationRow } from './notification-row.js';
import type {
  CancelOutcome,
  JournalView,
  RunFilter,
  RunResultRecord,
  RunStore,
  RunStoreOptions,
  RunCount,
  WebSession,
} from './types.js';
import { RunStatus } from './types.js';

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

/** The most rows one INSERT of a buffered batch writes (2 parameters each, far below SQLite's limit). */
const maxRowsPerInsert = 64;

/**
 * An event's JSON without the step values a `values: false` read leaves out, cut by SQLite (no
 * parse in JS of the MB of API answers a fleet's journal holds), a `log:` step's message kept
 * (as `withoutValues` does). An event without values or a small one is read whole and cut by
 * `withoutValues` after the parse it gets anyway (see `SMALL_EVENT_BYTES`: `octet_length` reads
 * the record's header only).
 */
const SQL_EVENT_WITHOUT_VALUES = `CASE
  WHEN substr(event_json, 1, ${STEP_EVENT_JSON_START.length}) <> '${STEP_EVENT_JSON_START}' OR octet_length(event_json) < ${SMALL_EVENT_BYTES}
    THEN event_json
  WHEN json_type(event_json, '$.outputs.message') = 'text'
    THEN json_set(json_remove(event_json, '$.input', '$.outputs'), '$.outputs', json_object('message', json_extract(event_json, '$.outputs.message')))
  ELSE json_remove(event_json, '$.input', '$.outputs')
END`;

/** A journal entry appended but not yet committed; `at` is the time of the append. */
interface PendingEntry {
  runId: string;
  at: string;
  eventJson: string;
  /** An unbuffered append's caller, told when the commit that holds its entry ends. */
  waiter?: { resolve(): void; reject(error: unknown): void };
}

const runColumns = `
  id, playbook, playbook_source AS playbookSource, playbook_hash AS playbookHash,
  inputs_json AS inputsJson, secret_input_names_json AS secretInputNamesJson,
  defaulted_secret_inputs_json AS defaultedSecretInputsJson, dry_run AS dryRun,
  trigger_json AS triggerJson, started_at AS startedAt, status, ended_at AS endedAt,
  outputs_json AS outputsJson, error_json AS errorJson, resumes,
  wait_json AS waitJson, wait_due_at AS waitDueAt, cancel_json AS cancelJson`;

/**
 * The status readers see (`runs list`, `runs show`, the server's views): a `running` run whose
 * driver's lease (`run:<id>`) lapsed or is gone is `interrupted`, since the process that drove it
 * died (a SIGKILL, a lost machine) and nothing drives it until someone resumes it. `@nowMs`.
 */
const SQL_SHOWN_STATUS = `CASE WHEN runs.status = '${RunStatus.running}' AND NOT EXISTS (
    SELECT 1 FROM leases WHERE leases.key = 'run:' || runs.id AND leases.expires_at_ms > @nowMs
  ) THEN '${RunStatus.interrupted}' ELSE runs.status END`;
/** `runColumns` with the status readers see. */
const shownRunColumns = runColumns.replace(/\bstatus,/, `${SQL_SHOWN_STATUS} AS status,`);

const tokenColumns = `id, name, role, hash, created_at AS createdAt, revoked_at AS revokedAt`;
const notificationColumns = `
  key, run_id AS runId, event, segment, channel, message_json AS messageJson, state, attempts, created_at AS createdAt,
  next_attempt_at_ms AS nextAttemptAtMs, sent_at AS sentAt, last_error AS lastError, claimed_by AS claimedBy,
  claim_expires_at_ms AS claimExpiresAtMs`;

function isSqliteError(error: unknown, code: string): boolean {
  return error instanceof Database.SqliteError && error.code === code;
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

/**
 * The embedded run store: one SQLite file in WAL mode, so readers (`fleetbook runs`) never
 * block the run that is writing, and several processes can share it. `synchronous =
 * NORMAL` makes each append durable against a crash of the process (what resume is for)
 * without an fsync per journal entry; a power loss may cost the last entries.
 */
export function createSqliteRunStore(options: SqliteRunStoreOptions): RunStore {
  const resolved = resolveStoreOptions(options);
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

  const statements = {
    insertRun: db.prepare<RunRow>(`
      INSERT INTO runs (id, playbook, playbook_source, playbook_hash, inputs_json, secret_input_names_json, defaulted_secret_inputs_json, dry_run,
        trigger_json, started_at, status, ended_at, outputs_json, error_json, resumes)
      VALUES (@id, @playbook, @playbookSource, @playbookHash, @inputsJson, @secretInputNamesJson, @defaultedSecretInputsJson, @dryRun,
        @triggerJson, @startedAt, @status, @endedAt, @outputsJson, @errorJson, @resumes)`),
    // One statement: the next seq is read and written under the same write lock, so two
    // connections appending to one run never collide.
    append: db.prepare<[string, string, string, string]>(`
      INSERT INTO journal (run_id, seq, at, event_json)
      SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ? FROM journal WHERE run_id = ?`),
    setStatus: db.prepare<{ id: string; status: string; endedAt: string | null }>(
      `UPDATE runs SET status = @status, ended_at = @endedAt WHERE id = @id`,
    ),
    setStatusAndResult: db.prepare<{
      id: string;
      status: string;
      endedAt: string | null;
      outputsJson: string | null;
      errorJson: string | null;
    }>(
      `UPDATE runs SET status = @status, ended_at = @endedAt, outputs_json = @outputsJson, error_json = @errorJson WHERE id = @id`,
    ),
    markResumed: db.prepare<[string]>(
      `UPDATE runs SET status = '${RunStatus.running}', ended_at = NULL, outputs_json = NULL, error_json = NULL, resumes = resumes + 1,
        wait_json = NULL, wait_due_at = NULL WHERE id = ?`,
    ),
    suspend: db.prepare<{ id: string; waitJson: string; waitDueAt: string | null }>(
      `UPDATE runs SET status = '${RunStatus.waiting}', ended_at = NULL, wait_json = @waitJson, wait_due_at = @waitDueAt WHERE id = @id`,
    ),
    endWait: db.prepare<{
      id: string;
      status: string;
      endedAt: string | null;
      outputsJson: string | null;
      errorJson: string | null;
    }>(
      `UPDATE runs SET status = @status, ended_at = @endedAt, outputs_json = @outputsJson, error_json = @errorJson,
        wait_json = NULL, wait_due_at = NULL WHERE id = @id AND status = '${RunStatus.waiting}'`,
    ),
    dueWaits: db.prepare<[string, number], RunRow>(
      `SELECT ${runColumns} FROM runs WHERE status = '${RunStatus.waiting}' AND wait_due_at <= ? ORDER BY wait_due_at LIMIT ?`,
    ),
    cancelNow: db.prepare<{ id: string; endedAt: string; errorJson: string }>(
      `UPDATE runs SET status = '${RunStatus.cancelled}', ended_at = @endedAt, error_json = @errorJson, wait_json = NULL, wait_due_at = NULL
        WHERE id = @id AND status IN ('${RunStatus.waiting}', '${RunStatus.queued}', '${RunStatus.interrupted}')`,
    ),
    /** `cancelNow` of a run read as `interrupted` (its row may say `running`), under the same write lock. */
    cancelShown: db.prepare<{ id: string; endedAt: string; errorJson: string }>(
      `UPDATE runs SET status = '${RunStatus.cancelled}', ended_at = @endedAt, error_json = @errorJson, wait_json = NULL, wait_due_at = NULL
        WHERE id = @id`,
    ),
    requestCancel: db.prepare<{ id: string; cancelJson: string }>(
      `UPDATE runs SET cancel_json = @cancelJson WHERE id = @id AND status = '${RunStatus.running}'`,
    ),
    runExists: db.prepare<[string], { found: number }>(`SELECT 1 AS found FROM runs WHERE id = ?`),
    lastSeq: db.prepare<[string], { seq: number }>(`SELECT COALESCE(MAX(seq), 0) AS seq FROM journal WHERE run_id = ?`),
    appendAt: db.prepare<[string, number, string, string]>(
      `INSERT INTO journal (run_id, seq, at, event_json) VALUES (?, ?, ?, ?)`,
    ),
    getRun: db.prepare<[string], RunRow>(`SELECT ${runColumns} FROM runs WHERE id = ?`),
    shownRun: db.prepare<{ id: string; nowMs: number }, RunRow>(`SELECT ${shownRunColumns} FROM runs WHERE id = @id`),
    listRuns: db.prepare<
      {
        playbook: string | null;
        status: string | null;
        since: string | null;
        until: string | null;
        idPrefix: string | null;
        limit: number;
        nowMs: number;
      },
      RunRow
    >(`
      SELECT ${shownRunColumns} FROM runs
      WHERE (@playbook IS NULL OR playbook = @playbook) AND (@status IS NULL OR ${SQL_SHOWN_STATUS} = @status)
        AND (@since IS NULL OR started_at >= @since) AND (@until IS NULL OR started_at <= @until)
        AND (@idPrefix IS NULL OR substr(id, 1, length(@idPrefix)) = @idPrefix)
      ORDER BY started_at DESC, rowid DESC LIMIT @limit`),
    journal: db.prepare<[string, number], JournalRow>(
      `SELECT run_id AS runId, seq, at, event_json AS eventJson FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq`,
    ),
    journalPage: db.prepare<[string, number, number], JournalRow>(
      `SELECT run_id AS runId, seq, at, event_json AS eventJson FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    journalPageWithoutValues: db.prepare<[string, number, number], JournalRow>(
      `SELECT run_id AS runId, seq, at, ${SQL_EVENT_WITHOUT_VALUES} AS eventJson FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    // The seqs as one JSON array parameter: one statement for any number of them.
    journalAt: db.prepare<[string, string], JournalRow>(
      `SELECT run_id AS runId, seq, at, event_json AS eventJson FROM journal WHERE run_id = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    ),
    journalView: db.prepare<[string], { throughSeq: number; viewJson: string }>(
      `SELECT through_seq AS throughSeq, view_json AS viewJson FROM journal_views WHERE run_id = ? ORDER BY part`,
    ),
    // A view's first part, of a run that exists (no row otherwise), never replacing a view through a later seq.
    saveJournalView: db.prepare<{ runId: string; throughSeq: number; viewJson: string }>(`
      INSERT INTO journal_views (run_id, part, through_seq, view_json) SELECT id, 0, @throughSeq, @viewJson FROM runs WHERE id = @runId
      ON CONFLICT (run_id, part) DO UPDATE SET through_seq = excluded.through_seq, view_json = excluded.view_json
      WHERE excluded.through_seq >= journal_views.through_seq`),
    dropJournalViewParts: db.prepare<[string]>(`DELETE FROM journal_views WHERE run_id = ? AND part > 0`),
    addJournalViewPart: db.prepare<[string, number, number, string]>(
      `INSERT INTO journal_views (run_id, part, through_seq, view_json) VALUES (?, ?, ?, ?)`,
    ),
    acquireLease: db.prepare<{ key: string; owner: string; nowMs: number; expiresAtMs: number }>(`
      INSERT INTO leases (key, owner, expires_at_ms) VALUES (@key, @owner, @expiresAtMs)
      ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at_ms = excluded.expires_at_ms
      WHERE leases.owner = excluded.owner OR leases.expires_at_ms <= @nowMs`),
    // By owner, and only a live row: a renewal never takes a released or lapsed lease back.
    renewLease: db.prepare<{ key: string; owner: string; nowMs: number; expiresAtMs: number }>(
      `UPDATE leases SET expires_at_ms = @expiresAtMs WHERE key = @key AND owner = @owner AND expires_at_ms > @nowMs`,
    ),
    releaseLease: db.prepare<[string, string]>(`DELETE FROM leases WHERE key = ? AND owner = ?`),
    leaseHolder: db.prepare<[string, number], { owner: string; expiresAtMs: number }>(
      `SELECT owner, expires_at_ms AS expiresAtMs FROM leases WHERE key = ? AND expires_at_ms > ?`,
    ),
    getSchedule: db.prepare<[string], { stateJson: string }>(
      `SELECT state_json AS stateJson FROM schedule_state WHERE schedule_key = ?`,
    ),
    setSchedule: db.prepare<[string, string, string]>(`
      INSERT INTO schedule_state (schedule_key, state_json, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (schedule_key) DO UPDATE SET state_json = excluded.state_json, updated_at = excluded.updated_at`),
    prune: db.prepare<[string]>(`DELETE FROM runs WHERE ended_at IS NOT NULL AND ended_at < ?`),
    // GCRA in one statement, under SQLite's write lock (see SQL_TAKE_RATE of the PostgreSQL store).
    takeRate: db.prepare<{ key: string; now: number; interval: number; tolerance: number }, { waitMs: number }>(`
      INSERT INTO rate_buckets (bucket_key, tat_ms) VALUES (@key, @now + @interval)
      ON CONFLICT (bucket_key) DO UPDATE SET tat_ms = MAX(rate_buckets.tat_ms, @now) + @interval
      RETURNING MAX(tat_ms - @interval - @tolerance - @now, 0) AS waitMs`),
    createApiToken: db.prepare<{
      id: string;
      name: string;
      role: string;
      hash: string;
      createdAt: string;
    }>(`INSERT INTO api_tokens (id, name, role, hash, created_at) VALUES (@id, @name, @role, @hash, @createdAt)`),
    getApiToken: db.prepare<[string], ApiTokenRow>(`SELECT ${tokenColumns} FROM api_tokens WHERE id = ?`),
    listApiTokens: db.prepare<[], ApiTokenRow>(`SELECT ${tokenColumns} FROM api_tokens ORDER BY created_at, id`),
    revokeApiToken: db.prepare<[string, string, string], ApiTokenRow>(`
      UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? OR name = ? RETURNING ${tokenColumns}`),
    countRuns: db.prepare<{ nowMs: number }, RunCount>(
      `SELECT playbook, ${SQL_SHOWN_STATUS} AS status, COUNT(*) AS count FROM runs GROUP BY 1, 2 ORDER BY 1, 2`,
    ),
    createWebSession: db.prepare<WebSession>(`
      INSERT INTO web_sessions (id_hash, token_id, created_at, expires_at_ms) VALUES (@idHash, @tokenId, @createdAt, @expiresAtMs)`),
    getWebSession: db.prepare<[string, number], WebSession>(`
      SELECT id_hash AS idHash, token_id AS tokenId, created_at AS createdAt, expires_at_ms AS expiresAtMs
      FROM web_sessions WHERE id_hash = ? AND expires_at_ms > ?`),
    deleteWebSession: db.prepare<[string]>(`DELETE FROM web_sessions WHERE id_hash = ?`),
    sweepWebSessions: db.prepare<[number]>(`DELETE FROM web_sessions WHERE expires_at_ms <= ?`),
    // One row per key and per (run, event, segment, channel): a notification recorded twice (a
    // retried end) stays the first row, whatever state it is in (a sent one stays sent).
    addNotification: db.prepare<NotificationRow>(`
      INSERT INTO notifications (key, run_id, event, segment, channel, message_json, state, attempts, created_at, next_attempt_at_ms)
      VALUES (@key, @runId, @event, @segment, @channel, @messageJson, @state, @attempts, @createdAt, @nextAttemptAtMs)
      ON CONFLICT DO NOTHING`),
    listNotifications: db.prepare<{ runId: string | null; state: string | null; limit: number }, NotificationRow>(`
      SELECT ${notificationColumns} FROM notifications
      WHERE (@runId IS NULL OR run_id = @runId) AND (@state IS NULL OR state = @state)
      ORDER BY created_at, rowid LIMIT @limit`),
    // One UPDATE under the write lock: of two claims at once (two processes, or two deliveries of
    // one), one changes the row. A live claim is taken by no one, its own owner included.
    claimNotification: db.prepare<
      { key: string; owner: string; nowMs: number; expiresAtMs: number; takeOverFrom: string | null },
      NotificationRow
    >(`
      UPDATE notifications SET claimed_by = @owner, claim_expires_at_ms = @expiresAtMs, attempts = attempts + 1
      WHERE key = @key AND state = 'pending' AND next_attempt_at_ms <= @nowMs
        AND (claimed_by IS NULL OR claim_expires_at_ms <= @nowMs OR claimed_by = @takeOverFrom)
      RETURNING ${notificationColumns}`),
    // By owner: a sender whose claim was taken over (it was presumed dead) settles nothing.
    settleNotification: db.prepare<{
      key: string;
      owner: string;
      state: string;
      sentAt: string | null;
      lastError: string | null;
      nextAttemptAtMs: number | null;
    }>(`
      UPDATE notifications SET state = @state, sent_at = @sentAt, last_error = @lastError,
        next_attempt_at_ms = COALESCE(@nextAttemptAtMs, next_attempt_at_ms), claimed_by = NULL, claim_expires_at_ms = NULL
      WHERE key = @key AND claimed_by = @owner AND state = 'pending'`),
    pushRate: db.prepare<{ key: string; tat: number }>(`
      INSERT INTO rate_buckets (bucket_key, tat_ms) VALUES (@key, @tat)
      ON CONFLICT (bucket_key) DO UPDATE SET tat_ms = MAX(rate_buckets.tat_ms, excluded.tat_ms)`),
  };

  function open(): void {
    if (!db.open) throw new StoreError('The run store is closed.', StoreErrorCode.storeClosed);
  }
  function changedRun(runId: string, changes: number): void {
    if (changes === 0) throw runNotFound(runId);
  }

  // An entry's time as text: a loop appends dozens of entries in one millisecond, and formatting
  // the same time again for each was a few per cent of a quiet step's CPU.
  let lastAppendMs = Number.NaN;
  let lastAppendAt = '';
  const appendedAt = (): string => {
    const ms = resolved.nowMs();
    if (ms !== lastAppendMs) {
      lastAppendMs = ms;
      lastAppendAt = new Date(ms).toISOString();
    }
    return lastAppendAt;
  };

  // Buffered appends (see `RunStore.append`): kept in order here, committed in one transaction.
  const flushAfterMs = options.flushAfterMs ?? 50;
  const maxBufferedEntries = options.maxBufferedEntries ?? 1024;
  const buffer: PendingEntry[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  // Runs known to exist, so a buffered append is refused for an unknown run when it is made,
  // not later in a commit that has no caller to tell (cleared by prune).
  const knownRuns = new Set<string>();
  const insertEntry = (entry: PendingEntry): void => {
    statements.append.run(entry.runId, entry.at, entry.eventJson, entry.runId);
  };
  // Multi-row INSERTs of a batch, by row count (powers of two up to `maxRowsPerInsert`), prepared
  // on first use: one statement per 64 rows costs a fraction of 64 single-row ones in binding and
  // stepping, which was most of a buffered append's time. The rows of one statement are one run's
  // consecutive entries: its id and first seq are bound once (`@runId`, `@seq + i`), each row
  // binds only its time and event.
  const insertsByRows = new Map<number, Database.Statement<[string[], { runId: string; seq: number }]>>();
  const insertOf = (rows: number): Database.Statement<[string[], { runId: string; seq: number }]> => {
    let statement = insertsByRows.get(rows);
    if (!statement) {
      const tuples = Array.from({ length: rows }, (_, row) => `(@runId, @seq + ${row}, ?, ?)`);
      statement = db.prepare(`INSERT INTO journal (run_id, seq, at, event_json) VALUES ${tuples.join(', ')}`);
      insertsByRows.set(rows, statement);
    }
    return statement;
  };
  // A batch looks up each run's last seq once and numbers its entries from there: inside the
  // transaction the write lock is held, so no other process can append in between.
  const insertEntries = db.transaction((entries: PendingEntry[]) => {
    const lastSeqs = new Map<string, number>();
    for (let first = 0; first < entries.length;) {
      const { runId } = entries[first] as PendingEntry;
      let end = first + 1;
      while (end < entries.length && end - first < maxRowsPerInsert && entries[end]?.runId === runId) end += 1;
      const rows = 2 ** Math.floor(Math.log2(end - first));
      const seq = (lastSeqs.get(runId) ?? statements.lastSeq.get(runId)?.seq ?? 0) + 1;
      const values: string[] = [];
      for (let index = first; index < first + rows; index += 1) {
        const entry = entries[index] as PendingEntry;
        values.push(entry.at, entry.eventJson);
      }
      insertOf(rows).run(values, { runId, seq });
      lastSeqs.set(runId, seq + rows - 1);
      first += rows;
    }
  });

  /**
   * Commits the buffered entries in one transaction. When it fails
   * nothing is written: the unbuffered appends it held are told, and the buffered entries are
   * kept for the next commit to try again.
   */
  function commit(): void {
    if (flushTimer) {
      clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    if (buffer.length === 0) return;
    try {
      if (buffer.length === 1) insertEntry(buffer[0]!);
      else insertEntries(buffer);
    } catch (caught) {
      const error = isSqliteError(caught, 'SQLITE_CONSTRAINT_FOREIGNKEY')
        ? runNotFound(buffer.find((entry) => entry.waiter)?.runId ?? buffer[0]?.runId ?? '')
        : caught;
      const kept = buffer.filter((entry) => !entry.waiter);
      for (const entry of buffer) entry.waiter?.reject(error);
      buffer.splice(0, buffer.length, ...kept);
      throw error;
    }
    for (const entry of buffer) entry.waiter?.resolve();
    buffer.length = 0;
  }

  /**
   * Group commit: the unbuffered appends of one turn of the event loop (the answers of many
   * systems' requests arrive together) are committed in one transaction at its end, each caller
   * resolved once its entry is durable. One commit per append rewrote the journal's last pages
   * into the WAL each time: most of a fleet run's SQLite time.
   */
  let commitScheduled = false;
  const commitAtTurnEnd = (): void => {
    commitScheduled = false;
    try {
      commit();
    } catch {
      // The callers of the failed commit were told; the buffered entries wait for the next one.
    }
  };
  function commitSoon(entry: PendingEntry): Promise<void> {
    knownRun(entry.runId);
    const committed = new Promise<void>((resolve, reject) => {
      entry.waiter = { resolve, reject };
    });
    buffer.push(entry);
    if (!commitScheduled) {
      commitScheduled = true;
      setImmediate(commitAtTurnEnd);
    }
    return committed;
  }

  function knownRun(runId: string): void {
    if (!knownRuns.has(runId)) {
      if (!statements.runExists.get(runId)) throw runNotFound(runId);
      knownRuns.add(runId);
    }
  }

  function keepBuffered(entry: PendingEntry): void {
    knownRun(entry.runId);
    buffer.push(entry);
    if (buffer.length >= maxBufferedEntries) {
      commit();
      return;
    }
    if (!flushTimer) {
      flushTimer = setTimeout(() => {
        flushTimer = undefined;
        try {
          commit();
        } catch {
          // Nothing was written and the entries are still buffered: the next commit (the next
          // unbuffered append, read, status change or close) tries again and reports the failure.
        }
      }, flushAfterMs);
      // A pending commit does not keep the process alive: an exit without close is a crash.
      flushTimer.unref();
    }
  }

  /** What every append that succeeded resolves to: one promise, not one per append. */
  const appended = Promise.resolve();

  const addNotifications = (rows: NotificationRow[]): void => {
    for (const row of rows) statements.addNotification.run(row);
  };
  /** A view's parts in one transaction; false (nothing written) when the run is unknown or its view is later. */
  const saveViewParts = db.transaction((runId: string, view: JournalView): boolean => {
    const parts = journalViewParts(view);
    const first = parts.next();
    if (first.done) return false;
    const { throughSeq } = view;
    if (statements.saveJournalView.run({ runId, throughSeq, viewJson: first.value }).changes === 0) return false;
    statements.dropJournalViewParts.run(runId);
    let part = 0;
    for (const viewJson of parts) statements.addJournalViewPart.run(runId, (part += 1), throughSeq, viewJson);
    return true;
  });

  /** Writes a status, its result and the notifications it causes (inside a transaction). */
  function writeEnd(runId: string, status: RunStatus, result: RunResultRecord | undefined): RunStatus {
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
   * A driver's end, the status and the notifications it causes in one transaction (both are
   * recorded or neither), decided on the row as it is then (`drivenEnd`: a cancellation wins).
   */
  const endDrive = db.transaction(
    (runId: string, status: RunStatus, result: RunResultRecord | undefined): RunStatus => {
      const row = statements.getRun.get(runId);
      if (!row) throw runNotFound(runId);
      const ended = drivenEnd(row, runId, status, result);
      return writeEnd(runId, ended.status, ended.result);
    },
  );

  return {
    async createRun(run) {
      open();
      const row = newRunToRow(run, resolved);
      try {
        statements.insertRun.run(row);
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')) throw runExists(row.id);
        throw error;
      }
      knownRuns.add(row.id);
      return rowToRun(row);
    },

    // Not async: an append is hot (two per loop item), and a buffered one needs no promise of its
    // own. A failure is a rejection, as from the other methods.
    append(runId, event, appendOptions) {
      try {
        open();
        const entry = { runId, at: appendedAt(), eventJson: encodeEvent(runId, event, resolved) };
        if (!appendOptions?.buffered) return commitSoon(entry);
        keepBuffered(entry);
        return appended;
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async setRunStatus(runId, status, result) {
      open();
      commit();
      statusChange(runId, status, result, resolved);
      // IMMEDIATE: the row is read under the write lock, so a cancel is either before the end or refused after it.
      return endDrive.immediate(runId, status, result);
    },

    async addNotifications(items) {
      open();
      const rows = items.map((item) => newNotificationToRow(item, resolved));
      try {
        db.transaction(() => addNotifications(rows))();
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_FOREIGNKEY')) throw runNotFound(rows[0]?.runId ?? '');
        throw error;
      }
    },

    async listNotifications(filter = {}) {
      open();
      const { limit } = normaliseFilter(filter);
      return statements.listNotifications
        .all({ runId: filter.runId ?? null, state: filter.state ?? null, limit })
        .map(rowToNotification);
    },

    async claimNotification(key, owner, ttlMs, claimOptions) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      const row = statements.claimNotification.get({
        key,
        owner,
        nowMs,
        expiresAtMs: nowMs + ttlMs,
        takeOverFrom: claimOptions?.takeOverFrom ?? null,
      });
      return row && rowToNotification(row);
    },

    async settleNotification(key, owner, outcome) {
      open();
      return statements.settleNotification.run({ key, owner, ...settledColumns(outcome, resolved) }).changes === 1;
    },

    async markResumed(runId) {
      open();
      commit();
      changedRun(runId, statements.markResumed.run(runId).changes);
    },

    async suspendRun(runId, wait) {
      open();
      commit();
      const columns = waitColumns(runId, wait, resolved);
      return db
        .transaction((): RunStatus => {
          const row = statements.getRun.get(runId);
          if (!row) throw runNotFound(runId);
          const ended = drivenEnd(row, runId, RunStatus.waiting, undefined);
          if (ended.status !== RunStatus.waiting) return writeEnd(runId, ended.status, ended.result);
          changedRun(runId, statements.suspend.run({ id: runId, ...columns }).changes);
          return RunStatus.waiting;
        })
        .immediate();
    },

    async endWait(runId, ending) {
      open();
      commit();
      const change = statusChange(runId, ending.next, {}, resolved);
      // IMMEDIATE: the wait is read under the write lock, so of two deciders one finds it waiting.
      return db
        .transaction(() => {
          const { outcome, event } = waitEndingOf(statements.getRun.get(runId), ending);
          if (!event) return outcome;
          statements.endWait.run({
            id: runId,
            status: change.status,
            endedAt: change.endedAt,
            outputsJson: change.outputsJson ?? null,
            errorJson: change.errorJson ?? null,
          });
          insertEntry({ runId, at: resolved.now().toISOString(), eventJson: encodeEvent(runId, event, resolved) });
          return outcome;
        })
        .immediate();
    },

    async listDueWaits(now, limit = defaultListLimit) {
      open();
      commit();
      return statements.dueWaits.all(normaliseTimestamp(now, 'now'), limit).map(rowToRun);
    },

    async cancelRun(runId, by) {
      open();
      commit();
      const at = resolved.now().toISOString();
      return db
        .transaction((): CancelOutcome => {
          // As readers see it: a running run whose driver died is driven by no one, so it ends at once.
          const row = statements.shownRun.get({ id: runId, nowMs: resolved.nowMs() });
          if (!row) throw runNotFound(runId);
          if (!cancellableAtOnce.has(row.status) && row.status !== RunStatus.running)
            return { outcome: 'ended', status: row.status };
          const error = cancelledError(runId, by);
          const cancelNow = cancellableAtOnce.has(row.status) ? statements.cancelShown : statements.cancelNow;
          if (cancelNow.run({ id: runId, endedAt: at, errorJson: JSON.stringify(error) }).changes === 1) {
            insertEntry({ runId, at, eventJson: encodeEvent(runId, cancelEvent(by, false), resolved) });
            return { outcome: 'cancelled' };
          }
          if (statements.requestCancel.run({ id: runId, cancelJson: JSON.stringify({ by, at }) }).changes === 1) {
            insertEntry({ runId, at, eventJson: encodeEvent(runId, cancelEvent(by, true), resolved) });
            return { outcome: 'requested' };
          }
          return { outcome: 'ended', status: row.status };
        })
        .immediate();
    },

    async getRun(runId) {
      open();
      commit();
      const row = statements.shownRun.get({ id: runId, nowMs: resolved.nowMs() });
      return row && rowToRun(row);
    },

    async countRuns() {
      open();
      commit();
      return statements.countRuns.all({ nowMs: resolved.nowMs() });
    },

    async listRuns(filter: RunFilter = {}) {
      open();
      const { since, until, limit } = normaliseFilter(filter);
      commit();
      return statements.listRuns
        .all({
          playbook: filter.playbook ?? null,
          status: filter.status ?? null,
          since: since ?? null,
          until: until ?? null,
          idPrefix: filter.idPrefix ?? null,
          limit,
          nowMs: resolved.nowMs(),
        })
        .map(rowToRun);
    },

    async journal(runId, afterSeq = 0, limit, options) {
      open();
      commit();
      const page = options?.values === false ? statements.journalPageWithoutValues : statements.journalPage;
      const rows =
        limit === undefined && options?.values !== false
          ? statements.journal.all(runId, afterSeq)
          : page.all(runId, afterSeq, limit ?? -1);
      return options?.values === false ? rows.map((row) => withoutValues(rowToEntry(row))) : rows.map(rowToEntry);
    },

    async journalAt(runId, seqs) {
      open();
      commit();
      return statements.journalAt.all(runId, JSON.stringify(seqs)).map(rowToEntry);
    },

    async steps(runId) {
      open();
      commit();
      // One row parsed at a time (`iterate`): the fold keeps the records, never the whole journal.
      return foldJournal(mapIterable(statements.journal.iterate(runId, 0), rowToEntry));
    },

    async journalView(runId) {
      open();
      return viewOfParts(statements.journalView.iterate(runId));
    },

    async saveJournalView(runId, view) {
      open();
      if (!saveViewParts(runId, view) && !statements.runExists.get(runId)) throw runNotFound(runId);
    },

    async acquireLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      return statements.acquireLease.run({ key, owner, nowMs, expiresAtMs: nowMs + ttlMs }).changes === 1;
    },

    async renewLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      return statements.renewLease.run({ key, owner, nowMs, expiresAtMs: nowMs + ttlMs }).changes === 1;
    },

    async releaseLease(key, owner) {
      open();
      statements.releaseLease.run(key, owner);
    },

    async leaseHolder(key) {
      open();
      const row = statements.leaseHolder.get(key, resolved.now().getTime());
      return row ? { owner: row.owner, expiresAt: new Date(row.expiresAtMs).toISOString() } : undefined;
    },

    async getScheduleState(scheduleKey) {
      open();
      const row = statements.getSchedule.get(scheduleKey);
      return row && (JSON.parse(row.stateJson) as Record<string, unknown>);
    },

    async setScheduleState(scheduleKey, state) {
      open();
      statements.setSchedule.run(scheduleKey, JSON.stringify(state), resolved.now().toISOString());
    },

    async patchScheduleState(scheduleKey, patch) {
      open();
      // Read and write in one IMMEDIATE transaction: it holds the write lock from its start, so
      // another process's patch lands wholly before or after this one.
      db.transaction(() => {
        const row = statements.getSchedule.get(scheduleKey);
        const state = row ? (JSON.parse(row.stateJson) as Record<string, unknown>) : {};
        for (const [name, value] of Object.entries(patch)) {
          if (value === null) delete state[name];
          else state[name] = value;
        }
        statements.setSchedule.run(scheduleKey, JSON.stringify(state), resolved.now().toISOString());
      }).immediate();
    },

    async prune(before) {
      open();
      const cutoff = normaliseTimestamp(before, 'before');
      commit();
      knownRuns.clear();
      return statements.prune.run(cutoff).changes;
    },

    async takeRate(key, intervalMs, toleranceMs) {
      open();
      const row = statements.takeRate.get({
        key,
        now: resolved.now().getTime(),
        interval: Math.ceil(intervalMs),
        tolerance: Math.floor(toleranceMs),
      });
      return row?.waitMs ?? 0;
    },

    async pushRate(key, notBeforeMs, toleranceMs) {
      open();
      statements.pushRate.run({ key, tat: Math.ceil(notBeforeMs + toleranceMs) });
    },

    async createApiToken(token) {
      open();
      try {
        statements.createApiToken.run(token);
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY'))
          throw tokenExists(token.name);
        throw error;
      }
      return rowToApiToken({ ...token, revokedAt: null });
    },

    async getApiToken(id) {
      open();
      const row = statements.getApiToken.get(id);
      return row && { ...rowToApiToken(row), hash: row.hash };
    },

    async listApiTokens() {
      open();
      return statements.listApiTokens.all().map(rowToApiToken);
    },

    async revokeApiToken(idOrName) {
      open();
      const row = statements.revokeApiToken.get(resolved.now().toISOString(), idOrName, idOrName);
      return row && rowToApiToken(row);
    },

    async createWebSession(session) {
      open();
      statements.createWebSession.run(session);
    },

    async getWebSession(idHash) {
      open();
      return statements.getWebSession.get(idHash, resolved.now().getTime());
    },

    async deleteWebSession(idHash) {
      open();
      statements.deleteWebSession.run(idHash);
    },

    async sweepWebSessions() {
      open();
      return statements.sweepWebSessions.run(resolved.now().getTime()).changes;
    },

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
