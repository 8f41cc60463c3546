/**
 * The run store: everything Fleetbook must remember across processes. The engine writes
 * a journal event *before* it acts on the transition it describes (write-ahead), so a
 * crash at any point leaves a journal from which `fleetbook resume` knows what was done,
 * what was in flight (and where to re-attach), and what never started.
 *
 * Every method is async so a PostgreSQL store can follow the embedded SQLite one.
 */

import type { AuditFacet } from './audit-types.js';

export type * from './audit-types.js';
export { AuditAction } from './audit-types.js';

export const RunStatus = {
  /** Waiting in the shared store's queue for a worker to claim it (team mode). */
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  /** Stopped by SIGINT/SIGTERM or a crash noticed later; resumable. */
  interrupted: 'interrupted',
  /**
   * Stopped at a journaled point until something outside the run happens (an approval, a
   * maintenance window): no process, lease or claim is held meanwhile. `RunRecord.wait` says why.
   */
  waiting: 'waiting',
  /** Ended by `fleetbook runs cancel`; not resumable. */
  cancelled: 'cancelled',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export const StepStatus = {
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  skipped: 'skipped',
  /** A write not sent because the run is a dry run. */
  simulated: 'simulated',
  /** A loop item or step never started (tolerance exceeded, run stopped). */
  notStarted: 'notStarted',
  interrupted: 'interrupted',
} as const;
export type StepStatus = (typeof StepStatus)[keyof typeof StepStatus];

export interface ErrorRecord {
  message: string;
  code?: string;
  httpStatus?: number;
  operationId?: string;
  details?: unknown;
}

/**
 * A step's place in a run: step ids joined with `.`, loop items as `[index]`, e.g.
 * `systems[3].update`. Unique within a run; the journal's key for a step execution.
 */
export type StepPath = string;

/** Why a run waits (see `RunStatus.waiting`); kept on the run and journaled in `run.waiting`. */
export type WaitReason = 'approval' | 'window';

/**
 * What a waiting run waits for. `approval`: a person's decision on the gate at `path`
 * (`fleetbook approve` / `deny`), or `timeoutAt` passing. `window`: the time `until` (the next
 * maintenance window). Further fields are the reason's own (an approval's message, approvers).
 */
export interface WaitRecord {
  reason: WaitReason;
  /** The step that waits (an approval gate, the loop a closing window stopped). */
  path: StepPath;
  /** ISO time the wait began. */
  since: string;
  /** ISO time the wait ends by itself (a window opens). */
  until?: string;
  /** ISO time after which the wait's timeout applies (an approval's `onTimeout`). */
  timeoutAt?: string;
  message?: string;
  /** Who may decide by name (OS users, token names, signed-in users); absent with `approverGroups`: anyone. */
  approvers?: string[];
  /** Who may decide by group: a signed-in user in one of them. */
  approverGroups?: string[];
  /** Distinct approvals the gate needs. @default 1 */
  required?: number;
  /** The run's requester (`trigger.by`) may not decide. */
  notRequester?: boolean;
  /** The approvals given so far (fewer than `required`): each written with the wait by `RunStore.endWait` (`keep`). */
  approvals?: ApprovalDecision[];
  onTimeout?: 'fail' | 'continue' | 'skip';
  /** The JSON Schema (object) of the form the approver fills in. */
  inputs?: Record<string, unknown>;
}

/** When a wait is due for the sweep: its timeout or its end, whichever it has. */
export function waitDueAt(wait: WaitRecord): string | undefined {
  return wait.timeoutAt ?? wait.until;
}

/** A decision on an approval gate, as `approval.decided` journals it. */
export interface ApprovalDecision {
  decision: 'approved' | 'denied' | 'timedOut';
  /** The OS user or token name; `timeout` for a timeout. */
  by: string;
  /** ISO time of the decision. */
  at: string;
  comment?: string;
  /** The approver's form values (checked against the gate's `inputs` schema). */
  inputs?: Record<string, unknown>;
  /** A gate that needs several approvals: the ones given before this decision, in order. */
  approvals?: ApprovalDecision[];
}

/** A cancellation asked for a running run: its driver sees it at its next heartbeat. */
export interface CancelRequest {
  by: string;
  at: string;
}

/** What `RunStore.cancelRun` did. */
export type CancelOutcome =
  /** The run was waiting, queued or interrupted: it is `cancelled` now. */
  | { outcome: 'cancelled' }
  /** The run is running: its driver stops it at a journaled point and ends it `cancelled`. */
  | { outcome: 'requested' }
  /** The run had already ended (`status`): nothing changed. */
  | { outcome: 'ended'; status: RunStatus };

/** The journal: one entry per transition, in order. */
export type JournalEvent =
  | { type: 'step.started'; path: StepPath; stepId: string; kind: string; input?: unknown }
  | {
      type: 'request.sending';
      path: StepPath;
      attempt: number;
      operationId: string;
      method: string;
      /** What reconciliation needs to find the write's effect later (e.g. system id, serials). */
      idempotency?: Record<string, unknown>;
    }
  /** `body`: a write's answer, when small, so a resume that re-attaches gives the step the outputs the first run would have. */
  | { type: 'request.answered'; path: StepPath; attempt: number; httpStatus: number; location?: string; body?: unknown }
  | { type: 'request.failed'; path: StepPath; attempt: number; error: ErrorRecord; outcomeUnknown: boolean }
  | { type: 'operation.progress'; path: StepPath; location: string; progressPercent?: number; state?: string }
  | { type: 'operation.finished'; path: StepPath; location: string; outcome: string; operation?: unknown }
  | { type: 'retry.scheduled'; path: StepPath; attempt: number; delayMs: number; reason: string }
  /**
   * A quiet step with one attempt journals only this entry: it then carries its `stepId` and
   * `kind` (what `step.started` would have) and its `input` when that is not its outputs.
   */
  | {
      type: 'step.finished';
      path: StepPath;
      status: StepStatus;
      outputs?: unknown;
      error?: ErrorRecord;
      stepId?: string;
      kind?: string;
      input?: unknown;
    }
  /** `path` is the loop step's path; the item itself is `path[index]` (e.g. `systems[3]`). */
  | { type: 'item.started'; path: StepPath; index: number }
  | { type: 'item.finished'; path: StepPath; index: number; status: StepStatus; label?: string }
  /** The run stops to wait (`path`: the waiting step); the run's status becomes `waiting`. */
  | { type: 'run.waiting'; path: StepPath; wait: WaitRecord }
  /** The decision on the approval gate at `path`, written before the run goes on. */
  | ({ type: 'approval.decided'; path: StepPath } & ApprovalDecision)
  /** An approval counted towards a gate's `required` that does not end the wait yet (written by `endWait` with `keep`). */
  | ({ type: 'approval.given'; path: StepPath; of: number } & ApprovalDecision)
  /** A wait ended by its time (a maintenance window opened), written before the run goes on. */
  | { type: 'wait.ended'; path: StepPath; reason: WaitReason; at: string }
  /** `fleetbook runs cancel` (`path` is ''): `requested` for a running run, else it ended then. */
  | { type: 'run.cancelled'; path: StepPath; by: string; requested: boolean };

export interface JournalEntry {
  runId: string;
  seq: number;
  at: string;
  event: JournalEvent;
}

/** How `RunStore.journal` reads. */
export interface JournalReadOptions {
  /**
   * false: without the steps' rendered inputs (`step.started`) and outputs (`step.finished`),
   * except a string `outputs.message` (what a `log:` step wrote), so a journal of many MB of
   * API answers reads as its transitions only. @default true
   */
  values?: boolean;
}

export interface NewRun {
  id: string;
  playbook: string;
  /** Where the playbook was loaded from, to load it again on resume. */
  playbookSource: string;
  /** Hash of the normalised playbook; resume refuses a changed structure unless forced. */
  playbookHash: string;
  /** Inputs with every secret input removed (secrets are never stored). */
  inputs: Record<string, unknown>;
  secretInputNames: string[];
  /**
   * The secret inputs that took their playbook default when the run started (names, never
   * values): a resume may take the default again; every other secret input must be given again.
   * @default [] (every secret input was given)
   */
  defaultedSecretInputs?: string[];
  dryRun: boolean;
  /**
   * `trigger`: `fleetbook schedules trigger` or the server's "trigger now" (a schedule run now, by
   * hand; `by`: who, the token's name through the server). `ignoredWindow`: started with
   * `--ignore-window` while its maintenance window was closed (or a freeze held): why.
   */
  trigger: {
    kind: 'manual' | 'schedule' | 'resume' | 'trigger';
    scheduleId?: string;
    by?: string;
    ignoredWindow?: string;
    /** Started by "run again" or "retry failed" (`fleetbook rerun`) of this run. */
    rerunOf?: string;
    /** With `rerunOf`: what succeeded in that run was replayed from its journal, the rest ran. */
    retriedFailed?: boolean;
  };
  startedAt: string;
}

export interface RunRecord extends NewRun {
  defaultedSecretInputs: string[];
  status: RunStatus;
  endedAt?: string;
  outputs?: unknown;
  error?: ErrorRecord;
  /** How many times the run was resumed. */
  resumes: number;
  /** What a `waiting` run waits for (absent otherwise). */
  wait?: WaitRecord;
  /** A cancellation asked for while the run was running (its driver ends it `cancelled`). */
  cancelRequested?: CancelRequest;
}

/** A step execution as the journal leaves it (folded from its events). */
export interface StepRecord {
  path: StepPath;
  stepId: string;
  kind: string;
  status: StepStatus;
  attempts: number;
  startedAt: string;
  endedAt?: string;
  input?: unknown;
  outputs?: unknown;
  /**
   * Set by a fold without values (`JournalFoldOptions.values: false`): the seq of the
   * `step.finished` entry whose outputs it left out, to read them back when they are needed.
   */
  finishedSeq?: number;
  /**
   * Set by a fold without values: the seq of the entry that gave the step its input (its
   * `step.started`, or a quiet step's one `step.finished`), where `input` would be. Removed when
   * the step finishes a second time without starting again (a journal written by hand or
   * damaged): its outputs are then the last ones any of its endings had, which no one seq tells.
   */
  startedSeq?: number;
  error?: ErrorRecord;
  /** The last async operation Location seen for the step (re-attach point). */
  location?: string;
  operationOutcome?: string;
  /** A loop item's label (its item's name or id), from its `item.finished`. */
  itemLabel?: string;
  /**
   * The last request sent with no answer journaled, or failed with `outcomeUnknown`: the
   * write resume must reconcile before sending it again. Absent once answered or finished.
   */
  unansweredRequest?: UnansweredRequest;
}

/** A `log:` step's message with when and where it was written. */
export interface LoggedLine {
  at: string;
  path: string;
  message: string;
}

/**
 * A run's journal up to `throughSeq` folded without values (`foldJournalView`): what the text
 * of `fleetbook runs show` prints. The store keeps one for a finished fleet's run
 * (`saveJournalView`), so `runs show` folds only the entries after it.
 */
export interface JournalView {
  /** The last seq folded. */
  throughSeq: number;
  /** The fold's records, in its order (`createJournalFold` with `values: false`). */
  records: StepRecord[];
  /** The paths of the `log:` steps started (to tell their messages from other outputs). */
  logPaths: string[];
  /** The `log:` lines, in journal order. */
  log: LoggedLine[];
}

/** A `request.sending` whose outcome the journal does not know. */
export interface UnansweredRequest {
  attempt: number;
  operationId: string;
  method: string;
  idempotency?: Record<string, unknown>;
  /** Present when the request failed in a way that may have reached the server. */
  error?: ErrorRecord;
}

export interface RunFilter {
  playbook?: string;
  status?: RunStatus;
  /** ISO timestamp: runs started at or after. */
  since?: string;
  /** ISO timestamp: runs started at or before (the server's cursor paging). */
  until?: string;
  /** Runs whose id starts with this text (the short ids an operator types). */
  idPrefix?: string;
  /** @default 50 */
  limit?: number;
}

/** What both store factories accept. */
export interface RunStoreOptions {
  /** The clock for journal times, run end times and lease expiry (tests pass their own). @default () => new Date() */
  now?: () => Date;
  /** Largest JSON of one journal event or run result, in bytes. @default 262144 (256 KiB) */
  maxPayloadBytes?: number;
}

export interface AppendOptions extends FenceOptions {
  /**
   * Keep the entry in order to commit it with the next ones (see `RunStore.append`); the
   * store may also commit it at once (the memory store does). @default false
   */
  buffered?: boolean;
}

/** The fencing token of a claim: `append`/`setRunStatus` carrying a stale one are refused. */
export interface FenceOptions {
  /** The token of the claim the caller holds (see `RunQueue.claimRun`). */
  fence?: number;
}

/** A queued run a worker claimed: drive it with `store.fenced(run.id, fence)`. */
export interface RunClaim {
  run: RunRecord;
  /** Grows at every claim of any run: a later claim always holds a larger token. */
  fence: number;
  /** The claim this one took over (a worker presumed dead), when there was one. */
  previousOwner?: string;
}

/**
 * The queue of a shared store (team mode): runs wait `queued` until a worker claims one; the
 * claim is a lease with a fencing token, renewed by its holder, taken over by another worker
 * once it lapses. Every write of the run then carries the token, and the store refuses one
 * that is no longer current, so a worker presumed dead cannot write after another took over.
 */
export interface RunQueue {
  /** Records a run as `queued` (not started: no journal yet). */
  enqueueRun(run: NewRun): Promise<RunRecord>;
  /**
   * Claims the oldest queued run, or a running one whose claim lapsed, for `owner` until
   * `ttlMs` from now; none when there is nothing to claim. Workers never wait for each other's
   * candidates (`FOR UPDATE SKIP LOCKED`).
   */
  claimRun(owner: string, ttlMs: number): Promise<RunClaim | undefined>;
  /**
   * Extends the claim `fence` of `runId` while the run is running; false only when it is no
   * longer the current claim (another worker took the run over). A run its holder ended or
   * suspended meanwhile answers true: nothing was taken from it.
   */
  renewClaim(runId: string, fence: number, ttlMs: number): Promise<boolean>;
  /** Puts a claimed run back in the queue (a draining worker); false when the claim is stale. */
  requeueRun(runId: string, fence: number): Promise<boolean>;
  /** This store as seen by the holder of claim `fence` on `runId`: its writes of that run are fenced. */
  fenced(runId: string, fence: number): RunStore;
  /**
   * Records that `scheduleKey` fired for `fireAt` (ISO) as run `runId`: true for the first
   * record of that fire, false when one exists (another leader fired it), whoever asks.
   */
  recordFire(scheduleKey: string, fireAt: string, runId: string): Promise<boolean>;
  /**
   * Tries to become the one leader named `name` (the scheduler): held by a connection of its
   * own, released when it is closed or when the process dies (the server sees the connection
   * go). Undefined when another process leads.
   */
  tryLeadership(name: string): Promise<Leadership | undefined>;
}

/** Leadership held by a dedicated connection (see `RunQueue.tryLeadership`). */
export interface Leadership {
  /** False once the connection (and with it the lock) is gone. */
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

export type QueueStore = RunStore & RunQueue;

/** What an API token may do (`fleetbook server`): viewer reads, operator also acts on runs, admin also manages tokens and schedules. */
export const TokenRole = { viewer: 'viewer', operator: 'operator', admin: 'admin' } as const;
export type TokenRole = (typeof TokenRole)[keyof typeof TokenRole];

/** An API token as listed: never its secret, which is shown once when made and stored only hashed. */
export interface ApiToken {
  id: string;
  /** Unique among the store's tokens (revoked ones too): who the token was made for. */
  name: string;
  role: TokenRole;
  /** The role holds only for playbooks whose names match one of these patterns (`*`: any text); viewer elsewhere. */
  playbooks?: string[];
  createdAt: string;
  revokedAt?: string;
}

/** A token to record: `hash` is the hex SHA-256 of its secret. */
export interface NewApiToken extends Omit<ApiToken, 'revokedAt'> {
  hash: string;
}

/**
 * A web UI session of `fleetbook server`, kept in the store so it outlives a restart and every
 * server sharing the store knows it. Only a hash of the session id is kept: the id itself is
 * only ever in the browser's cookie.
 */
export interface WebSession {
  /** Hex SHA-256 of the session id. */
  idHash: string;
  tokenId: string;
  createdAt: string;
  /** Epoch ms after which the session is gone (not returned, swept). */
  expiresAtMs: number;
  /** A session of a single sign-on: who the identity provider said (no token behind it; `tokenId` names the provider). */
  user?: WebSessionUser;
}

/** The person a single sign-on session is for, as read from the ID token at the login. */
export interface WebSessionUser {
  name: string;
  groups: string[];
  /** The highest role the user holds anywhere. */
  role: TokenRole;
  /** When a role binding is limited to some playbooks: every role the user holds, each with its playbooks (none: all). */
  grants?: Array<{ role: TokenRole; playbooks?: string[] }>;
}

export interface RunCount {
  playbook: string;
  status: RunStatus;
  count: number;
}

export function isQueueStore(store: RunStore): store is QueueStore {
  return typeof (store as Partial<RunQueue>).claimRun === 'function';
}

/** Where a notification of the outbox is (see `NotificationOutbox`). */
export const NotificationState = {
  /** Recorded, not yet delivered: the next process that looks sends it. */
  pending: 'pending',
  sent: 'sent',
  /** Every try failed (or its channel is gone): kept for `runs show`, never sent again. */
  failed: 'failed',
} as const;
export type NotificationState = (typeof NotificationState)[keyof typeof NotificationState];

/**
 * One message for one channel about one event of a run: a row of the outbox. There is at most
 * one per (run, event, segment, channel), a rule every store holds (a unique constraint in SQL):
 * recording one again keeps the first, whatever state it is in.
 */
export interface NewNotification {
  /**
   * `<runId>/<event>/<segment>/<channel>` (`notificationKeyOf`; a store refuses another), and the
   * idempotency key the channel is sent (`Idempotency-Key` header, e-mail Message-ID).
   */
  key: string;
  runId: string;
  /** `failed`, `succeeded`, `toleranceUsed`, `waiting`. */
  event: string;
  /**
   * Which end of the run: `r<resumes>` (a run resumed and ending again is a new event), and
   * for a wait the gate too (`gate@r0`).
   */
  segment: string;
  /** The channel's name in fleetbook.yaml. */
  channel: string;
  /** The composed message, without secrets (they were scrubbed before it was made). */
  message: unknown;
}

export interface NotificationRecord extends NewNotification {
  state: NotificationState;
  /** Sends begun (a claim counts one, so a send cut off by a crash counts too). */
  attempts: number;
  createdAt: string;
  /** Not claimed before this time (a retry's backoff). */
  nextAttemptAt: string;
  sentAt?: string;
  lastError?: string;
  /** The process sending it now, while its claim lasts. */
  claimedBy?: string;
  claimExpiresAt?: string;
}

/** How a send ended: delivered, to be tried again at `retryAtMs`, or given up. */
export type NotificationOutcome =
  { state: 'sent' } | { state: 'pending'; retryAtMs: number; error: string } | { state: 'failed'; error: string };

export interface NotificationFilter {
  runId?: string;
  state?: NotificationState;
  /** @default 50 */
  limit?: number;
}

/**
 * The notification outbox: a message is recorded with the event that causes it (a run's end is
 * recorded with its notifications in one transaction) and sent afterwards, by whichever process
 * claims it. A claim is a lease on the row: one sender at a time, taken over when it lapses
 * (or, on the same host, when its holder is verifiably dead).
 */
export interface NotificationOutbox {
  /** Records notifications as pending; one whose key is already recorded is left as it is. */
  addNotifications(items: readonly NewNotification[]): Promise<void>;
  /** Oldest first. */
  listNotifications(filter?: NotificationFilter): Promise<NotificationRecord[]>;
  /**
   * Claims the pending notification `key` for `owner` until `ttlMs` from now, counting an
   * attempt, in one atomic step: undefined when it is not pending (sent and given up are
   * final), not due yet, or claimed by anyone whose claim is live, `owner` included (unless
   * that holder is `takeOverFrom`, one the caller knows to be dead).
   */
  claimNotification(
    key: string,
    owner: string,
    ttlMs: number,
    options?: { takeOverFrom?: string },
  ): Promise<NotificationRecord | undefined>;
  /** Records how `owner`'s send ended and frees the claim; false when `owner` no longer holds it. */
  settleNotification(key: string, owner: string, outcome: NotificationOutcome): Promise<boolean>;
}

/** How `RunStore.endWait` ends a wait. */
export interface WaitEnding {
  /** The gate or loop the run waits at: a run that went on to wait elsewhere is left alone. */
  path: StepPath;
  /** ISO time the ending is made at, by the caller's clock: compared with the wait's due time. */
  at: string;
  /** An approver's decision (`approval.decided`); absent, only the due time ends the wait (a sweep, a resume). */
  decision?: JournalEvent;
  /** What ends the wait once it is due: written instead of `decision` from the due time on. */
  due: JournalEvent;
  next: RunStatus;
  /**
   * How many approvals the caller read in the wait (`WaitRecord.approvals`): when the wait holds
   * another number, another approval came meanwhile and nothing is written (`changed`; read again).
   */
  approvalsSeen?: number;
  /**
   * An approval that does not end the wait (the gate needs more): the wait as it becomes, written
   * with `decision` (`approval.given`) while the run keeps waiting (`kept`).
   */
  keep?: WaitRecord;
}

/** What `RunStore.endWait` wrote: the decision, an approval kept in the wait, the due event, or nothing (see there). */
export type WaitOutcome = 'decided' | 'kept' | 'due' | 'notDue' | 'notWaiting' | 'changed';

/** What `setRunStatus` records with the status. */
export interface RunResultRecord {
  outputs?: unknown;
  error?: ErrorRecord;
  /** Recorded in the same transaction as the status: a run never ends without its notifications. */
  notifications?: readonly NewNotification[];
}

/** Runs: created, ended by their driver, waiting, resumed, cancelled, read as readers see them (a running run whose driver died reads `interrupted`), pruned. */
export interface RunsFacet {
  createRun(run: NewRun): Promise<RunRecord>;
  /**
   * Writes the run's status (its driver's end), checking in the same transaction whether a
   * cancellation was asked of the running run (`cancelRun`): if so the run ends `cancelled`
   * instead, without `result.notifications` (see `drivenEnd`). Resolves to the status written.
   */
  setRunStatus(runId: string, status: RunStatus, result?: RunResultRecord, options?: FenceOptions): Promise<RunStatus>;
  /** Marks a run resumed (counts resumes, status back to running, its wait forgotten). */
  markResumed(runId: string, options?: FenceOptions): Promise<void>;
  /**
   * Ends the run's drive as `waiting` for `wait` (after the engine journaled `run.waiting`): no
   * end time, and in a queue store no claim kept, so nothing holds the run while it waits. A
   * cancellation asked of the running run wins, as in `setRunStatus`: the run ends `cancelled`.
   * Resolves to the status written.
   */
  suspendRun(runId: string, wait: WaitRecord, options?: FenceOptions): Promise<RunStatus>;
  /**
   * Ends the wait at `ending.path`, in one transaction that reads the run's wait and compares
   * its due time (`waitDueAt`) with `ending.at`: from its due time on, `ending.due` is written
   * (an approval's `timedOut`, a window's `wait.ended`) whatever decision came with it; before,
   * `ending.decision` is. The run takes `ending.next` (`queued` for a worker to resume it,
   * `interrupted` for this process to). Nothing is written when the run no longer waits there
   * (`notWaiting`: another decider, the sweep or a resume came first; one wins), when nothing
   * ends the wait yet (`notDue`: no decision and not due), or when its approvals are not the
   * `approvalsSeen` the caller counted (`changed`). With `keep`, the run stays waiting: the wait
   * becomes `keep` and `decision` is journaled (`kept`).
   */
  endWait(runId: string, ending: WaitEnding): Promise<WaitOutcome>;
  /** Waiting runs whose timeout or end (`waitDueAt`) is at or before `now` (ISO), oldest first. */
  listDueWaits(now: string, limit?: number): Promise<RunRecord[]>;
  /**
   * Cancels a run on behalf of `by`, in one transaction: a waiting, queued or interrupted run
   * ends `cancelled` at once; a running one gets `cancelRequested` (its driver stops, and its
   * end is written `cancelled` whatever it reached meanwhile: see `setRunStatus`); both journal
   * `run.cancelled`. A run that already ended is not touched (`ended`): the cancel came too late.
   */
  cancelRun(runId: string, by: string): Promise<CancelOutcome>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /** How many runs the store holds, by playbook and status (one grouped count, for `/metrics`). */
  countRuns(): Promise<RunCount[]>;
  /** Deletes runs that ended before `before` (ISO); returns how many. */
  prune(before: string): Promise<number>;
}

/** The write-ahead journal of each run, and the views kept of a long one. */
export interface JournalFacet {
  /**
   * Appends to the journal. Unbuffered (the default), it resolves once the entry is durable,
   * together with every entry buffered before it. A buffered entry is kept in order and
   * committed later, with the entries around it, by the next unbuffered append, by
   * `setRunStatus`, `markResumed`, `close`, by any read, when the buffer is full, or by a
   * short timer: a crash may lose it. For events that precede no effect outside the run.
   */
  append(runId: string, event: JournalEvent, options?: AppendOptions): Promise<void>;
  /**
   * The run's journal in order; only the entries after seq `afterSeq` when given (a follower
   * reading what is new), and at most `limit` of them (a page: `journalPages` reads a journal
   * of any size in pieces). `options.values: false` leaves out what a view that prints no step
   * values never reads (see `JournalReadOptions`), cut by the database before it is sent.
   */
  journal(runId: string, afterSeq?: number, limit?: number, options?: JournalReadOptions): Promise<JournalEntry[]>;
  /**
   * The run's entries at `seqs` (in any order), with their values, in seq order, in one read: the
   * values a fold without values left out (`StepRecord.startedSeq`, `finishedSeq`), read back a
   * batch at a time. A seq the journal does not hold is left out.
   */
  journalAt(runId: string, seqs: readonly number[]): Promise<JournalEntry[]>;
  steps(runId: string): Promise<StepRecord[]>;
  /** The view of the run's journal kept by `saveJournalView`, if any (a checkpoint: entries may follow it). */
  journalView(runId: string): Promise<JournalView | undefined>;
  /**
   * Keeps `view` as the run's journal view (one per run, gone with the run when it is pruned).
   * A view through an earlier seq than the one kept is ignored.
   */
  saveJournalView(runId: string, view: JournalView): Promise<void>;
}

/** What processes sharing the store coordinate by: leases, the scheduler's state, rate buckets. */
export interface LeasesFacet {
  /**
   * A lease on `key` for `owner` until `ttlMs` from now; false when another live owner holds
   * it. A renewal by the same owner also extends it (a run renews with `renewLease`). Runs (`run:<id>`) and the scheduler
   * (`scheduler`) use leases so two processes never drive the same thing.
   */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /**
   * Extends `owner`'s live lease on `key` to `ttlMs` from now; false when `owner` no longer holds
   * it (released, lapsed, or taken by another since). Unlike `acquireLease` it never takes a free
   * or expired lease: a process paused past its lease (whose run another process may have taken
   * over on the lapse, releasing the lease or not yet acquiring it) must learn it lost the lease,
   * not take it back from under the new holder.
   */
  renewLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(key: string, owner: string): Promise<void>;
  /**
   * Who holds the live lease on `key` (none when free or expired): lets a process take over
   * the lease of an owner it knows to be dead (same host, process gone) without waiting out the TTL.
   */
  leaseHolder(key: string): Promise<{ owner: string; expiresAt: string } | undefined>;
  /** Scheduler state per schedule (last fire, consecutive failures, paused); opaque JSON here. */
  getScheduleState(scheduleKey: string): Promise<Record<string, unknown> | undefined>;
  setScheduleState(scheduleKey: string, state: Record<string, unknown>): Promise<void>;
  /**
   * Sets the top-level fields of `patch` in one atomic update (a `null` removes the field) and
   * keeps the others: two processes (the daemon, `fleetbook schedules resume`) that each write
   * the fields they changed never undo each other's.
   */
  patchScheduleState(scheduleKey: string, patch: Record<string, unknown>): Promise<void>;
  /**
   * The shared rate limiter (GCRA): reserves one start in the bucket `key` (a connection and a
   * rate-limit group) and resolves with how long the caller must wait before starting it
   * (0: now). `intervalMs`: the time one start uses (a minute over the per-minute cap);
   * `toleranceMs`: how far ahead of its pace the bucket may start (the burst). Every process
   * sharing the store shares the bucket: the store serialises the reservations.
   */
  takeRate(key: string, intervalMs: number, toleranceMs: number): Promise<number>;
  /** Nobody starts in bucket `key` before `notBeforeMs` (epoch ms), whatever the tolerance: a 429 or a spent quota, for every process. */
  pushRate(key: string, notBeforeMs: number, toleranceMs: number): Promise<void>;
}

/** `fleetbook server`'s API tokens (hashes only). */
export interface TokensFacet {
  /** Records an API token; `TOKEN_EXISTS` when its name or id is taken. */
  createApiToken(token: NewApiToken): Promise<ApiToken>;
  /** The token `id` with its hash (revoked ones too: the caller refuses them), for the server to check a secret against. */
  getApiToken(id: string): Promise<(ApiToken & { hash: string }) | undefined>;
  /** Every token, oldest first, without hashes. */
  listApiTokens(): Promise<ApiToken[]>;
  /** Revokes the token whose id or name is `idOrName` (kept, marked revoked); undefined when there is none. */
  revokeApiToken(idOrName: string): Promise<ApiToken | undefined>;
}

/** Web UI sessions of `fleetbook server` (id hashes only). */
export interface SessionsFacet {
  /** Records a web UI session (its id's hash only). */
  createWebSession(session: WebSession): Promise<void>;
  /** The session whose id hashes to `idHash`, unless it expired by the store's clock. */
  getWebSession(idHash: string): Promise<WebSession | undefined>;
  /** Ends a session (logout, or its token revoked); nothing when there is none. */
  deleteWebSession(idHash: string): Promise<void>;
  /** Deletes the sessions expired by the store's clock; how many. */
  sweepWebSessions(): Promise<number>;
}

/** The outbox of notifications (see `NotificationOutbox`). */
export type OutboxFacet = NotificationOutbox;

/** Opening is each store's factory; closing commits what is buffered and lets go of the database. */
export interface OpenFacet {
  close(): Promise<void>;
}

/**
 * The run store, facet by facet: each store keeps each facet in a file of its own
 * (`src/store/{memory,sqlite,postgres}/<facet>.ts`), and the contract suite tests it so.
 */
export type RunStore = RunsFacet &
  JournalFacet &
  LeasesFacet &
  OutboxFacet &
  TokensFacet &
  SessionsFacet &
  AuditFacet &
  OpenFacet;
