/**
 * The team store: the RunStore contract on a PostgreSQL server, so processes on any number of
 * machines share runs, journals, leases and schedules. Every statement is a named constant
 * below, with the race it closes. All calls of one store go through one queue (`serial`), so
 * the journal of a process is written in the order it was appended, as with SQLite.
 */
import type pg from 'pg';
import { rowToApiToken, tokenExists, type ApiTokenRow } from './api-token-row.js';
import { createJournalFold, journalPages, withoutValues } from './fold-journal.js';
import { journalViewParts, viewOfParts } from './journal-view.js';
import { normaliseTimestamp } from './payload.js';
import { postgresMigrations, postgresSchemaVersion } from './postgres-schema.js';
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
import { StoreError, StoreErrorCode } from './store-error.js';
import { newNotificationToRow, rowToNotification, settledColumns, type NotificationRow } from './notification-row.js';
import { fencedView } from './fenced-view.js';
import type {
  CancelOutcome,
  NewRun,
  QueueStore,
  RunClaim,
  RunFilter,
  RunResultRecord,
  RunStoreOptions,
  WebSession,
} from './types.js';
import { RunStatus } from './types.js';

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

// Any constant key: every opener of a database takes it while migrating, so two processes
// meeting a new database migrate it once (the second finds the version already current).
const MIGRATION_LOCK_KEY = 7_464_961_001;

