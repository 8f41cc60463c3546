/**
 * Waiting runs, engine side: the decisions journaled for approval gates, and stopping a run to
 * wait (`RunWaits.waitFor`). A waiting run holds nothing: the process that reached the wait
 * journals `run.waiting`, stops at a journaled point, and ends the run `waiting` in the store;
 * whoever ends the wait (`fleetbook approve`, a timeout sweep, a maintenance window opening) writes the decision
 * with `RunStore.endWait` and the run is resumed from its journal.
 */
import { FleetbookError, UsageError } from '../errors/index.js';
import { inputSpecs } from '../playbook/index.js';
import type { RunWaits, WaitRequest } from '../steps/index.js';
import {
  AuditAction,
  isQueueStore,
  RunStatus,
  type ApprovalDecision,
  type AuditActor,
  type JournalEntry,
  type JournalEvent,
  type RunRecord,
  type RunStore,
  type StepPath,
  type WaitRecord,
} from '../store/index.js';
import { policyRefusal } from './approval-policy.js';
import { EngineErrorCode } from './error-codes.js';
import { parseInputText, resolveInputs } from './inputs.js';

/** The last `approval.decided` of each gate in the journal. */
export function decisionsOf(journal: readonly JournalEntry[]): Map<StepPath, ApprovalDecision> {
  const decisions = new Map<StepPath, ApprovalDecision>();
  for (const { event } of journal) {
    if (event.type !== 'approval.decided') continue;
    const { type: _type, path, ...decision } = event;
    decisions.set(path, decision);
  }
  return decisions;
}

/** What the run waits for, in words: `approval of gate (message)`. */
export function describeWait(wait: Pick<WaitRecord, 'reason' | 'path' | 'message' | 'until'>): string {
  if (wait.reason === 'approval') return `approval of ${wait.path}${wait.message ? ` ("${wait.message}")` : ''}`;
  return `its maintenance window${wait.until ? ` (until ${wait.until})` : ''} at ${wait.path}`;
}

/** The error a step stopped by a wait ends with (`interrupted`, run again once the wait ends). */
export const RUN_WAITING = 'RUN_WAITING';

export interface RunWaitsState extends RunWaits {
  /** The wait the run stopped for, once a step asked for one. */
  waiting(): WaitRecord | undefined;
}

/**
 * The run's `RunWaits`: `waitFor` journals `run.waiting` and aborts `stop` (the signal every
 * step of the run listens to), so nothing new starts and the run ends `waiting`.
 */
export function createRunWaits(options: {
  runId: string;
  decisions: ReadonlyMap<StepPath, ApprovalDecision>;
  now: () => number;
  journal: (event: JournalEvent) => Promise<void>;
  stop: AbortController;
}): RunWaitsState {
  let waiting: WaitRecord | undefined;
  return {
    decisionOf: (path) => options.decisions.get(path),
    async waitFor(path: StepPath, request: WaitRequest): Promise<never> {
      const sinceMs = options.now();
      const { timeoutMs, ...rest } = request;
      const wait: WaitRecord = {
        ...rest,
        path,
        since: new Date(sinceMs).toISOString(),
        ...(timeoutMs === undefined ? {} : { timeoutAt: new Date(sinceMs + timeoutMs).toISOString() }),
      };
      await options.journal({ type: 'run.waiting', path, wait });
      // The first wait is the run's: another reached at once (parallel branches) runs again on resume.
      waiting ??= wait;
      const error = new FleetbookError(`run ${options.runId} waits for ${describeWait(wait)}`, { code: RUN_WAITING });
      options.stop.abort(error);
      throw error;
    },
    waiting: () => waiting,
  };
}

/**
 * The status a run whose wait ended takes: in a shared store `queued`, for any worker to resume;
 * in a local one `interrupted`, for the deciding process (or `fleetbook resume`) to resume.
 */
export function statusAfterWait(store: RunStore): RunStatus {
  return isQueueStore(store) ? RunStatus.queued : RunStatus.interrupted;
}

export interface ApprovalRequest {
  runId: string;
  decision: 'approved' | 'denied';
  /** The OS user, an API token's name, or a signed-in user's name. */
  by: string;
  /** The decider's groups (a signed-in user's, from the provider); none for a token or the CLI, who are approvers by name only. */
  groups?: readonly string[];
  /** Who decides, for the audit log (role, token, address); `{ kind: 'user', name: by }` when absent. */
  actor?: AuditActor;
  comment?: string;
  /** The gate's step id or path (`--step`); the waiting gate when absent. */
  step?: string;
  /**
   * The approver's form values, typed as the gate declares them and checked as a run's inputs are
   * (`resolveInputs`); the CLI reads its `-i name=value` text by those types first (`formInputs`).
   */
  inputs?: Record<string, unknown>;
}

