/**
 * The `call` step: one platform operation by id, with `wait` (follow a 202 to its end),
 * `until` + `poll` (repeat a read until a condition holds), `paginate: all` and `saveTo`.
 * Every request is journaled before it is sent and again when it is answered or fails, so
 * resume knows which writes may have reached the platform.
 */
import { ApiError, UnknownOperationError, type CallResult, type DownloadTarget } from '../../api/index.js';
import type { OperationDescriptor } from '../../openapi/index.js';
import { sleepOn } from '../../timers/index.js';
import { checkCallInput } from './call-input.js';
import { toErrorRecord } from './error-record.js';
import { planWrite } from '../plan/plan-write.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { StepRuntime, LeafResult } from './types.js';
import { errorMessage } from '../../errors/index.js';

export interface CallArgs {
  operationId: string;
  /** Rendered `with`: path and query parameters by name, plus `body`. */
  input: Record<string, unknown>;
  region?: string | undefined;
  /** Follow a 202 to a terminal state. */
  wait?: { timeoutMs?: number | undefined; minPollMs?: number | undefined; maxPollMs?: number | undefined } | undefined;
  /** Repeat the call until this holds for the outputs. */
  until?: ((outputs: CallOutputs) => Promise<boolean>) | undefined;
  /** @default { intervalMs: 5000, timeoutMs: 300000 } when `until` is set */
  poll?: { intervalMs: number; timeoutMs: number } | undefined;
  paginate?: 'all' | undefined;
  /**
   * Rendered `saveTo`: the file path the answer streams to, or `{ path, sumColumns }` to
   * also count the CSV's rows and sum those columns as it streams (checked by `saveToTarget`).
   */
  saveTo?: unknown;
  /** False when the step retries with its own policy: the client then makes one attempt per call. */
  clientRetries: boolean;
  /**
   * Resume: the write was accepted before (its Location is in the journal, or reconciliation
   * found its operation on the platform). The attempt follows this Location instead of sending;
   * `body` is the first answer's, when the journal kept it.
   */
  attachTo?: { location: string; body?: unknown } | undefined;
}

export interface CallOutputs {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** The async operation's final record, when the step waited for one. */
  operation?: unknown;
}

const DEFAULT_POLL = { intervalMs: 5_000, timeoutMs: 300_000 } as const;
/** Progress is journaled at these steps so a long wait leaves a few lines, not hundreds. */
const PROGRESS_JOURNAL_STEP = 25;
/** Kept in order and committed with the next entry that must be durable first. */
const BUFFERED_ENTRY = { buffered: true } as const;
/** A write's answer body is journaled up to this size (characters of JSON): an accepted message or a created record. */
const MAX_JOURNALED_BODY_CHARS = 8 * 1024;

/** `body` when its JSON is small enough to journal with the answer. */
function journalableBody(body: unknown): { body?: unknown } {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return text !== undefined && text.length <= MAX_JOURNALED_BODY_CHARS ? { body } : {};
}

/**
 * What reconciliation needs to find a write's effect later: the path parameters and the
 * body's top-level scalar fields (and arrays of scalars), e.g. the system id, the catalog
 * version, the cluster ids, a serial number, an e-mail address.
 */
export function idempotencyOf(operation: OperationDescriptor, input: Record<string, unknown>): Record<string, unknown> {
  const facts: Record<string, unknown> = {};
  for (const param of operation.pathParams) if (input[param.name] !== undefined) facts[param.name] = input[param.name];
  const body = input.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const [key, value] of Object.entries(body)) {
      const scalar = (item: unknown): boolean => item === null || ['string', 'number', 'boolean'].includes(typeof item);
      if (scalar(value) || (Array.isArray(value) && value.every(scalar))) facts[`body.${key}`] = value;
    }
  }
  return facts;
}

/** A failed write may have been applied when no answer came back or the platform failed mid-way (5xx but 503). */
export function isOutcomeUnknown(operation: OperationDescriptor, error: unknown): boolean {
  if (!operation.isWrite || !(error instanceof ApiError)) return false;
  return error.status === undefined || (error.status >= 500 && error.status !== 503);
}

/**
 * A write refused with 409: the platform's state conflicts with it. For a write sent again after
 * reconciliation found no trace of the first, the conflict is most often that first write,
 * landed since the read (see `reconciliation.ts`).
 */