/** Serialises migrations of one database across processes (see MIGRATION_LOCK_KEY). */
export const SQL_LOCK_MIGRATIONS = `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
/** The version table exists before anything reads it; IF NOT EXISTS lets two first openers both run it. */
export const SQL_CREATE_VERSION_TABLE = `CREATE TABLE IF NOT EXISTS fleetbook_schema (only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row), version INTEGER NOT NULL)`;
/** Read inside the migration lock, so no other opener is between this read and the update. */
export const SQL_SCHEMA_VERSION = `SELECT version FROM fleetbook_schema`;
/** An upsert of the one row: the first migration has no row to update. */
export const SQL_SET_SCHEMA_VERSION = `INSERT INTO fleetbook_schema (version) VALUES ($1) ON CONFLICT (only_row) DO UPDATE SET version = excluded.version`;

const runColumns = `
  id, playbook, playbook_source AS "playbookSource", playbook_hash AS "playbookHash",
  inputs_json AS "inputsJson", secret_input_names_json AS "secretInputNamesJson",
  defaulted_secret_inputs_json AS "defaultedSecretInputsJson", dry_run AS "dryRun",
  trigger_json AS "triggerJson", started_at AS "startedAt", status, ended_at AS "endedAt",
  outputs_json AS "outputsJson", error_json AS "errorJson", resumes,
  wait_json AS "waitJson", wait_due_at AS "waitDueAt", cancel_json AS "cancelJson"`;

/** The primary key refuses a second run with one id, whichever process inserts it first. */
export const SQL_INSERT_RUN = `
  INSERT INTO runs (id, playbook, playbook_source, playbook_hash, inputs_json, secret_input_names_json, defaulted_secret_inputs_json, dry_run,
    trigger_json, started_at, status, ended_at, outputs_json, error_json, resumes)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`;

/**
 * Appends entries to one run's journal, numbered after its last seq. The seq is counted on the
 * run row by an UPDATE: a second appender to the run (another process or connection) waits
 * for the row lock and then counts from the first one's result (an UPDATE re-reads the row it
 * waited for; a MAX(seq) read in the same statement would not), so no two entries get one
 * seq. No row updated means no such run. The times and events come as two JSON arrays of
 * strings (`appendValues`): a JavaScript array parameter is written as an array literal, each
 * element escaped character by character (about 5 % of a fleet run's CPU here).
 */
export const SQL_APPEND = `
  WITH run AS (
    UPDATE runs SET journal_seq = journal_seq + $4::int WHERE id = $1 AND ($5::bigint IS NULL OR fence = $5)
    RETURNING id, journal_seq - $4::int AS base
  )
  INSERT INTO journal (run_id, seq, at, event_json)
  SELECT run.id, run.base + entry.ord, entry.at, entry.event_json
  FROM run, ROWS FROM (json_array_elements_text($2::json), json_array_elements_text($3::json))
    WITH ORDINALITY AS entry (at, event_json, ord)
  RETURNING seq`;

/** The parameters of `SQL_APPEND`: `events` (encoded) of one run, appended at `ats`. */
export function appendValues(
  runId: string,
  ats: readonly string[],
  events: readonly string[],
  fence: number | undefined,
): unknown[] {
  return [runId, JSON.stringify(ats), JSON.stringify(events), events.length, fence ?? null];
}

/**
 * One UPDATE: a concurrent reader sees the old status and end or the new ones, never a mix.
 * With a fence ($4), the row's current token is compared after waiting for its lock, so a
 * status written by a worker whose claim was just taken over is refused, not applied.
 */
export const SQL_SET_STATUS = `UPDATE runs SET status = $2, ended_at = $3 WHERE id = $1 AND ($4::bigint IS NULL OR fence = $4)`;
export const SQL_SET_STATUS_AND_RESULT = `
  UPDATE runs SET status = $2, ended_at = $3, outputs_json = $4, error_json = $5 WHERE id = $1 AND ($6::bigint IS NULL OR fence = $6)`;
/**
 * A driver's end reads the run's status and cancellation under the row's lock: `cancelRun` locks
 * the row too, so a cancel is either committed before the end (and wins) or sees the run ended.
 */
export const SQL_LOCK_RUN_STATUS = `SELECT status, cancel_json AS "cancelJson" FROM runs WHERE id = $1 FOR UPDATE`;
/** `resumes + 1` in the statement: two resumes counted at once both count. Fenced as above. */
export const SQL_MARK_RESUMED = `
  UPDATE runs SET status = '${RunStatus.running}', ended_at = NULL, outputs_json = NULL, error_json = NULL, resumes = resumes + 1,
    wait_json = NULL, wait_due_at = NULL
  WHERE id = $1 AND ($2::bigint IS NULL OR fence = $2)`;
/** Waiting holds nothing: the claim goes with the drive (a worker claims the run again once it is queued). Fenced. */
export const SQL_SUSPEND = `
  UPDATE runs SET status = '${RunStatus.waiting}', ended_at = NULL, wait_json = $2, wait_due_at = $3, claimed_by = NULL, claim_expires_at_ms = NULL
  WHERE id = $1 AND ($4::bigint IS NULL OR fence = $4)`;
/** Only a waiting run: the row lock makes the second of two deciders find it decided. */
export const SQL_END_WAIT = `
  UPDATE runs SET status = $2, ended_at = $3, outputs_json = $4, error_json = $5, wait_json = NULL, wait_due_at = NULL
  WHERE id = $1 AND status = '${RunStatus.waiting}'`;
export const SQL_DUE_WAITS = `
  SELECT ${runColumns} FROM runs WHERE status = '${RunStatus.waiting}' AND wait_due_at <= $1 ORDER BY wait_due_at LIMIT $2`;
/** A running run's driver (any worker) sees the request at its next heartbeat. */
export const SQL_REQUEST_CANCEL = `UPDATE runs SET cancel_json = $2 WHERE id = $1 AND status = '${RunStatus.running}'`;
/** The UNIQUE (schedule, fire time) key makes the second record of one fire insert nothing. */
export const SQL_RECORD_FIRE = `
  INSERT INTO schedule_fires (schedule_key, fire_at, run_id, recorded_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (schedule_key, fire_at) DO NOTHING`;
/**
 * A session-level advisory lock: the server grants it to one connection at a time and drops
 * it when that connection ends (a killed process included), so no lease has to lapse first.
 */
export const SQL_TRY_LEADERSHIP = `SELECT pg_try_advisory_lock(hashtext($1)) AS held`;
/** Whether the dedicated connection still holds the lock (it is gone with a restarted server). */
export const SQL_STILL_LEADER = `
  SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objid = (hashtext($1)::bigint & 4294967295)::oid) AS held`;

/**
 * GCRA in one statement: the bucket's theoretical arrival time moves one interval past
 * max(itself, now), under the row's lock, so processes reserving at once are served one after
 * the other; what is returned is how long this reservation must wait (0 within the tolerance).
 * $2 now, $3 interval, $4 tolerance (ms).
 */
export const SQL_TAKE_RATE = `
  INSERT INTO rate_buckets (bucket_key, tat_ms) VALUES ($1, $2::bigint + $3::bigint)
  ON CONFLICT (bucket_key) DO UPDATE SET tat_ms = GREATEST(rate_buckets.tat_ms, $2::bigint) + $3::bigint
  RETURNING GREATEST(tat_ms - $3::bigint - $4::bigint - $2::bigint, 0) AS "waitMs"`;
/** Pushes the bucket forward, never back: a later push never shortens an earlier, longer one. */
export const SQL_PUSH_RATE = `
  INSERT INTO rate_buckets (bucket_key, tat_ms) VALUES ($1, $2::bigint)
  ON CONFLICT (bucket_key) DO UPDATE SET tat_ms = GREATEST(rate_buckets.tat_ms, excluded.tat_ms)`;

const TOKEN_COLUMNS = `id, name, role, hash, created_at AS "createdAt", revoked_at AS "revokedAt"`;
export const SQL_CREATE_API_TOKEN = `
  INSERT INTO api_tokens (id, name, role, hash, created_at) VALUES ($1, $2, $3, $4, $5)`;
export const SQL_GET_API_TOKEN = `SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = $1`;
export const SQL_LIST_API_TOKENS = `SELECT ${TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at, id`;
/** A token revoked twice keeps its first revocation time. */
export const SQL_REVOKE_API_TOKEN = `
  UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 OR name = $2 RETURNING ${TOKEN_COLUMNS}`;
/** By the status readers see ($1: now). */
export const SQL_COUNT_RUNS = `
  SELECT playbook, shown AS status, COUNT(*) AS count
  FROM (SELECT playbook, ${shownStatus(1)} AS shown FROM runs) AS shown_runs GROUP BY playbook, shown ORDER BY playbook, shown`;
export const SQL_CREATE_WEB_SESSION = `
  INSERT INTO web_sessions (id_hash, token_id, created_at, expires_at_ms) VALUES ($1, $2, $3, $4)`;
export const SQL_GET_WEB_SESSION = `
  SELECT id_hash AS "idHash", token_id AS "tokenId", created_at AS "createdAt", expires_at_ms AS "expiresAtMs"
  FROM web_sessions WHERE id_hash = $1 AND expires_at_ms > $2`;
export const SQL_DELETE_WEB_SESSION = `DELETE FROM web_sessions WHERE id_hash = $1`;
export const SQL_SWEEP_WEB_SESSIONS = `DELETE FROM web_sessions WHERE expires_at_ms <= $1`;
const notificationColumns = `
  key, run_id AS "runId", event, segment, channel, message_json AS "messageJson", state, attempts, created_at AS "createdAt",
  next_attempt_at_ms AS "nextAttemptAtMs", sent_at AS "sentAt", last_error AS "lastError", claimed_by AS "claimedBy",
  claim_expires_at_ms AS "claimExpiresAtMs"`;

/**
 * One row per key and per (run, event, segment, channel), both constraints: a notification
 * recorded twice (two processes ending or recovering one run) stays one row, the first,
 * whatever state it is in (a sent one stays sent).
 */
export const SQL_ADD_NOTIFICATION = `
  INSERT INTO notifications (key, run_id, event, segment, channel, message_json, state, attempts, created_at, next_attempt_at_ms)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ON CONFLICT DO NOTHING`;
/** Oldest first, in one snapshot. */
export const SQL_LIST_NOTIFICATIONS = `
  SELECT ${notificationColumns} FROM notifications
  WHERE ($1::text IS NULL OR run_id = $1) AND ($2::text IS NULL OR state = $2)
  ORDER BY created_order LIMIT $3`;
/**
 * One UPDATE: two senders claiming at once queue on the row's lock, and the second re-reads
 * the claim the first wrote, so it finds the row claimed and changes nothing. A live claim is
 * taken by no one, its own owner included (two deliveries of one process share an owner).
 */
export const SQL_CLAIM_NOTIFICATION = `
  UPDATE notifications SET claimed_by = $2, claim_expires_at_ms = $4, attempts = attempts + 1
  WHERE key = $1 AND state = 'pending' AND next_attempt_at_ms <= $3
    AND (claimed_by IS NULL OR claim_expires_at_ms <= $3 OR claimed_by = $5)
  RETURNING ${notificationColumns}`;
/** By owner: a sender whose claim was taken over (it was presumed dead) settles nothing. */
export const SQL_SETTLE_NOTIFICATION = `
  UPDATE notifications SET state = $3, sent_at = $4, last_error = $5,
    next_attempt_at_ms = COALESCE($6::bigint, next_attempt_at_ms), claimed_by = NULL, claim_expires_at_ms = NULL
  WHERE key = $1 AND claimed_by = $2 AND state = 'pending'`;

function notificationValues(row: NotificationRow): unknown[] {
  return [
    row.key,
    row.runId,
    row.event,
    row.segment,
    row.channel,
    row.messageJson,
    row.state,
    row.attempts,
    row.createdAt,
    row.nextAttemptAtMs,
  ];
}

/** Tells a refused fenced write from an unknown run. */
export const SQL_RUN_FENCE = `SELECT fence FROM runs WHERE id = $1`;

/**
 * Claims the oldest queued run, or a running one whose claim lapsed (its worker presumed dead).
 * SKIP LOCKED: workers claiming at once each lock a different candidate instead of queueing on
 * one; the lock re-checks the candidate's newest version, so a run another worker claimed
 * meanwhile is not taken. The token comes from a sequence: every claim gets a larger one.
 */
export const SQL_CLAIM_RUN = `
  WITH candidate AS (
    SELECT id AS candidate_id, claimed_by AS previous FROM runs
    WHERE status = '${RunStatus.queued}' OR (status = '${RunStatus.running}' AND claimed_by IS NOT NULL AND claim_expires_at_ms <= $2)
    ORDER BY created_order
    FOR UPDATE SKIP LOCKED
    LIMIT 1
  )
  UPDATE runs SET status = '${RunStatus.running}', fence = nextval('fence_tokens'), claimed_by = $1, claim_expires_at_ms = $3,
    ended_at = NULL, outputs_json = NULL, error_json = NULL
  FROM candidate WHERE runs.id = candidate.candidate_id
  RETURNING ${runColumns}, runs.fence, candidate.previous`;
/** By token: a renewal by a worker whose claim was taken over extends nothing. */
/**
 * By token: the claim is the holder's as long as no other claim replaced it (a new token). A run
 * its holder already ended or suspended is still its own, not taken over (a renewal in flight
 * while the holder writes the end); only a running run's claim is extended.
 */
export const SQL_RENEW_CLAIM = `
  UPDATE runs SET claim_expires_at_ms = CASE WHEN status = '${RunStatus.running}' THEN $3 ELSE claim_expires_at_ms END
  WHERE id = $1 AND fence = $2`;
/** By token, as a renewal: a draining worker cannot requeue a run another worker now drives. */
export const SQL_REQUEUE_RUN = `
  UPDATE runs SET status = '${RunStatus.queued}', claimed_by = NULL, claim_expires_at_ms = NULL, ended_at = NULL
  WHERE id = $1 AND fence = $2`;
/** One row, read in one statement: a concurrent status change is seen wholly or not at all. */
export const SQL_GET_RUN = `SELECT ${runColumns} FROM runs WHERE id = $1`;
/**
 * The status readers see (`runs list`, `runs show`, the server's views; `$<param>` is now in
 * epoch ms): a `running` run whose driver's lease (`run:<id>`) lapsed or is gone, and that no
 * worker's live claim holds (a worker holds the claim before its engine takes the lease), is
 * `interrupted`: the process that drove it died, and nothing drives it until it is resumed.
 */
function shownStatus(param: number): string {
  return `CASE WHEN runs.status = '${RunStatus.running}'
    AND NOT EXISTS (SELECT 1 FROM leases WHERE leases.key = 'run:' || runs.id AND leases.expires_at_ms > $${param}::bigint)
    AND NOT (runs.claim_expires_at_ms IS NOT NULL AND runs.claim_expires_at_ms > $${param}::bigint)
  THEN '${RunStatus.interrupted}' ELSE runs.status END`;
}
/** `runColumns` with the status readers see. */
const shownRunColumns = (param: number): string => runColumns.replace(/\bstatus,/, `${shownStatus(param)} AS status,`);
/** `SQL_GET_RUN` as readers see the run ($2: now). */
export const SQL_SHOWN_RUN = `SELECT ${shownRunColumns(2)} FROM runs WHERE id = $1`;
/**
 * No process drives a waiting, queued or interrupted run (read as readers see it: its row may say
 * `running` if its driver died): it ends at once, its row locked by that read.
 */
export const SQL_CANCEL_LOCKED = `
  UPDATE runs SET status = '${RunStatus.cancelled}', ended_at = $2, error_json = $3, wait_json = NULL, wait_due_at = NULL,
    claimed_by = NULL, claim_expires_at_ms = NULL
  WHERE id = $1`;
/**
 * `left(id, n) = prefix`, not LIKE: an id prefix is text, never a pattern. One snapshot, so a run
 * claimed or ended meanwhile is listed once, in one state.
 */
export const SQL_LIST_RUNS = `
  SELECT ${shownRunColumns(7)} FROM runs
  WHERE ($1::text IS NULL OR playbook = $1) AND ($2::text IS NULL OR ${shownStatus(7)} = $2)
    AND ($3::text IS NULL OR started_at >= $3)
    AND ($4::text IS NULL OR left(id, length($4)) = $4)
    AND ($6::text IS NULL OR started_at <= $6)
  ORDER BY started_at DESC, created_order DESC LIMIT $5`;
/**
 * Ordered by seq, in one snapshot: entries appended meanwhile by the run's driver are either all
 * in (a committed batch) or not, so the journal read is always a prefix.
 */
export const SQL_JOURNAL = `SELECT run_id AS "runId", seq, at, event_json AS "eventJson" FROM journal WHERE run_id = $1 AND seq > $2 ORDER BY seq`;
/** One page of `SQL_JOURNAL`: a journal of any size read by `seq` in pieces. */
export const SQL_JOURNAL_PAGE = `${SQL_JOURNAL} LIMIT $3`;
/** The entries at some seqs (the values a fold without values left out), by the primary key. */
export const SQL_JOURNAL_AT = `SELECT run_id AS "runId", seq, at, event_json AS "eventJson" FROM journal WHERE run_id = $1 AND seq = ANY($2::integer[]) ORDER BY seq`;
/** The run's kept journal view (journal-view.ts). */
export const SQL_JOURNAL_VIEW = `SELECT through_seq AS "throughSeq", view_json AS "viewJson" FROM journal_views WHERE run_id = $1 ORDER BY part`;
/**
 * Keeps a run's journal view, its first part: no row for a run that does not exist, and the row
 * lock of ON CONFLICT orders two writers (each in a transaction with its other parts), so a view
 * through an earlier seq never replaces a later one.
 */
export const SQL_SAVE_JOURNAL_VIEW = `
  INSERT INTO journal_views (run_id, part, through_seq, view_json) SELECT id, 0, $2, $3 FROM runs WHERE id = $1
  ON CONFLICT (run_id, part) DO UPDATE SET through_seq = excluded.through_seq, view_json = excluded.view_json
  WHERE excluded.through_seq >= journal_views.through_seq`;
export const SQL_DROP_JOURNAL_VIEW_PARTS = `DELETE FROM journal_views WHERE run_id = $1 AND part > 0`;
export const SQL_ADD_JOURNAL_VIEW_PART = `INSERT INTO journal_views (run_id, part, through_seq, view_json) VALUES ($1, $2, $3, $4)`;
/**
 * Takes or renews a lease in one upsert: the row lock of ON CONFLICT makes two processes
 * racing for a free or expired lease see each other, so exactly one gets it.
 */
export const SQL_ACQUIRE_LEASE = `
  INSERT INTO leases (key, owner, expires_at_ms) VALUES ($1, $2, $4)
  ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at_ms = excluded.expires_at_ms
  WHERE leases.owner = excluded.owner OR leases.expires_at_ms <= $3`;
/** By owner, and only a live row: a renewal never takes a released or lapsed lease back (see RunStore.renewLease). */
export const SQL_RENEW_LEASE = `UPDATE leases SET expires_at_ms = $4 WHERE key = $1 AND owner = $2 AND expires_at_ms > $3`;
/** By owner: a process releasing late never frees a lease another has taken since. */
export const SQL_RELEASE_LEASE = `DELETE FROM leases WHERE key = $1 AND owner = $2`;
/** Expiry compared in the statement: a lease lapsing between a read and a check is never reported live. */
export const SQL_LEASE_HOLDER = `SELECT owner, expires_at_ms AS "expiresAtMs" FROM leases WHERE key = $1 AND expires_at_ms > $2`;
/** One row, read in one statement (patches are applied by the server, never by read-modify-write here). */
export const SQL_GET_SCHEDULE = `SELECT state_json AS "state" FROM schedule_state WHERE schedule_key = $1`;
/** An upsert: two processes writing a new schedule's state at once do not collide on the key. */
export const SQL_SET_SCHEDULE = `
  INSERT INTO schedule_state (schedule_key, state_json, updated_at) VALUES ($1, $2, $3)
  ON CONFLICT (schedule_key) DO UPDATE SET state_json = excluded.state_json, updated_at = excluded.updated_at`;
/**
 * The patch is applied by the server to the row it holds locked (`||` sets the fields, `-`
 * removes the nulled ones): two processes patching one schedule never undo each other's fields.
 */
export const SQL_PATCH_SCHEDULE = `
  INSERT INTO schedule_state (schedule_key, state_json, updated_at) VALUES ($1, $2::jsonb, $3)
  ON CONFLICT (schedule_key) DO UPDATE
  SET state_json = (schedule_state.state_json || $2::jsonb) - $4::text[], updated_at = excluded.updated_at`;
/** Journal rows go with their runs by the cascading key, in the same statement. */
export const SQL_PRUNE = `DELETE FROM runs WHERE ended_at IS NOT NULL AND ended_at < $1`;

interface PendingEntry {
  runId: string;
  /** The claim token the entry was appended under, if any. */
  fence: number | undefined;
  at: string;
  eventJson: string;
  /** An unbuffered append's caller, told when the commit that holds its entry ends. */
  waiter?: { resolve(): void; reject(error: unknown): void };
}

/**
 * Whether a failed commit refuses `entry` for good: a run that is not in the store, or a claim
 * that was taken over (`staleFence`) can never be written, whatever else the commit held.
 */
function refusedBy(error: StoreError, entry: PendingEntry): boolean {
  const details = error.details as { runId?: unknown; fence?: unknown } | undefined;
  if (error.code === StoreErrorCode.runNotFound) return entry.runId === details?.runId;
  if (error.code === StoreErrorCode.staleFence) return entry.runId === details?.runId && entry.fence === details.fence;
  return false;
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
async function refusedWrite(
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

function pgCode(error: unknown): string | undefined {
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
function unavailable(error: unknown, url: string): StoreError {
  if (error instanceof StoreError) return error;
  return new StoreError(
    `The run store ${redactStoreUrl(url)} failed: ${(error as Error).message}.`,
    StoreErrorCode.storeUnavailable,
    { pgCode: pgCode(error) },
  );
}

async function migrate(pool: pg.Pool, url: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
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
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Opens the store at `url`: connects, migrates the database (or refuses one a newer Fleetbook
 * migrated), and resolves once it is ready. Every failure to get there is a StoreError with
 * exit code 2 and a message naming the URL without its password.
 */
export async function createPostgresRunStore(options: PostgresRunStoreOptions): Promise<QueueStore> {
  const resolved = resolveStoreOptions(options);
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

  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();
  /** Runs `work` after every call made before it (one process's journal stays in order). */
  function serial<T>(work: () => Promise<T>): Promise<T> {
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
  }
  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => pool.query<R>(text, values);
  /** `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  async function inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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

  const flushAfterMs = options.flushAfterMs ?? 50;
  const maxBufferedEntries = options.maxBufferedEntries ?? 256;
  const buffer: PendingEntry[] = [];
  let flushTimer: NodeJS.Timeout | undefined;

  /** Inserts `entries` (in order) run by run, in one transaction; nothing when it fails. */
  async function insertEntries(entries: PendingEntry[]): Promise<void> {
    // Consecutive entries of one run under one token go in one statement.
    const byRun = new Map<string, PendingEntry[]>();
    for (const entry of entries) {
      const key = `${entry.fence ?? ''}:${entry.runId}`;
      const ofRun = byRun.get(key);
      if (ofRun) ofRun.push(entry);
      else byRun.set(key, [entry]);
    }
    const insertRun = async (client: pg.Pool | pg.PoolClient, _key: string, runEntries: PendingEntry[]) => {
      const first = runEntries[0];
      if (!first) return;
      const inserted = await client.query(
        SQL_APPEND,
        appendValues(
          first.runId,
          runEntries.map((entry) => entry.at),
          runEntries.map((entry) => entry.eventJson),
          first.fence,
        ),
      );
      if (inserted.rowCount === 0) throw await refusedWrite(client, first.runId, first.fence);
    };
    const [only] = byRun;
    if (byRun.size === 1 && only) {
      await insertRun(pool, only[0], only[1]);
      return;
    }
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const [runId, runEntries] of byRun) await insertRun(client, runId, runEntries);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * Commits the buffer in one transaction and tells the callers waiting for their entries. When
   * it fails, nothing is written. Entries it refuses for good (their run is gone, or their claim
   * was taken over) are dropped and their callers told; the other waiting entries stay for the
   * commit queued after them (`commitGroup`). Any other failure (the server is gone) is told to
   * every waiting caller. Buffered entries are kept for the next commit. Runs inside `serial`,
   * so nothing joins the buffer meanwhile.
   */
  async function commit(): Promise<void> {
    if (flushTimer) {
      clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    if (buffer.length === 0) return;
    try {
      await insertEntries(buffer);
    } catch (caught) {
      const error = unavailable(caught, url);
      const refusal = error.code === StoreErrorCode.runNotFound || error.code === StoreErrorCode.staleFence;
      const dropped = (entry: PendingEntry) => (refusal ? refusedBy(error, entry) : entry.waiter !== undefined);
      for (const entry of buffer) if (dropped(entry)) entry.waiter?.reject(error);
      buffer.splice(0, buffer.length, ...buffer.filter((entry) => !dropped(entry)));
      throw error;
    }
    for (const entry of buffer) entry.waiter?.resolve();
    buffer.length = 0;
  }

  /**
   * Group commit, as in the SQLite store: an unbuffered append joins the commit queued next on
   * `serial`, so the appends of one turn of the event loop, and every append made while one
   * commit is at the server, go in one. A statement and a transaction per append, one after the
   * other, cost a fleet run's process about a sixth of its CPU in socket writes alone, and
   * loaded the server. Every waiting entry has this commit queued after it; one that failed for
   * another run's entries is tried again without them.
   */
  let groupQueued = false;
  async function commitGroup(): Promise<void> {
    groupQueued = false;
    for (;;) {
      const before = buffer.length;
      try {
        await commit();
        return;
      } catch (error) {
        if (buffer.length < before && buffer.some((entry) => entry.waiter)) continue;
        for (const entry of buffer) entry.waiter?.reject(error);
        buffer.splice(0, buffer.length, ...buffer.filter((entry) => !entry.waiter));
        return;
      }
    }
  }
  function commitSoon(entry: PendingEntry): { committed: Promise<void> } {
    const committed = new Promise<void>((resolve, reject) => {
      entry.waiter = { resolve, reject };
    });
    buffer.push(entry);
    if (!groupQueued) {
      groupQueued = true;
      // Queued at the end of this turn of the event loop, so the appends of every answer that
      // arrived in it join; not awaited: it runs after the appends waiting on `serial`.
      setImmediate(() => {
        serial(commitGroup).catch(() => undefined);
      });
    }
    return { committed };
  }

  const knownRuns = new Set<string>();
  const leaderships = new Set<pg.Client>();
  async function keepBuffered(entry: PendingEntry): Promise<void> {
    if (!knownRuns.has(entry.runId)) {
      if ((await query(SQL_GET_RUN, [entry.runId])).rowCount === 0) throw runNotFound(entry.runId);
      knownRuns.add(entry.runId);
    }
    buffer.push(entry);
    if (buffer.length >= maxBufferedEntries) {
      await commit();
      return;
    }
    if (!flushTimer) {
      flushTimer = setTimeout(() => {
        flushTimer = undefined;
        // A failure keeps the entries buffered: the next commit tries again and reports it.
        serial(() => commit()).catch(() => undefined);
      }, flushAfterMs);
      flushTimer.unref();
    }
  }

  async function changedRun(runId: string, rowCount: number | null, fence: number | undefined): Promise<void> {
    if (!rowCount) throw await refusedWrite(pool, runId, fence);
  }

  /** The run's status and cancellation, its row locked until the transaction ends (a cancel waits for it). */
  async function lockedRun(client: pg.PoolClient, runId: string): Promise<Pick<RunRow, 'status' | 'cancelJson'>> {
    const row = (await client.query<Pick<RunRow, 'status' | 'cancelJson'>>(SQL_LOCK_RUN_STATUS, [runId])).rows[0];
    if (!row) throw runNotFound(runId);
    return row;
  }

  /** Writes a status, its result and the notifications it causes in `client`'s transaction; fenced. */
  async function writeEnd(
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

  const insertRun = (run: NewRun, status: RunStatus) =>
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
    });

  const store: QueueStore = {
    createRun: (run) => insertRun(run, RunStatus.running),

    enqueueRun: (run) => insertRun(run, RunStatus.queued),

    claimRun: (owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        const row = (
          await query<RunRow & { fence: string; previous: string | null }>(SQL_CLAIM_RUN, [owner, nowMs, nowMs + ttlMs])
        ).rows[0];
        if (!row) return undefined;
        const claim: RunClaim = { run: rowToRun(row), fence: Number(row.fence) };
        if (row.previous !== null) claim.previousOwner = row.previous;
        return claim;
      }),

    renewClaim: (runId, fence, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        return (await query(SQL_RENEW_CLAIM, [runId, fence, resolved.now().getTime() + ttlMs])).rowCount === 1;
      }),

    requeueRun: (runId, fence) =>
      serial(async () => {
        await commit();
        return (await query(SQL_REQUEUE_RUN, [runId, fence])).rowCount === 1;
      }),

    fenced: (runId, fence) => fencedView(store, runId, fence),

    recordFire: (scheduleKey, fireAt, runId) =>
      serial(
        async () =>
          (
            await query(SQL_RECORD_FIRE, [
              scheduleKey,
              normaliseTimestamp(fireAt, 'fireAt'),
              runId,
              resolved.now().toISOString(),
            ])
          ).rowCount === 1,
      ),

    tryLeadership: (name) =>
      serial(async () => {
        // Its own connection, outside the pool: the lock lives exactly as long as it does.
        const client = new driver.Client({
          connectionString: url,
          connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
        });
        let lost = false;
        client.on('error', () => (lost = true));
        client.on('end', () => (lost = true));
        await client.connect();
        const held = (await client.query<{ held: boolean }>(SQL_TRY_LEADERSHIP, [name])).rows[0]?.held === true;
        if (!held) {
          await client.end().catch(() => undefined);
          return undefined;
        }
        leaderships.add(client);
        // A daemon checks on a timer and before each fire: checks that overlap share the one in
        // flight, since a second query on this client while one runs is what pg warns against.
        let checking: Promise<boolean> | undefined;
        const check = async (): Promise<boolean> => {
          if (lost) return false;
          try {
            return (await client.query<{ held: boolean }>(SQL_STILL_LEADER, [name])).rows[0]?.held === true;
          } catch {
            return false;
          }
        };
        return {
          stillHeld() {
            checking ??= check().finally(() => (checking = undefined));
            return checking;
          },
          async release() {
            leaderships.delete(client);
            await client.end().catch(() => undefined);
          },
        };
      }),

    append: (runId, event, appendOptions) => {
      // Encoded now, so an oversized event is refused to its caller, not to a later commit.
      let entry: PendingEntry;
      try {
        entry = {
          runId,
          fence: appendOptions?.fence,
          at: resolved.now().toISOString(),
          eventJson: encodeEvent(runId, event, resolved),
        };
      } catch (error) {
        return Promise.reject(error as Error);
      }
      if (appendOptions?.buffered) return serial(() => keepBuffered(entry));
      // The commit is awaited outside `serial`: it is queued behind this call.
      return serial(async () => commitSoon(entry)).then(({ committed }) => committed);
    },

    setRunStatus: (runId, status, result, fenceOptions) =>
      serial(async () => {
        statusChange(runId, status, result, resolved);
        await commit();
        return inTransaction(async (client) => {
          const ended = drivenEnd(await lockedRun(client, runId), runId, status, result);
          return writeEnd(client, runId, ended.status, ended.result, fenceOptions?.fence);
        });
      }),

    addNotifications: (items) =>
      serial(async () => {
        const rows = items.map((item) => newNotificationToRow(item, resolved));
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          for (const row of rows) await client.query(SQL_ADD_NOTIFICATION, notificationValues(row));
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          if (pgCode(error) === '23503') throw runNotFound(rows[0]?.runId ?? '');
          throw error;
        } finally {
          client.release();
        }
      }),

    listNotifications: (filter = {}) =>
      serial(async () => {
        const { limit } = normaliseFilter(filter);
        return (
          await query<NotificationRow>(SQL_LIST_NOTIFICATIONS, [filter.runId ?? null, filter.state ?? null, limit])
        ).rows.map(rowToNotification);
      }),

    claimNotification: (key, owner, ttlMs, claimOptions) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        const row = (
          await query<NotificationRow>(SQL_CLAIM_NOTIFICATION, [
            key,
            owner,
            nowMs,
            nowMs + ttlMs,
            claimOptions?.takeOverFrom ?? null,
          ])
        ).rows[0];
        return row && rowToNotification(row);
      }),

    settleNotification: (key, owner, outcome) =>
      serial(async () => {
        const settled = settledColumns(outcome, resolved);
        return (
          (
            await query(SQL_SETTLE_NOTIFICATION, [
              key,
              owner,
              settled.state,
              settled.sentAt,
              settled.lastError,
              settled.nextAttemptAtMs,
            ])
          ).rowCount === 1
        );
      }),

    markResumed: (runId, fenceOptions) =>
      serial(async () => {
        await commit();
        await changedRun(
          runId,
          (await query(SQL_MARK_RESUMED, [runId, fenceOptions?.fence ?? null])).rowCount,
          fenceOptions?.fence,
        );
      }),

    suspendRun: (runId, wait, fenceOptions) =>
      serial(async () => {
        const columns = waitColumns(runId, wait, resolved);
        const fence = fenceOptions?.fence ?? null;
        await commit();
        return inTransaction(async (client) => {
          const ended = drivenEnd(await lockedRun(client, runId), runId, RunStatus.waiting, undefined);
          if (ended.status !== RunStatus.waiting)
            return writeEnd(client, runId, ended.status, ended.result, fenceOptions?.fence);
          const info = await client.query(SQL_SUSPEND, [runId, columns.waitJson, columns.waitDueAt, fence]);
          if (!info.rowCount) throw await refusedWrite(client, runId, fenceOptions?.fence);
          return RunStatus.waiting;
        });
      }),

    endWait: (runId, ending) =>
      serial(async () => {
        const change = statusChange(runId, ending.next, {}, resolved);
        await commit();
        return inTransaction(async (client) => {
          // FOR UPDATE: the wait is read under the row's lock, so of two deciders one finds it waiting.
          const row = (await client.query<RunRow>(`${SQL_GET_RUN} FOR UPDATE`, [runId])).rows[0];
          const { outcome, event } = waitEndingOf(row, ending);
          if (!event) return outcome;
          await client.query(SQL_END_WAIT, [
            runId,
            change.status,
            change.endedAt,
            change.outputsJson ?? null,
            change.errorJson ?? null,
          ]);
          const eventJson = encodeEvent(runId, event, resolved);
          await client.query(SQL_APPEND, appendValues(runId, [resolved.now().toISOString()], [eventJson], undefined));
          return outcome;
        });
      }),

    listDueWaits: (now, limit = defaultListLimit) =>
      serial(async () => {
        await commit();
        const rows = await query<RunRow>(SQL_DUE_WAITS, [normaliseTimestamp(now, 'now'), limit]);
        return rows.rows.map(rowToRun);
      }),

    cancelRun: (runId, by) =>
      serial(async () => {
        await commit();
        const at = resolved.now().toISOString();
        return inTransaction(async (client): Promise<CancelOutcome> => {
          // As readers see it: a running run whose driver died is driven by no one, so it ends at once.
          const row = (
            await client.query<RunRow>(`${SQL_SHOWN_RUN} FOR UPDATE OF runs`, [runId, resolved.now().getTime()])
          ).rows[0];
          if (!row) throw runNotFound(runId);
          const journalIt = (requested: boolean) =>
            client.query(
              SQL_APPEND,
              appendValues(runId, [at], [encodeEvent(runId, cancelEvent(by, requested), resolved)], undefined),
            );
          if (cancellableAtOnce.has(row.status)) {
            await client.query(SQL_CANCEL_LOCKED, [runId, at, JSON.stringify(cancelledError(runId, by))]);
            await journalIt(false);
            return { outcome: 'cancelled' };
          }
          if ((await client.query(SQL_REQUEST_CANCEL, [runId, JSON.stringify({ by, at })])).rowCount === 1) {
            await journalIt(true);
            return { outcome: 'requested' };
          }
          return { outcome: 'ended', status: row.status };
        });
      }),

    getRun: (runId) =>
      serial(async () => {
        await commit();
        const row = (await query<RunRow>(SQL_SHOWN_RUN, [runId, resolved.now().getTime()])).rows[0];
        return row && rowToRun(row);
      }),

    countRuns: () =>
      serial(async () => {
        await commit();
        const rows = await query<{ playbook: string; status: RunStatus; count: string }>(SQL_COUNT_RUNS, [
          resolved.now().getTime(),
        ]);
        return rows.rows.map((row) => ({ playbook: row.playbook, status: row.status, count: Number(row.count) }));
      }),

    listRuns: (filter: RunFilter = {}) =>
      serial(async () => {
        const { since, until, limit } = normaliseFilter(filter);
        await commit();
        const rows = await query<RunRow>(SQL_LIST_RUNS, [
          filter.playbook ?? null,
          filter.status ?? null,
          since ?? null,
          filter.idPrefix ?? null,
          limit,
          until ?? null,
          resolved.now().getTime(),
        ]);
        return rows.rows.map(rowToRun);
      }),

    journal: (runId, afterSeq = 0, limit, options) =>
      serial(async () => {
        await commit();
        // Without values, the page is cut here, not by the server: casting a fleet's large events
        // to jsonb to cut them took 9.4 s of the single backend for a 10,000-system journal, where
        // reading the text and cutting each parsed entry takes 5.5 s (bench/results.md).
        if (options?.values === false)
          return (await query<JournalRow>(SQL_JOURNAL_PAGE, [runId, afterSeq, limit ?? null])).rows.map((row) =>
            withoutValues(rowToEntry(row)),
          );
        const rows =
          limit === undefined
            ? await query<JournalRow>(SQL_JOURNAL, [runId, afterSeq])
            : await query<JournalRow>(SQL_JOURNAL_PAGE, [runId, afterSeq, limit]);
        return rows.rows.map(rowToEntry);
      }),

    journalAt: (runId, seqs) =>
      serial(async () => {
        await commit();
        return (await query<JournalRow>(SQL_JOURNAL_AT, [runId, seqs])).rows.map(rowToEntry);
      }),

    async steps(runId) {
      // Read by seq pages and folded as read: the records are kept, never the whole journal.
      const fold = createJournalFold();
      for await (const page of journalPages(store, runId)) for (const entry of page) fold.add(entry);
      return fold.records();
    },

    journalView: (runId) =>
      serial(async () => {
        return viewOfParts((await query<{ throughSeq: number; viewJson: string }>(SQL_JOURNAL_VIEW, [runId])).rows);
      }),

    saveJournalView: (runId, view) =>
      serial(async () => {
        const { throughSeq } = view;
        // Part by part, each text made as it is sent: never the whole view as one string.
        const saved = await inTransaction(async (client) => {
          const parts = journalViewParts(view);
          const first = parts.next();
          if (
            first.done ||
            (await client.query(SQL_SAVE_JOURNAL_VIEW, [runId, throughSeq, first.value])).rowCount === 0
          )
            return false;
          await client.query(SQL_DROP_JOURNAL_VIEW_PARTS, [runId]);
          let part = 0;
          for (const viewJson of parts)
            await client.query(SQL_ADD_JOURNAL_VIEW_PART, [runId, (part += 1), throughSeq, viewJson]);
          return true;
        });
        if (!saved && (await query(SQL_GET_RUN, [runId])).rowCount === 0) throw runNotFound(runId);
      }),

    acquireLease: (key, owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        return (await query(SQL_ACQUIRE_LEASE, [key, owner, nowMs, nowMs + ttlMs])).rowCount === 1;
      }),

    renewLease: (key, owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        return (await query(SQL_RENEW_LEASE, [key, owner, nowMs, nowMs + ttlMs])).rowCount === 1;
      }),

    releaseLease: (key, owner) =>
      serial(async () => {
        await query(SQL_RELEASE_LEASE, [key, owner]);
      }),

    leaseHolder: (key) =>
      serial(async () => {
        const row = (
          await query<{ owner: string; expiresAtMs: string }>(SQL_LEASE_HOLDER, [key, resolved.now().getTime()])
        ).rows[0];
        return row ? { owner: row.owner, expiresAt: new Date(Number(row.expiresAtMs)).toISOString() } : undefined;
      }),

    getScheduleState: (scheduleKey) =>
      serial(
        async () => (await query<{ state: Record<string, unknown> }>(SQL_GET_SCHEDULE, [scheduleKey])).rows[0]?.state,
      ),

    setScheduleState: (scheduleKey, state) =>
      serial(async () => {
        await query(SQL_SET_SCHEDULE, [scheduleKey, JSON.stringify(state), resolved.now().toISOString()]);
      }),

    patchScheduleState: (scheduleKey, patch) =>
      serial(async () => {
        const entries = Object.entries(patch);
        const set = Object.fromEntries(entries.filter(([, value]) => value !== null));
        const removed = entries.filter(([, value]) => value === null).map(([name]) => name);
        await query(SQL_PATCH_SCHEDULE, [scheduleKey, JSON.stringify(set), resolved.now().toISOString(), removed]);
      }),

    prune: (before) =>
      serial(async () => {
        const cutoff = normaliseTimestamp(before, 'before');
        await commit();
        knownRuns.clear();
        return (await query(SQL_PRUNE, [cutoff])).rowCount ?? 0;
      }),

    takeRate: (key, intervalMs, toleranceMs) =>
      serial(async () => {
        const row = (
          await query<{ waitMs: string }>(SQL_TAKE_RATE, [
            key,
            resolved.now().getTime(),
            Math.ceil(intervalMs),
            Math.floor(toleranceMs),
          ])
        ).rows[0];
        return Number(row?.waitMs ?? 0);
      }),

    pushRate: (key, notBeforeMs, toleranceMs) =>
      serial(async () => {
        await query(SQL_PUSH_RATE, [key, Math.ceil(notBeforeMs + toleranceMs)]);
      }),

    createApiToken: (token) =>
      serial(async () => {
        try {
          await query(SQL_CREATE_API_TOKEN, [token.id, token.name, token.role, token.hash, token.createdAt]);
        } catch (error) {
          if (pgCode(error) === '23505') throw tokenExists(token.name);
          throw error;
        }
        return rowToApiToken({ ...token, revokedAt: null });
      }),

    getApiToken: (id) =>
      serial(async () => {
        const row = (await query<ApiTokenRow>(SQL_GET_API_TOKEN, [id])).rows[0];
        return row && { ...rowToApiToken(row), hash: row.hash };
      }),

    listApiTokens: () => serial(async () => (await query<ApiTokenRow>(SQL_LIST_API_TOKENS)).rows.map(rowToApiToken)),

    revokeApiToken: (idOrName) =>
      serial(async () => {
        const row = (await query<ApiTokenRow>(SQL_REVOKE_API_TOKEN, [resolved.now().toISOString(), idOrName])).rows[0];
        return row && rowToApiToken(row);
      }),

    createWebSession: (session) =>
      serial(async () => {
        await query(SQL_CREATE_WEB_SESSION, [session.idHash, session.tokenId, session.createdAt, session.expiresAtMs]);
      }),

    getWebSession: (idHash) =>
      serial(async () => {
        const row = (
          await query<Omit<WebSession, 'expiresAtMs'> & { expiresAtMs: string | number }>(SQL_GET_WEB_SESSION, [
            idHash,
            resolved.now().getTime(),
          ])
        ).rows[0];
        return row && { ...row, expiresAtMs: Number(row.expiresAtMs) };
      }),

    deleteWebSession: (idHash) =>
      serial(async () => {
        await query(SQL_DELETE_WEB_SESSION, [idHash]);
      }),

    sweepWebSessions: () =>
      serial(async () => (await query(SQL_SWEEP_WEB_SESSIONS, [resolved.now().getTime()])).rowCount ?? 0),

    close: async () => {
      if (closed) return;
      try {
        await serial(() => commit());
      } finally {
        closed = true;
        for (const client of leaderships) await client.end().catch(() => undefined);
        await pool.end().catch(() => undefined);
      }
    },
  };
  return store;
}

function runRowValues(row: RunRow): unknown[] {
  return [
    row.id,
    row.playbook,
    row.playbookSource,
    row.playbookHash,
    row.inputsJson,
    row.secretInputNamesJson,
    row.defaultedSecretInputsJson,
    row.dryRun,
    row.triggerJson,
    row.startedAt,
    row.status,
    row.endedAt,
    row.outputsJson,
    row.errorJson,
    row.resumes,
  ];
}