export interface ApprovalRecorded {
  run: RunRecord;
  wait: WaitRecord;
  /** What the journal holds for the gate: the approver's decision, or `timedOut` when the deadline came first. */
  decision: ApprovalDecision;
  /**
   * The status the run took: `queued` (a worker resumes it) or `interrupted` (resume it here);
   * `waiting` when the approval was counted and the gate needs more (`wait` holds them).
   */
  status: RunStatus;
  /**
   * Set when the gate's timeout passed before the decision: the same transaction recorded the
   * timeout instead (the gate's `onTimeout` applies). The caller continues the run as after a
   * decision, then gives the decider this refusal (`APPROVAL_TIMED_OUT`, exit 2 / HTTP 409).
   */
  refused?: UsageError;
}

/**
 * The approver's `-i name=value` text read by the types the waiting gate declares, as `fleetbook
 * run -i` reads a playbook's inputs: a string stays text, any other type is read as JSON.
 */
export function formInputs(
  wait: WaitRecord | undefined,
  text: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const specs = inputSpecs(wait?.inputs ?? {});
  return Object.fromEntries(
    Object.entries(text).map(([name, value]) => [
      name,
      parseInputText(Object.hasOwn(specs, name) ? specs[name] : undefined, value),
    ]),
  );
}

/** A decision already journaled for the last wait of the run, if any. */
function lastDecision(journal: readonly JournalEntry[]): (ApprovalDecision & { path: string }) | undefined {
  for (let index = journal.length - 1; index >= 0; index -= 1) {
    const event = journal[index]?.event;
    if (event?.type === 'run.waiting') return undefined;
    if (event?.type === 'approval.decided') {
      const { type: _type, ...decision } = event;
      return decision;
    }
  }
  return undefined;
}

/** The refusal of a decision that came after the gate's timeout (whoever recorded the timeout). */
function timedOutRefusal(runId: string, wait: Pick<WaitRecord, 'path' | 'timeoutAt' | 'onTimeout'>, at: string) {
  return new UsageError(
    `run ${runId}: the gate ${wait.path} timed out at ${wait.timeoutAt ?? 'its deadline'}, before this decision (${at}); a decision after the timeout is refused, and the gate's onTimeout (${wait.onTimeout ?? 'fail'}) applies`,
    EngineErrorCode.approvalTimedOut,
    { gate: wait.path, onTimeout: wait.onTimeout ?? 'fail', ...(wait.timeoutAt ? { timeoutAt: wait.timeoutAt } : {}) },
  );
}

/** The refusal of a decision on a run that no longer waits at a gate: decided, timed out, or not waiting. */
async function refuseDecided(store: RunStore, run: RunRecord, at: string): Promise<never> {
  const journal = await store.journal(run.id);
  const decided = lastDecision(journal);
  if (decided?.decision === 'timedOut') {
    const waiting = journal.findLast((entry) => entry.event.type === 'run.waiting')?.event;
    const wait = waiting?.type === 'run.waiting' ? waiting.wait : { path: decided.path };
    throw timedOutRefusal(run.id, wait, at);
  }
  if (decided)
    throw new UsageError(
      `run ${run.id}: the gate ${decided.path} was already ${decided.decision} by ${decided.by} at ${decided.at}; a gate is decided once`,
      EngineErrorCode.approvalAlreadyDecided,
    );
  const now = (await store.getRun(run.id)) ?? run;
  throw new UsageError(
    `run ${run.id} is not waiting for an approval (it is ${now.status}); \`fleetbook runs list --status waiting\` shows the runs that are`,
    EngineErrorCode.runNotWaiting,
  );
}

/** The waiting gate `request` may decide, after the checks that need no store write (`UsageError` for each). */
function gateToDecide(run: RunRecord, request: ApprovalRequest): WaitRecord | undefined {
  const wait = run.wait;
  if (run.status !== RunStatus.waiting || !wait) return undefined;
  const { runId } = request;
  if (wait.reason !== 'approval')
    throw new UsageError(`run ${runId} waits for ${describeWait(wait)}, not for an approval`, 'RUN_NOT_WAITING');
  if (request.step !== undefined && request.step !== wait.path && !wait.path.endsWith(`.${request.step}`))
    throw new UsageError(
      `run ${runId} waits at the gate ${wait.path}, not at ${request.step}; leave out --step or give --step ${wait.path}`,
      'NOT_THE_WAITING_GATE',
    );
  const refusal = policyRefusal(wait, run.trigger.by, request);
  if (refusal) throw new UsageError(`run ${runId}: ${refusal.message}`, refusal.code);
  return wait;
}

