/**
 * The audit log's records (the `AuditFacet` of the run store): who did what, to which object,
 * when, and how it ended. Append-only; each entry holds the hash of the one before it, so an
 * entry changed or deleted by hand breaks the chain (`verifyAuditChain`).
 */

/** Who acted: a signed-in person, an API token (the CLI, scripts), or Fleetbook itself (a schedule, the server's start). */
export interface AuditActor {
  kind: 'user' | 'token' | 'system';
  name: string;
  role?: string;
  tokenId?: string;
  /** The client's address, as the server saw it. */
  address?: string;
}

/** What was done. New kinds of actions are added here (and to docs/server.md's list). */
export const AuditAction = {
  login: 'login',
  loginFailed: 'login.failed',
  logout: 'logout',
  tokenCreate: 'token.create',
  tokenRevoke: 'token.revoke',
  runStart: 'run.start',
  runCancel: 'run.cancel',
  runResume: 'run.resume',
  runRerun: 'run.rerun',
  runApprove: 'run.approve',
  runDeny: 'run.deny',
  schedulePause: 'schedule.pause',
  scheduleResume: 'schedule.resume',
  scheduleTrigger: 'schedule.trigger',
  playbooksReload: 'playbooks.reload',
  serverStart: 'server.start',
} as const;
export type AuditAction = (typeof AuditAction)[keyof typeof AuditAction];

/** `refused`: not allowed (a role, a wrong token, a throttle); `failed`: allowed but it did not happen. */
export type AuditOutcome = 'ok' | 'refused' | 'failed';

/** What a caller records; the store adds the time, the sequence number and the chain. */
export interface NewAuditEntry {
  actor: AuditActor;
  action: AuditAction;
  /** The object acted on: `{ kind: 'run', id }`, `{ kind: 'schedule', id }`, `{ kind: 'token', id }`... */
  object?: { kind: string; id: string };
  outcome: AuditOutcome;
  /** Anything else worth keeping (a reason, a comment, a configuration's hash): JSON. */
  detail?: Record<string, unknown>;
}

export interface AuditEntry extends NewAuditEntry {
  /** 1, 2, 3... with no gap: a gap is a deleted entry. */
  seq: number;
  /** ISO time by the store's clock. */
  at: string;
  /** The hash of the entry before (64 zeros for the first). */
  prevHash: string;
  /** Hex SHA-256 of the entry's canonical JSON (`auditHash`), its own `hash` left out. */
  hash: string;
}

/** Which entries `listAudit` reads, oldest first. */
export interface AuditFilter {
  action?: string;
  /** The actor's name. */
  actor?: string;
  /** ISO time: entries at or after it. */
  since?: string;
  /** A cursor: entries after this seq. */
  afterSeq?: number;
  /** At most this many (default and maximum 1,000). */
  limit?: number;
}

/** The audit log: appended to, read, never changed. */
export interface AuditFacet {
  /** Appends an entry after the last one, chained to it, in one transaction (two writers never fork the chain). */
  appendAudit(entry: NewAuditEntry): Promise<AuditEntry>;
  listAudit(filter?: AuditFilter): Promise<AuditEntry[]>;
}
