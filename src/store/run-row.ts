import { decodePayload, defaultMaxPayloadBytes, encodePayload, normaliseTimestamp } from './payload.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import type {
  CancelRequest,
  ErrorRecord,
  JournalEntry,
  JournalEvent,
  NewRun,
  RunRecord,
  RunResultRecord,
  RunStoreOptions,
  WaitEnding,
  WaitOutcome,
  WaitRecord,
} from './types.js';
import { RunStatus, waitDueAt } from './types.js';

/**
 * A run as both stores keep it: scalars for what is filtered on, JSON text for the rest.
 * The memory store holds these objects, the SQLite store selects its columns under these
 * names, and one pair of conversions serves both.
 */
export interface RunRow {
  id: string;
  playbook: string;
  playbookSource: string;
  playbookHash: string;
  inputsJson: string;
  secretInputNamesJson: string;
  /** Null in runs stored before it was kept: read as none defaulted, so every secret is asked for. */
  defaultedSecretInputsJson: string | null;
  dryRun: number;
  triggerJson: string;
  startedAt: string;
  status: RunStatus;
  endedAt: string | null;
  outputsJson: string | null;
  errorJson: string | null;
  resumes: number;
  /** The `WaitRecord` of a waiting run. */
  waitJson: string | null;
  /** `waitDueAt` of the wait: what the sweep's query compares. */
  waitDueAt: string | null;
  /** The `CancelRequest` of a running run asked to stop. */
  cancelJson: string | null;
}

export interface JournalRow {
  runId: string;
  seq: number;
  at: string;
  eventJson: string;
}

/** Options with their defaults applied. */
export interface ResolvedStoreOptions {
  now: () => Date;
  /** `now` in epoch ms, without a `Date` made (a journal append is hot). */
  nowMs: () => number;
  maxPayloadBytes: number;
}

export function resolveStoreOptions(options: RunStoreOptions = {}): ResolvedStoreOptions {
  const maxPayloadBytes = options.maxPayloadBytes ?? defaultMaxPayloadBytes;
  if (!Number.isInteger(maxPayloadBytes) || maxPayloadBytes <= 0) {
    throw new StoreError(
      `Expected \`maxPayloadBytes\` to be a positive integer, got ${maxPayloadBytes}.`,
      StoreErrorCode.invalidArgument,
    );
  }
  const { now } = options;
  return { now: now ?? (() => new Date()), nowMs: now ? () => now().getTime() : Date.now, maxPayloadBytes };
}

export function newRunToRow(run: NewRun, options: ResolvedStoreOptions): RunRow {
  if (run.id.length === 0) throw new StoreError('A run id must not be empty.', StoreErrorCode.invalidArgument);
  return {
    id: run.id,
    playbook: run.playbook,
    playbookSource: run.playbookSource,
    playbookHash: run.playbookHash,
    inputsJson: encodePayload(run.inputs, `the inputs of run ${run.id}`, options.maxPayloadBytes),
    secretInputNamesJson: JSON.stringify(run.secretInputNames),
    defaultedSecretInputsJson: JSON.stringify(run.defaultedSecretInputs ?? []),
    dryRun: run.dryRun ? 1 : 0,
    triggerJson: JSON.stringify(run.trigger),
    startedAt: normaliseTimestamp(run.startedAt, `the start time of run ${run.id}`),
    status: RunStatus.running,
    endedAt: null,
    outputsJson: null,
    errorJson: null,
    resumes: 0,
    waitJson: null,
    waitDueAt: null,
    cancelJson: null,
  };
}

