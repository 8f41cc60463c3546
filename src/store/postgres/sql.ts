/**
 * The PostgreSQL store's statements: every one a named constant, its comment saying which race
 * it closes, with the helpers that turn rows into their parameters.
 */
import type { NotificationRow } from '../notification-row.js';
import type { RunRow } from '../run-row.js';
import { RunStatus } from '../types.js';

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

const TOKEN_COLUMNS = `id, name, role, hash, created_at AS "createdAt", revoked_at AS "revokedAt", playbooks_json AS "playbooksJson"`;
export const SQL_CREATE_API_TOKEN = `
  INSERT INTO api_tokens (id, name, role, hash, created_at, playbooks_json) VALUES ($1, $2, $3, $4, $5, $6)`;
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
  INSERT INTO web_sessions (id_hash, token_id, created_at, expires_at_ms, user_json) VALUES ($1, $2, $3, $4, $5)`;
export const SQL_GET_WEB_SESSION = `
  SELECT id_hash AS "idHash", token_id AS "tokenId", created_at AS "createdAt", expires_at_ms AS "expiresAtMs",
    user_json AS "userJson"
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

export function notificationValues(row: NotificationRow): unknown[] {
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

export function runRowValues(row: RunRow): unknown[] {
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

// The audit log. An append reads the last entry and chains to it: the table is locked (against
// other appenders only; readers go on) until the transaction ends, so two servers never chain
// two entries to the same one.
export const SQL_LOCK_AUDIT = `LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE`;
export const SQL_LAST_AUDIT = `SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1`;
export const SQL_APPEND_AUDIT = `
  INSERT INTO audit_log (seq, at, action, outcome, actor_json, object_json, detail_json, prev_hash, hash)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
export const SQL_LIST_AUDIT = `
  SELECT seq, at, action, outcome, actor_json AS "actorJson", object_json AS "objectJson",
    detail_json AS "detailJson", prev_hash AS "prevHash", hash
  FROM audit_log
  WHERE seq > $1 AND ($2::text IS NULL OR action = $2) AND ($3::text IS NULL OR actor_json::jsonb ->> 'name' = $3)
    AND ($4::text IS NULL OR at >= $4)
  ORDER BY seq LIMIT $5`;
