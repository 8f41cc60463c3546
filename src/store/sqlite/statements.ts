/**
 * The SQLite store's statements, prepared once per open file, in groups by the tables they
 * touch. Each statement's comment says which race or cost it answers.
 */
import Database from 'better-sqlite3';
import { SMALL_EVENT_BYTES, STEP_EVENT_JSON_START } from '../fold-journal.js';
import type { ApiTokenRow } from '../api-token-row.js';
import type { NotificationRow } from '../notification-row.js';
import type { JournalRow, RunRow } from '../run-row.js';
import type { RunCount } from '../types.js';
import type { WebSessionRow } from '../web-session-row.js';
import { RunStatus } from '../types.js';

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

const tokenColumns = `id, name, role, hash, created_at AS createdAt, revoked_at AS revokedAt, playbooks_json AS playbooksJson`;
const notificationColumns = `
  key, run_id AS runId, event, segment, channel, message_json AS messageJson, state, attempts, created_at AS createdAt,
  next_attempt_at_ms AS nextAttemptAtMs, sent_at AS sentAt, last_error AS lastError, claimed_by AS claimedBy,
  claim_expires_at_ms AS claimExpiresAtMs`;

export function isSqliteError(error: unknown, code: string): boolean {
  return error instanceof Database.SqliteError && error.code === code;
}

/**
 * What the store calls on a prepared statement: the driver's `Statement` under a name this file
 * can export (the driver's types do not export theirs), so `SqliteStatements` can be named.
 */
export interface Statement<BindParameters extends unknown[], Result = unknown> {
  run(...params: BindParameters): Database.RunResult;
  get(...params: BindParameters): Result | undefined;
  all(...params: BindParameters): Result[];
  iterate(...params: BindParameters): IterableIterator<Result>;
}

/** A database as the statement groups use it: `prepare` returns a `Statement`. */
interface Preparer {
  prepare<BindParameters extends unknown[] | object = unknown[], Result = unknown>(
    source: string,
  ): Statement<BindParameters extends unknown[] ? BindParameters : [BindParameters], Result>;
}

/** Every statement of the store, by name. */
export type SqliteStatements = ReturnType<typeof runWriteStatements> &
  ReturnType<typeof runReadStatements> &
  ReturnType<typeof journalStatements> &
  ReturnType<typeof leaseScheduleAndRateStatements> &
  ReturnType<typeof tokenAndSessionStatements> &
  ReturnType<typeof notificationStatements>;

/** Every statement of the store, prepared on `db`. */
export function prepareStatements(db: Database.Database): SqliteStatements {
  // The same object: TypeScript cannot relate the driver's generic `prepare` to this one's.
  const preparer = db as unknown as Preparer;
  return {
    ...runWriteStatements(preparer),
    ...runReadStatements(preparer),
    ...journalStatements(preparer),
    ...leaseScheduleAndRateStatements(preparer),
    ...tokenAndSessionStatements(preparer),
    ...notificationStatements(preparer),
  };
}

/** A run's end as `setStatusAndResult` and `endWait` write it. */
interface EndColumns {
  id: string;
  status: string;
  endedAt: string | null;
  outputsJson: string | null;
  errorJson: string | null;
}

