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
  isQueueStore,
  RunStatus,
  type ApprovalDecision,
  type JournalEntry,
  type JournalEvent,
  type RunRecord,
  type RunStore,
  type StepPath,
  type WaitRecord,
} from '../store/index.js';
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
  /** The OS user, or an API token's name. */
  by: string;
  comment?: string;
  /** The gate's step id or path (`--step`); the waiting gate when absent. */
  step?: string;
  /** The approver's form values as text (`-i name=value`), read by the gate's declared types. */
  inputs?: Record<string, string>;
}

export interface ApprovalRecorded {
  run: RunRecord;
  wait: WaitRecord;
  decision: ApprovalDecision;
  /** The status the run took: `queued` (a worker resumes it) or `interrupted` (resume it here). */
  status: RunStatus;
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

/**
 * Records an approver's decision on the gate a run waits at, after every check (`UsageError`,
 * exit 2, for each refusal): a known run, waiting for an approval, at that gate, by one of its
 * approvers, with form values that fit the gate's declarations. The decision and the run's next
 * status are written in one transaction, so of two deciders at once one wins and the other is
 * refused. The caller then resumes the run (local store) or leaves it to a worker (shared store).
 */
export async function recordApproval(
  store: RunStore,
  request: ApprovalRequest,
  now: () => number,
): Promise<ApprovalRecorded> {
  const { runId } = request;
  const run = await store.getRun(runId);
  if (!run)
    throw new UsageError(`no run ${runId} in the store (\`fleetbook runs list\` shows the runs)`, 'RUN_NOT_FOUND');
  const refuseDecided = (journal: readonly JournalEntry[]): never => {
    const decided = lastDecision(journal);
    if (decided)
      throw new UsageError(
        `run ${runId}: the gate ${decided.path} was already ${decided.decision === 'timedOut' ? 'timed out' : decided.decision} by ${decided.by} at ${decided.at}; a gate is decided once`,
        'APPROVAL_ALREADY_DECIDED',
      );
    throw new UsageError(
      `run ${runId} is not waiting for an approval (it is ${run.status}); \`fleetbook runs list --status waiting\` shows the runs that are`,
      'RUN_NOT_WAITING',
    );
  };
  const wait = run.wait;
  if (run.status !== RunStatus.waiting || !wait) return refuseDecided(await store.journal(runId));
  if (wait.reason !== 'approval')
    throw new UsageError(`run ${runId} waits for ${describeWait(wait)}, not for an approval`, 'RUN_NOT_WAITING');
  if (request.step !== undefined && request.step !== wait.path && !wait.path.endsWith(`.${request.step}`))
    throw new UsageError(
      `run ${runId} waits at the gate ${wait.path}, not at ${request.step}; leave out --step or give --step ${wait.path}`,
      'NOT_THE_WAITING_GATE',
    );
  if (wait.approvers && !wait.approvers.includes(request.by))
    throw new UsageError(
      `${request.by} is not an approver of ${wait.path} in run ${runId} (approvers: ${wait.approvers.join(', ')})`,
      'NOT_AN_APPROVER',
    );
  let inputs: Record<string, unknown> | undefined;
  if (request.decision === 'approved') {
    const specs = inputSpecs(wait.inputs ?? {});
    const given = Object.fromEntries(
      Object.entries(request.inputs ?? {}).map(([name, text]) => [name, parseInputText(specs[name], text)]),
    );
    try {
      inputs = resolveInputs(specs, given, `${run.playbook} (approval ${wait.path})`).values;
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(error.message, 'INVALID_APPROVAL_INPUTS', error.details);
      throw error;
    }
  } else if (request.inputs && Object.keys(request.inputs).length > 0) {
    throw new UsageError('a denial takes no inputs (-i); give the reason with --comment', 'INVALID_APPROVAL_INPUTS');
  }
  const decision: ApprovalDecision = {
    decision: request.decision,
    by: request.by,
    at: new Date(now()).toISOString(),
    ...(request.comment === undefined ? {} : { comment: request.comment }),
    ...(inputs && Object.keys(inputs).length > 0 ? { inputs } : {}),
  };
  const status = statusAfterWait(store);
  if (!(await store.endWait(runId, { type: 'approval.decided', path: wait.path, ...decision }, status)))
    return refuseDecided(await store.journal(runId));
  return { run, wait, decision, status };
}

/** What `endDueWaits` did to one run. */
export interface WaitEnded {
  run: RunRecord;
  wait: WaitRecord;
  /** The status the run took (see `statusAfterWait`). */
  status: RunStatus;
}

/**
 * The sweep of a daemon, worker or server: ends every wait whose time came (an approval's
 * timeout: `approval.decided` `timedOut`, which the gate turns into its `onTimeout`; a window's
 * end: `wait.ended`). In a shared store the runs go back to the queue; in a local one the caller
 * resumes the runs returned. A wait another process ended meanwhile is skipped.
 */
export async function endDueWaits(store: RunStore, now: () => number): Promise<WaitEnded[]> {
  const at = new Date(now()).toISOString();
  const ended: WaitEnded[] = [];
  for (const run of await store.listDueWaits(at)) {
    const wait = run.wait;
    if (!wait) continue;
    const result = await endWaitNow(store, run, wait, at);
    if (result) ended.push(result);
  }
  return ended;
}

/** Ends `run`'s wait as its due time does (see `endDueWaits`); undefined when another ended it first. */
async function endWaitNow(
  store: RunStore,
  run: RunRecord,
  wait: WaitRecord,
  at: string,
): Promise<WaitEnded | undefined> {
  const event: JournalEvent =
    wait.reason === 'approval'
      ? { type: 'approval.decided', path: wait.path, decision: 'timedOut', by: 'timeout', at }
      : { type: 'wait.ended', path: wait.path, reason: wait.reason, at };
  const status = statusAfterWait(store);
  return (await store.endWait(run.id, event, status)) ? { run, wait, status } : undefined;
}

/**
 * `fleetbook resume` of a waiting run: before its due time a refusal (`RUN_WAITING`, exit 2)
 * saying how to end the wait; after it, the wait ends as the sweep would end it.
 */
export async function endWaitForResume(store: RunStore, run: RunRecord, now: () => number): Promise<void> {
  const wait = run.wait;
  if (run.status !== RunStatus.waiting || !wait) return;
  const due = wait.timeoutAt ?? wait.until;
  const at = new Date(now()).toISOString();
  if (due === undefined || due > at) {
    const how =
      wait.reason === 'approval'
        ? `\`fleetbook approve ${run.id}\` or \`fleetbook deny ${run.id} --comment <why>\`${due ? `, or resume after its timeout (${due})` : ''}`
        : `its window opens at ${due ?? 'a time not known'}`;
    throw new UsageError(`run ${run.id} is still waiting for ${describeWait(wait)}: ${how}`, 'RUN_WAITING');
  }
  await endWaitNow(store, run, wait, at);
}
