/**
 * The SQLite store's schema as numbered migrations: migration `i` brings a store from
 * `PRAGMA user_version` `i` to `i + 1`. Append new ones; never edit a released one, since
 * stores in the field were made by it.
 */
export const migrations: readonly string[] = [
  `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    playbook TEXT NOT NULL,
    playbook_source TEXT NOT NULL,
    playbook_hash TEXT NOT NULL,
    inputs_json TEXT NOT NULL,
    secret_input_names_json TEXT NOT NULL,
    dry_run INTEGER NOT NULL,
    trigger_json TEXT NOT NULL,
    started_at TEXT NOT NULL,
    status TEXT NOT NULL,
    ended_at TEXT,
    outputs_json TEXT,
    error_json TEXT,
    resumes INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX runs_by_start ON runs (started_at);
  CREATE INDEX runs_by_end ON runs (ended_at) WHERE ended_at IS NOT NULL;

  -- seq counts per run from 1; the key makes "the next seq" one index lookup.
  CREATE TABLE journal (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    event_json TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );

  CREATE TABLE schedule_state (
    schedule_key TEXT PRIMARY KEY,
    state_json TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  `,
  // Which secret inputs took their default at the start (names only), so a resume asks for the others.
  `
  ALTER TABLE runs ADD COLUMN defaulted_secret_inputs_json TEXT;
  `,
  // The shared rate limiter: one GCRA bucket (its theoretical arrival time) per connection and group.
  `
  CREATE TABLE rate_buckets (
    bucket_key TEXT PRIMARY KEY,
    tat_ms INTEGER NOT NULL
  );
  `,
  // Waiting runs (approval gates, maintenance windows) and cancellation asked of a running run.
  `
  ALTER TABLE runs ADD COLUMN wait_json TEXT;
  ALTER TABLE runs ADD COLUMN wait_due_at TEXT;
  ALTER TABLE runs ADD COLUMN cancel_json TEXT;
  CREATE INDEX runs_waiting_due ON runs (wait_due_at) WHERE status = 'waiting';
  `,
  // The notification outbox: one row per (run, event occurrence, channel), claimed like a lease before a send.
  `
  CREATE TABLE notifications (
    key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    channel TEXT NOT NULL,
    message_json TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    next_attempt_at_ms INTEGER NOT NULL,
    sent_at TEXT,
    last_error TEXT,
    claimed_by TEXT,
    claim_expires_at_ms INTEGER
  );
  CREATE INDEX notifications_by_run ON notifications (run_id);
  CREATE INDEX notifications_pending ON notifications (created_at) WHERE state = 'pending';
  `,
  // API tokens of `fleetbook server`: only a hash of each secret is kept.
  `
  CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  `,
  // Web UI sessions of `fleetbook server`: the SHA-256 of each session id, never the id.
  `
  CREATE TABLE web_sessions (
    id_hash TEXT PRIMARY KEY,
    token_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at_ms);
  `,
  // A finished fleet's journal folded without values (journal-view.ts), so \`runs show\` reads it, not the journal.
  `
  CREATE TABLE journal_views (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    through_seq INTEGER NOT NULL,
    view_json TEXT NOT NULL
  );
  `,
  // The view in parts of a few hundred KB (journalViewParts), not one text. The views kept before
  // are dropped: they are checkpoints, and \`runs show\` folds a run without one from its journal.
  `
  DROP TABLE journal_views;
  CREATE TABLE journal_views (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    part INTEGER NOT NULL,
    through_seq INTEGER NOT NULL,
    view_json TEXT NOT NULL,
    PRIMARY KEY (run_id, part)
  );
  `,
  // A notification is one per (run, event, segment, channel): the key is made of them, and the
  // store holds the rule itself. Rows kept so far take their segment out of their key.
  `
  ALTER TABLE notifications ADD COLUMN segment TEXT NOT NULL DEFAULT '';
  UPDATE notifications SET segment = CASE
    WHEN length(key) > length(run_id) + length(event) + length(channel) + 3
      AND substr(key, 1, length(run_id) + length(event) + 2) = run_id || '/' || event || '/'
      AND substr(key, length(key) - length(channel)) = '/' || channel
    THEN substr(key, length(run_id) + length(event) + 3, length(key) - length(run_id) - length(event) - length(channel) - 3)
    ELSE key END;
  CREATE UNIQUE INDEX notifications_one_per_end ON notifications (run_id, event, segment, channel);
  `,
  // A web session of a single sign-on carries its user (name, groups, role) instead of a token;
  // a token may hold its role for some playbooks only (their name patterns).
  `
  ALTER TABLE web_sessions ADD COLUMN user_json TEXT;
  ALTER TABLE api_tokens ADD COLUMN playbooks_json TEXT;
  `,
  // The audit log (audit-row.ts): each entry holds the hash of the one before. Append-only: the
  // triggers refuse a change through Fleetbook's own connection; a hand edit that drops them
  // still breaks the chain, which \`fleetbook audit verify\` finds.
  `
  CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    outcome TEXT NOT NULL,
    actor_json TEXT NOT NULL,
    object_json TEXT,
    detail_json TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
  );
  CREATE INDEX audit_log_by_time ON audit_log (at);
  CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  `,
];

/** The schema version this Fleetbook writes. */
export const schemaVersion = migrations.length;