/** The approver's form values checked against the gate's form (defaults applied), or none for a denial. */
function checkedForm(run: RunRecord, wait: WaitRecord, request: ApprovalRequest): Record<string, unknown> | undefined {
  if (request.decision === 'denied') {
    if (request.inputs && Object.keys(request.inputs).length > 0)
      throw new UsageError('a denial takes no inputs (-i); give the reason with --comment', 'INVALID_APPROVAL_INPUTS');
    return undefined;
  }
  try {
    return resolveInputs(inputSpecs(wait.inputs ?? {}), request.inputs ?? {}, `${run.playbook} (approval ${wait.path})`)
      .values;
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(error.message, 'INVALID_APPROVAL_INPUTS', error.details);
    throw error;
  }
}

/**
 * Records an approver's decision on the gate a run waits at, after every check (`UsageError`,
 * exit 2, for each refusal): a known run, waiting for an approval, at that gate, by one of its
 * approvers, with form values that fit the gate's declarations. One store transaction compares
 * the decision's time (`now`) with the gate's timeout and writes the decision, or after the
 * timeout the timeout itself (then `refused` is set), with the run's next status: of two
 * deciders, the sweep and a resume at once, one wins and the others are refused. The caller then
 * resumes the run (local store) or leaves it to a worker (shared store).
 */
export async function recordApproval(
  store: RunStore,
  request: ApprovalRequest,
  now: () => number,
): Promise<ApprovalRecorded> {
  // Every door's decision comes here (the CLI's approve, the API, the UI): audited once, here.
  const entry = {
    actor: request.actor ?? { kind: 'user' as const, name: request.by },
    action: request.decision === 'approved' ? AuditAction.runApprove : AuditAction.runDeny,
    object: { kind: 'run', id: request.runId },
    ...(request.comment === undefined ? {} : { detail: { comment: request.comment } }),
  };
  try {
    const recorded = await decideWait(store, request, now);
    await store.appendAudit({ ...entry, outcome: recorded.refused ? 'refused' : 'ok' });
    return recorded;
  } catch (error) {
    await store.appendAudit({ ...entry, outcome: 'refused', detail: { ...entry.detail, error: errorCodeOf(error) } });
    throw error;
  }
}

/** The code of a refusal, for the audit log. */
function errorCodeOf(error: unknown): string {
  return (error as { code?: unknown }).code?.toString() ?? 'ERROR';
}

/** A decision made on a count another approval changed meanwhile is checked again on the new one. */
async function decideWait(store: RunStore, request: ApprovalRequest, now: () => number): Promise<ApprovalRecorded> {
  for (let attempt = 1; ; attempt += 1) {
    const recorded = await recordOnce(store, request, now);
    if (recorded !== 'changed') return recorded;
    if (attempt >= MAX_DECISION_ATTEMPTS)
      throw new UsageError(
        `run ${request.runId}: the gate's approvals kept changing while this decision was recorded; nothing was recorded, decide again`,
        EngineErrorCode.approvalAlreadyDecided,
      );
  }
}

/** How often a decision is checked again after another approval changed the gate's count. */
const MAX_DECISION_ATTEMPTS = 5;

/** One reading of the run and one `endWait`: `changed` when another approval came in between. */
async function recordOnce(
  store: RunStore,
  request: ApprovalRequest,
  now: () => number,
): Promise<ApprovalRecorded | 'changed'> {
  const { runId } = request;
  const run = await store.getRun(runId);
  if (!run)
    throw new UsageError(`no run ${runId} in the store (\`fleetbook runs list\` shows the runs)`, 'RUN_NOT_FOUND');
  const atMs = now();
  const at = new Date(atMs).toISOString();
  const wait = gateToDecide(run, request);
  if (!wait) return refuseDecided(store, run, at);
  // After the timeout the form is not read: the store records the timeout whatever it holds.
  const late = wait.timeoutAt !== undefined && Date.parse(wait.timeoutAt) <= atMs;
  const inputs = late ? undefined : checkedForm(run, wait, request);
  const decision: ApprovalDecision = {
    decision: request.decision,
    by: request.by,
    at,
    ...(request.comment === undefined ? {} : { comment: request.comment }),
    ...(inputs && Object.keys(inputs).length > 0 ? { inputs } : {}),
  };
  const ending = policyEnding(wait, decision);
  const status = ending.keep ? RunStatus.waiting : statusAfterWait(store);
  const due = dueEvent(wait, at);
  const outcome = await store.endWait(runId, { path: wait.path, at, due, next: status, ...ending });
  if (outcome === 'changed') return 'changed';
  if (outcome === 'decided' || outcome === 'kept')
    return { run, wait: ending.keep ?? wait, decision: ending.recorded, status };
  if (outcome !== 'due') return refuseDecided(store, run, at);
  const { type: _type, path: _path, ...timedOut } = due as Extract<JournalEvent, { type: 'approval.decided' }>;
  return { run, wait, decision: timedOut, status: statusAfterWait(store), refused: timedOutRefusal(runId, wait, at) };
}