export function isConflict(operation: OperationDescriptor, error: unknown): boolean {
  return operation.isWrite && error instanceof ApiError && error.status === 409;
}

/** The download target a rendered `saveTo` names; a located step error when it is neither a path nor `{ path, sumColumns }`. */
export function saveToTarget(value: unknown): DownloadTarget {
  if (typeof value === 'string' || typeof value === 'number') return { path: String(value) };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const { path, sumColumns } = value as Record<string, unknown>;
    const columns = sumColumns === undefined ? [] : sumColumns;
    if (
      typeof path === 'string' &&
      path !== '' &&
      Array.isArray(columns) &&
      columns.every((column) => typeof column === 'string')
    ) {
      return { path, ...(sumColumns === undefined ? {} : { sumColumns: columns as string[] }) };
    }
  }
  throw new StepError(
    `saveTo must be a file path or { path, sumColumns: [column, ...] }; it rendered as ${JSON.stringify(value)}.`,
    {
      kind: StepFailureKind.invalidInput,
      code: 'INVALID_SAVE_TO',
    },
  );
}

/** What every piece of one call needs: the operation resolved, how to log, how to journal its requests. */
interface CallContext {
  args: CallArgs;
  runtime: StepRuntime;
  operation: OperationDescriptor;
  callOptions: { region: string | undefined; signal: AbortSignal; retries: boolean };
  log: (level: 'info' | 'debug', fields: Record<string, unknown>, message: string) => void;
  /** How request entries are appended: buffered for a read, committed first otherwise. */
  requestAppend: typeof BUFFERED_ENTRY | undefined;
  /** Marks a read's result so its `step.finished` may be buffered too. */
  readOnlyResult: { readOnly?: true };
}

export async function executeCall(args: CallArgs, runtime: StepRuntime): Promise<LeafResult> {
  const { client, signal } = runtime;
  const operation = client.catalogue.byId.get(args.operationId);
  // The loader refuses unknown ids before a run; a hand-built playbook gets the same message.
  if (!operation)
    throw new UnknownOperationError(`Unknown operation '${args.operationId}'. Run \`fleetbook actions\` for the list.`);
  checkCallInput(operation, args.input);
  const callOptions = { region: args.region, signal, retries: args.clientRetries };
  // Lines carry `operationId` as a field, through no logger of their own: a wait would hold one
  // for as long as it lasts, and thousands of waits run at once.
  const log = (level: 'info' | 'debug', fields: Record<string, unknown>, message: string): void =>
    runtime.log(level, { operationId: operation.id, ...fields }, message);
  // A read changes nothing outside the run, so its request entries need not be committed before
  // it is sent: a crash that loses them only means it is sent again on resume. They go with the
  // next commit (at the latest the step's end). A write's, and a download's (it writes a file),
  // are committed first.
  const requestAppend = operation.isWrite || args.saveTo !== undefined ? undefined : BUFFERED_ENTRY;
  // Its end too: the step's `step.finished` is committed with the next entry that must be.
  const readOnlyResult: { readOnly?: true } = requestAppend === undefined ? {} : { readOnly: true };
  const context: CallContext = { args, runtime, operation, callOptions, log, requestAppend, readOnlyResult };

  if (runtime.dryRun && operation.isWrite) {
    const request = runtime.secrets.scrubValue(client.describeRequest(operation.id, args.input, callOptions));
    log('info', { dryRun: true, request }, `dry run: ${request.method} ${request.url} not sent`);
    if (!runtime.planWrites) return { status: 'simulated', outputs: { simulated: true, request } };
    const planned = await planWrite(client, operation, args.input, callOptions, runtime.planWrites);
    const plan = runtime.secrets.scrubValue({ ...planned, request: { method: request.method, url: request.url } });
    return { status: 'simulated', outputs: { simulated: true, request, plan } };
  }
  if (runtime.planGuard && operation.isWrite && args.attachTo === undefined)
    await runtime.planGuard({ path: runtime.path, operation, input: args.input, options: callOptions });
  if (args.saveTo !== undefined) return saveAnswer(context, args.saveTo);
  if (args.paginate === 'all') return gatherAllPages(context);
  if (args.attachTo !== undefined) return reattach(context, args.attachTo);
  return invokeUntil(context);
}