/** A run's rows as its driver and its cancellers write them. */
function runWriteStatements(db: Preparer) {
  return {
    insertRun: db.prepare<RunRow>(`
      INSERT INTO runs (id, playbook, playbook_source, playbook_hash, inputs_json, secret_input_names_json, defaulted_secret_inputs_json, dry_run,
        trigger_json, started_at, status, ended_at, outputs_json, error_json, resumes)
      VALUES (@id, @playbook, @playbookSource, @playbookHash, @inputsJson, @secretInputNamesJson, @defaultedSecretInputsJson, @dryRun,
        @triggerJson, @startedAt, @status, @endedAt, @outputsJson, @errorJson, @resumes)`),
    setStatus: db.prepare<{ id: string; status: string; endedAt: string | null }>(
      `UPDATE runs SET status = @status, ended_at = @endedAt WHERE id = @id`,
    ),
    setStatusAndResult: db.prepare<EndColumns>(
      `UPDATE runs SET status = @status, ended_at = @endedAt, outputs_json = @outputsJson, error_json = @errorJson WHERE id = @id`,
    ),
    markResumed: db.prepare<[string]>(
      `UPDATE runs SET status = '${RunStatus.running}', ended_at = NULL, outputs_json = NULL, error_json = NULL, resumes = resumes + 1,
        wait_json = NULL, wait_due_at = NULL WHERE id = ?`,
    ),
    suspend: db.prepare<{ id: string; waitJson: string; waitDueAt: string | null }>(
      `UPDATE runs SET status = '${RunStatus.waiting}', ended_at = NULL, wait_json = @waitJson, wait_due_at = @waitDueAt WHERE id = @id`,
    ),
    endWait: db.prepare<EndColumns>(
      `UPDATE runs SET status = @status, ended_at = @endedAt, outputs_json = @outputsJson, error_json = @errorJson,
        wait_json = NULL, wait_due_at = NULL WHERE id = @id AND status = '${RunStatus.waiting}'`,
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
  };
}

/** Runs as readers see them (`SQL_SHOWN_STATUS`), and their pruning. */
function runReadStatements(db: Preparer) {
  return {
    runExists: db.prepare<[string], { found: number }>(`SELECT 1 AS found FROM runs WHERE id = ?`),
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
    countRuns: db.prepare<{ nowMs: number }, RunCount>(
      `SELECT playbook, ${SQL_SHOWN_STATUS} AS status, COUNT(*) AS count FROM runs GROUP BY 1, 2 ORDER BY 1, 2`,
    ),
    dueWaits: db.prepare<[string, number], RunRow>(
      `SELECT ${runColumns} FROM runs WHERE status = '${RunStatus.waiting}' AND wait_due_at <= ? ORDER BY wait_due_at LIMIT ?`,
    ),
    prune: db.prepare<[string]>(`DELETE FROM runs WHERE ended_at IS NOT NULL AND ended_at < ?`),
  };
}

function journalStatements(db: Preparer) {
  return {
    // One statement: the next seq is read and written under the same write lock, so two
    // connections appending to one run never collide.
    append: db.prepare<[string, string, string, string]>(`
      INSERT INTO journal (run_id, seq, at, event_json)
      SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ? FROM journal WHERE run_id = ?`),
    lastSeq: db.prepare<[string], { seq: number }>(`SELECT COALESCE(MAX(seq), 0) AS seq FROM journal WHERE run_id = ?`),
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
  };
}

function leaseScheduleAndRateStatements(db: Preparer) {
  return {
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
    // GCRA in one statement, under SQLite's write lock (see SQL_TAKE_RATE of the PostgreSQL store).
    takeRate: db.prepare<{ key: string; now: number; interval: number; tolerance: number }, { waitMs: number }>(`
      INSERT INTO rate_buckets (bucket_key, tat_ms) VALUES (@key, @now + @interval)
      ON CONFLICT (bucket_key) DO UPDATE SET tat_ms = MAX(rate_buckets.tat_ms, @now) + @interval
      RETURNING MAX(tat_ms - @interval - @tolerance - @now, 0) AS waitMs`),
    pushRate: db.prepare<{ key: string; tat: number }>(`
      INSERT INTO rate_buckets (bucket_key, tat_ms) VALUES (@key, @tat)
      ON CONFLICT (bucket_key) DO UPDATE SET tat_ms = MAX(rate_buckets.tat_ms, excluded.tat_ms)`),
  };
}

function tokenAndSessionStatements(db: Preparer) {
  return {
    createApiToken: db.prepare<{
      id: string;
      name: string;
      role: string;
      hash: string;
      createdAt: string;
      playbooksJson: string | null;
    }>(`
      INSERT INTO api_tokens (id, name, role, hash, created_at, playbooks_json)
      VALUES (@id, @name, @role, @hash, @createdAt, @playbooksJson)`),
    getApiToken: db.prepare<[string], ApiTokenRow>(`SELECT ${tokenColumns} FROM api_tokens WHERE id = ?`),
    listApiTokens: db.prepare<[], ApiTokenRow>(`SELECT ${tokenColumns} FROM api_tokens ORDER BY created_at, id`),
    revokeApiToken: db.prepare<[string, string, string], ApiTokenRow>(`
      UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? OR name = ? RETURNING ${tokenColumns}`),
    createWebSession: db.prepare<WebSessionRow>(`
      INSERT INTO web_sessions (id_hash, token_id, created_at, expires_at_ms, user_json)
      VALUES (@idHash, @tokenId, @createdAt, @expiresAtMs, @userJson)`),
    getWebSession: db.prepare<[string, number], WebSessionRow>(`
      SELECT id_hash AS idHash, token_id AS tokenId, created_at AS createdAt, expires_at_ms AS expiresAtMs, user_json AS userJson
      FROM web_sessions WHERE id_hash = ? AND expires_at_ms > ?`),
    deleteWebSession: db.prepare<[string]>(`DELETE FROM web_sessions WHERE id_hash = ?`),
    sweepWebSessions: db.prepare<[number]>(`DELETE FROM web_sessions WHERE expires_at_ms <= ?`),
  };
}

function notificationStatements(db: Preparer) {
  return {
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
  };
}