export function rowToRun(row: RunRow): RunRecord {
  const run: RunRecord = {
    id: row.id,
    playbook: row.playbook,
    playbookSource: row.playbookSource,
    playbookHash: row.playbookHash,
    inputs: decodePayload<Record<string, unknown>>(row.inputsJson) ?? {},
    secretInputNames: decodePayload<string[]>(row.secretInputNamesJson) ?? [],
    defaultedSecretInputs: decodePayload<string[]>(row.defaultedSecretInputsJson) ?? [],
    dryRun: row.dryRun === 1,
    trigger: decodePayload<RunRecord['trigger']>(row.triggerJson) ?? { kind: 'manual' },
    startedAt: row.startedAt,
    status: row.status,
    resumes: row.resumes,
  };
  if (row.endedAt !== null) run.endedAt = row.endedAt;
  const outputs = decodePayload<unknown>(row.outputsJson);
  if (outputs !== undefined) run.outputs = outputs;
  const error = decodePayload<ErrorRecord>(row.errorJson);
  if (error !== undefined) run.error = error;
  const wait = decodePayload<WaitRecord>(row.waitJson);
  if (wait !== undefined) run.wait = wait;
  const cancel = decodePayload<CancelRequest>(row.cancelJson);
  if (cancel !== undefined) run.cancelRequested = cancel;
  return run;
}

/** Statuses of a run that has not ended (no end time). */
const unended: ReadonlySet<RunStatus> = new Set([RunStatus.running, RunStatus.queued, RunStatus.waiting]);

/** The columns `setRunStatus` writes: a run that is not running has ended now. */
export function statusChange(
  runId: string,
  status: RunStatus,
  result: { outputs?: unknown; error?: ErrorRecord; notifications?: unknown } | undefined,
  options: ResolvedStoreOptions,
): Pick<RunRow, 'status' | 'endedAt'> & { outputsJson?: string | null; errorJson?: string | null } {
  if (!Object.values(RunStatus).includes(status)) {
    throw new StoreError(`'${String(status)}' is not a run status.`, StoreErrorCode.invalidArgument);
  }
  const change: ReturnType<typeof statusChange> = {
    status,
    endedAt: unended.has(status) ? null : options.now().toISOString(),
  };
  // Notifications alone (a run becoming `waiting`) leave the outputs and error as they are.
  const resultGiven = result && !(result.notifications !== undefined && !('outputs' in result) && !('error' in result));
  if (result && resultGiven) {
    change.outputsJson =
      result.outputs === undefined
        ? null
        : encodePayload(result.outputs, `the outputs of run ${runId}`, options.maxPayloadBytes);
    change.errorJson =
      result.error === undefined
        ? null
        : encodePayload(result.error, `the error of run ${runId}`, options.maxPayloadBytes);
  }
  return change;
}

export function encodeEvent(runId: string, event: JournalEvent, options: ResolvedStoreOptions): string {
  return encodePayload(
    event,
    () => `the journal event '${event.type}' of ${event.path} in run ${runId}`,
    options.maxPayloadBytes,
  );
}

export function rowToEntry(row: JournalRow): JournalEntry {
  return { runId: row.runId, seq: row.seq, at: row.at, event: JSON.parse(row.eventJson) as JournalEvent };
}

export function runNotFound(runId: string): StoreError {
  return new StoreError(`There is no run '${runId}' in the store.`, StoreErrorCode.runNotFound, { runId });
}

export function runExists(runId: string): StoreError {
  return new StoreError(`A run '${runId}' is already in the store; run ids must be unique.`, StoreErrorCode.runExists, {
    runId,
  });
}

export function assertLeaseTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new StoreError(
      `Expected \`ttlMs\` to be a positive number of milliseconds, got ${ttlMs}.`,
      StoreErrorCode.invalidArgument,
    );
  }
}

/** @default 50 */
export const defaultListLimit = 50;

export function normaliseFilter(filter: { since?: string; until?: string; limit?: number }): {
  since?: string;
  until?: string;
  limit: number;
} {
  const limit = filter.limit ?? defaultListLimit;
  if (!Number.isInteger(limit) || limit <= 0) {
    throw new StoreError(`Expected \`limit\` to be a positive integer, got ${limit}.`, StoreErrorCode.invalidArgument);
  }
  return {
    limit,
    ...(filter.since === undefined ? {} : { since: normaliseTimestamp(filter.since, 'since') }),
    ...(filter.until === undefined ? {} : { until: normaliseTimestamp(filter.until, 'until') }),
  };
}