/** Journals the request, sends it with `send`, journals the answer or the failure. */
async function journaled<T>(
  context: CallContext,
  send: () => Promise<T>,
  answer: (value: T) => { httpStatus: number; location?: string; body?: unknown },
): Promise<T> {
  const { args, runtime, operation, requestAppend, log } = context;
  const { path, attempt, signal } = runtime;
  await runtime.journal(
    {
      type: 'request.sending',
      path,
      attempt,
      operationId: operation.id,
      method: operation.method,
      ...(operation.isWrite ? { idempotency: runtime.secrets.scrubValue(idempotencyOf(operation, args.input)) } : {}),
    },
    requestAppend,
  );
  const startedAt = runtime.clock.now();
  let value: T;
  try {
    value = await send();
  } catch (error) {
    if (!signal.aborted) {
      await runtime.journal(
        {
          type: 'request.failed',
          path,
          attempt,
          error: runtime.secrets.scrubValue(toErrorRecord(error)),
          outcomeUnknown: isOutcomeUnknown(operation, error),
        },
        requestAppend,
      );
    }
    throw error;
  }
  const { httpStatus, location, body } = answer(value);
  await runtime.journal(
    {
      type: 'request.answered',
      path,
      attempt,
      httpStatus,
      ...(location ? { location } : {}),
      ...(body === undefined ? {} : { body: runtime.secrets.scrubValue(body) }),
    },
    requestAppend,
  );
  log('info', { httpStatus, durationMs: runtime.clock.now() - startedAt }, `${operation.id} answered ${httpStatus}`);
  return value;
}

/** `saveTo`: the answer streams to a file; the step's body is the download's summary. */
async function saveAnswer(context: CallContext, rendered: unknown): Promise<LeafResult> {
  const { args, runtime, operation, callOptions } = context;
  const saveTo = saveToTarget(rendered);
  const result = await journaled(
    context,
    () => runtime.client.download(operation.id as never, args.input as never, saveTo, callOptions),
    () => ({ httpStatus: operation.successStatus }),
  );
  return { outputs: { status: operation.successStatus, headers: {}, body: result } satisfies CallOutputs };
}

/** `paginate: all`: every page's items gathered, journaled as one request. */
async function gatherAllPages(context: CallContext): Promise<LeafResult> {
  const { args, runtime, operation, callOptions } = context;
  const items = await journaled(
    context,
    async () => {
      const gathered: unknown[] = [];
      for await (const item of runtime.client.paginate(operation.id as never, args.input as never, callOptions))
        gathered.push(item);
      return gathered;
    },
    () => ({ httpStatus: operation.successStatus }),
  );
  return {
    outputs: {
      status: operation.successStatus,
      headers: {},
      body: { items, count: items.length, total: items.length },
    } satisfies CallOutputs,
    ...context.readOnlyResult,
  };
}

/** Resume: follow the Location of a write accepted before instead of sending it again. */
async function reattach(context: CallContext, attachTo: NonNullable<CallArgs['attachTo']>): Promise<LeafResult> {
  const { args, operation, log } = context;
  const { location, body = null } = attachTo;
  log('info', { location }, `${operation.id}: re-attaching to its async operation instead of sending it again`);
  const accepted: CallResult = {
    status: 202,
    headers: { location },
    body,
    operation,
    ...(args.region === undefined ? {} : { region: args.region }),
  };
  return {
    outputs: {
      status: 202,
      headers: { location },
      body,
      operation: await follow(context, accepted),
    } satisfies CallOutputs,
  };
}

/** The plain call: sent (and followed with `wait`), then sent again every `poll` interval until `until` holds. */
async function invokeUntil(context: CallContext): Promise<LeafResult> {
  const { args, runtime, operation, callOptions, log } = context;
  const poll = args.poll ?? DEFAULT_POLL;
  const pollStartedAt = runtime.clock.now();
  for (;;) {
    const result = await journaled(
      context,
      () => runtime.client.invoke(operation.id, args.input, callOptions),
      (answer) => ({
        httpStatus: answer.status,
        ...(answer.headers.location ? { location: answer.headers.location } : {}),
        ...(operation.isWrite ? journalableBody(answer.body) : {}),
      }),
    );
    const followable = result.status === 202 && operation.async !== undefined;
    const outputs: CallOutputs = {
      status: result.status,
      headers: result.headers,
      body: result.body,
      ...(args.wait && followable ? { operation: await follow(context, result) } : {}),
    };
    if (!args.until || (await args.until(outputs))) return { outputs, ...context.readOnlyResult };
    if (runtime.clock.now() - pollStartedAt + poll.intervalMs > poll.timeoutMs) {
      throw new StepError(`${operation.id}: the \`until\` condition did not hold within ${poll.timeoutMs} ms.`, {
        kind: StepFailureKind.timeout,
        code: 'POLL_TIMEOUT',
        operationId: operation.id,
      });
    }
    log('debug', { intervalMs: poll.intervalMs }, 'until condition not met; polling again');
    await sleepOn(runtime.clock, poll.intervalMs, runtime.signal);
  }
}