/**
 * What the store writes for `decision` under the gate's policy: a denial, or the approval that
 * makes `required`, decides the gate (`approval.decided`, with the approvals before it); an
 * approval short of it is kept in the wait (`approval.given`), the run still waiting. Either
 * is written only if the wait still holds the approvals counted here (`approvalsSeen`).
 */
function policyEnding(
  wait: WaitRecord,
  decision: ApprovalDecision,
): { decision: JournalEvent; approvalsSeen: number; keep?: WaitRecord; recorded: ApprovalDecision } {
  const earlier = wait.approvals ?? [];
  const approvalsSeen = earlier.length;
  const required = wait.required ?? 1;
  if (decision.decision === 'approved' && earlier.length + 1 < required) {
    const keep = { ...wait, approvals: [...earlier, decision] };
    const given: JournalEvent = { type: 'approval.given', path: wait.path, of: required, ...decision };
    return { decision: given, approvalsSeen, keep, recorded: decision };
  }
  const recorded = earlier.length > 0 ? { ...decision, approvals: earlier } : decision;
  return { decision: { type: 'approval.decided', path: wait.path, ...recorded }, approvalsSeen, recorded };
}

/** What `endDueWaits` did to one run. */
export interface WaitEnded {
  run: RunRecord;
  wait: WaitRecord;
  /** The status the run took (see `statusAfterWait`). */
  status: RunStatus;
}

/**
 * Whether a run's waits are its schedule's scheduler's to end on a local store (the one process
 * that continues it): a fire's run (`trigger.kind` `schedule`), resumed by the daemon as a fire.
 * A run of `schedules trigger` or "Trigger now" names its schedule too (`scheduleId`), but it was
 * started by hand: like any other run, the server ends its waits and resumes it. One rule for
 * both sweeps, so no wait is ended by a process that then leaves its run `interrupted`.
 */
export function continuedByScheduler(run: Pick<RunRecord, 'trigger'>): boolean {
  return run.trigger.kind === 'schedule' && run.trigger.scheduleId !== undefined;
}

/**
 * The sweep of a daemon, worker or server: ends every wait whose time came (an approval's
 * timeout: `approval.decided` `timedOut`, which the gate turns into its `onTimeout`; a window's
 * end: `wait.ended`). In a shared store the runs go back to the queue; in a local one the caller
 * resumes the runs returned. A wait another process ended meanwhile is skipped, and so is a run
 * `take` leaves to another process (one that continues the run once its wait ended).
 */
export async function endDueWaits(
  store: RunStore,
  now: () => number,
  take: (run: RunRecord) => boolean = () => true,
): Promise<WaitEnded[]> {
  const at = new Date(now()).toISOString();
  const ended: WaitEnded[] = [];
  for (const run of await store.listDueWaits(at)) {
    const wait = run.wait;
    if (!wait || !take(run)) continue;
    const status = statusAfterWait(store);
    if ((await store.endWait(run.id, { path: wait.path, at, due: dueEvent(wait, at), next: status })) === 'due')
      ended.push({ run, wait, status });
  }
  return ended;
}

/** What ends `wait` once it is due: an approval's timeout, a window's end. */
function dueEvent(wait: WaitRecord, at: string): JournalEvent {
  return wait.reason === 'approval'
    ? { type: 'approval.decided', path: wait.path, decision: 'timedOut', by: 'timeout', at }
    : { type: 'wait.ended', path: wait.path, reason: wait.reason, at };
}

/**
 * `fleetbook resume` of a waiting run: before its due time a refusal (`RUN_WAITING`, exit 2)
 * saying how to end the wait; after it, the wait ends as the sweep would end it.
 */
export async function endWaitForResume(store: RunStore, run: RunRecord, now: () => number): Promise<void> {
  const wait = run.wait;
  if (run.status !== RunStatus.waiting || !wait) return;
  const at = new Date(now()).toISOString();
  const outcome = await store.endWait(run.id, {
    path: wait.path,
    at,
    due: dueEvent(wait, at),
    next: statusAfterWait(store),
  });
  if (outcome !== 'notDue') return;
  const due = wait.timeoutAt ?? wait.until;
  const how =
    wait.reason === 'approval'
      ? `\`fleetbook approve ${run.id}\` or \`fleetbook deny ${run.id} --comment <why>\`${due ? `, or resume after its timeout (${due})` : ''}`
      : `its window opens at ${due ?? 'a time not known'}`;
  throw new UsageError(`run ${run.id} is still waiting for ${describeWait(wait)}: ${how}`, 'RUN_WAITING');
}