/** The columns of a run made `waiting` for `wait` (see `RunStore.suspendRun`). */
export function waitColumns(
  runId: string,
  wait: WaitRecord,
  options: ResolvedStoreOptions,
): { waitJson: string; waitDueAt: string | null } {
  const due = waitDueAt(wait);
  return {
    waitJson: encodePayload(wait, `the wait of run ${runId}`, options.maxPayloadBytes),
    waitDueAt: due === undefined ? null : normaliseTimestamp(due, `the due time of the wait of run ${runId}`),
  };
}

/**
 * What `RunStore.endWait` writes for the run `row` as its transaction read it: every store
 * decides here, so a decision, the sweep and a resume compare one due time the same way.
 */
export function waitEndingOf(
  row: Pick<RunRow, 'status' | 'waitJson' | 'waitDueAt'> | undefined,
  ending: WaitEnding,
): { outcome: WaitOutcome; event?: JournalEvent } {
  const wait = row?.status === RunStatus.waiting ? decodePayload<WaitRecord>(row.waitJson) : undefined;
  if (!row || wait?.path !== ending.path) return { outcome: 'notWaiting' };
  // Due at its due time itself, as `listDueWaits` counts it.
  if (row.waitDueAt !== null && row.waitDueAt <= normaliseTimestamp(ending.at, 'the time the wait ends'))
    return { outcome: 'due', event: ending.due };
  if (!ending.decision) return { outcome: 'notDue' };
  // The count the decider read: another approval in between could make this one a duplicate or the last.
  if (ending.approvalsSeen !== undefined && (wait.approvals?.length ?? 0) !== ending.approvalsSeen)
    return { outcome: 'changed' };
  return { outcome: ending.keep ? 'kept' : 'decided', event: ending.decision };
}

/** Statuses `cancelRun` ends at once: no process drives the run. */
export const cancellableAtOnce: ReadonlySet<RunStatus> = new Set([
  RunStatus.waiting,
  RunStatus.queued,
  RunStatus.interrupted,
]);

/** Statuses a run keeps for good: nothing resumes, decides or cancels it any more. */
export const finalStatuses: ReadonlySet<RunStatus> = new Set([
  RunStatus.succeeded,
  RunStatus.failed,
  RunStatus.cancelled,
]);

/** The error a cancelled run ends with. */
export function cancelledError(runId: string, by: string): ErrorRecord {
  return { message: `run ${runId} was cancelled by ${by}`, code: 'RUN_CANCELLED', details: { by } };
}

/** `run.cancelled`, journaled by `cancelRun`. */
export function cancelEvent(by: string, requested: boolean): JournalEvent {
  return { type: 'run.cancelled', path: '', by, requested };
}

/**
 * The end a driver writes (`setRunStatus`, `suspendRun`), decided on the run's row as it is in
 * the same transaction: a cancellation asked of the running run (`cancelRun` journaled
 * `run.cancelled` for it) wins over whatever end its driver reached meanwhile, a cancel in the
 * run's last seconds included, so the journal and the status never say two things. The driver's
 * notifications were made for the end it reached, so they go with it; its outputs are kept.
 */
export function drivenEnd(
  row: { status: RunStatus; cancelJson: string | null },
  runId: string,
  status: RunStatus,
  result: RunResultRecord | undefined,
): { status: RunStatus; result: RunResultRecord | undefined } {
  const cancel = decodePayload<CancelRequest>(row.cancelJson);
  if (row.status !== RunStatus.running || cancel === undefined) return { status, result };
  if (status === RunStatus.running || status === RunStatus.queued || status === RunStatus.cancelled)
    return { status, result };
  return {
    status: RunStatus.cancelled,
    result: {
      ...(result && 'outputs' in result ? { outputs: result.outputs } : {}),
      error: cancelledError(runId, cancel.by),
    },
  };
}