/** Follows an accepted write's async operation to its end; its final record, or a step error. */
async function follow(context: CallContext, result: CallResult): Promise<unknown> {
  const { args, runtime, operation, log } = context;
  const { signal, path } = runtime;
  const progress = progressJournaller(context, result.headers.location ?? '');
  const waiting = runtime.client.waitForOperation(result, {
    signal,
    ...(args.wait?.timeoutMs === undefined ? {} : { timeoutMs: args.wait.timeoutMs }),
    ...(args.wait?.minPollMs === undefined ? {} : { minPollMs: args.wait.minPollMs }),
    ...(args.wait?.maxPollMs === undefined ? {} : { maxPollMs: args.wait.maxPollMs }),
    ...(result.region === undefined ? {} : { region: result.region }),
    onProgress: progress.onProgress,
  });
  let waited;
  try {
    waited = await waiting;
  } catch (error) {
    if (signal.aborted) throw error;
    // The write was accepted: a transient retry of the step would send it again.
    throw new StepError(`${operation.id}: following its async operation failed: ${errorMessage(error)}`, {
      kind: StepFailureKind.waitFailed,
      code: 'WAIT_FAILED',
      operationId: operation.id,
      details: { location: result.headers.location },
      cause: error,
    });
  } finally {
    await progress.settled();
  }
  await runtime.journal({
    type: 'operation.finished',
    path,
    location: waited.location,
    outcome: waited.outcome,
    operation: runtime.secrets.scrubValue(waited.operation),
  });
  log('info', { outcome: waited.outcome, polls: waited.polls }, `${operation.id}: async operation ${waited.outcome}`);
  if (waited.outcome === 'succeeded') return waited.operation;
  const deadline = waited.error?.code === 'WAIT_DEADLINE_EXCEEDED';
  throw new StepError(
    `${operation.id}: the async operation ${deadline ? 'did not end in time' : `ended ${waited.outcome}`}: ${waited.error?.message ?? 'no reason given'}`,
    {
      kind: deadline ? StepFailureKind.timeout : StepFailureKind.operationFailed,
      code: deadline ? 'WAIT_TIMEOUT' : 'OPERATION_FAILED',
      operationId: operation.id,
      details: {
        location: waited.location,
        outcome: waited.outcome,
        operation: waited.operation,
        ...(waited.error?.code ? { errorCode: waited.error.code } : {}),
      },
    },
  );
}

/**
 * Logs every progress report and journals one every PROGRESS_JOURNAL_STEP percent (and at 100),
 * chained so the entries keep their order; `settled` waits for the last of them.
 */
function progressJournaller(
  context: CallContext,
  location: string,
): {
  onProgress: (progressPercent: number, record: { state?: unknown; status?: unknown }) => void;
  settled: () => Promise<void>;
} {
  const { runtime, operation, log } = context;
  let journaledPercent = -PROGRESS_JOURNAL_STEP;
  let progressJournal: Promise<void> = Promise.resolve();
  const onProgress = (progressPercent: number, record: { state?: unknown; status?: unknown }): void => {
    log('info', { progressPercent, state: record.state ?? record.status }, `${operation.id}: ${progressPercent}%`);
    if (progressPercent - journaledPercent < PROGRESS_JOURNAL_STEP && progressPercent < 100) return;
    journaledPercent = progressPercent;
    const state = record.state ?? record.status;
    progressJournal = progressJournal.then(() =>
      runtime.journal(
        {
          type: 'operation.progress',
          path: runtime.path,
          location,
          progressPercent,
          ...(typeof state === 'string' ? { state } : {}),
        },
        BUFFERED_ENTRY,
      ),
    );
    // A failed append (the store gone) is reported by `settled` when the wait ends; until then
    // it must not count as an unhandled rejection, which ends the process.
    progressJournal.catch(() => undefined);
  };
  return { onProgress, settled: () => progressJournal };
}
