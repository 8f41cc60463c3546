/**
 * Following a 202 to its end. The Location path is matched against the description's
 * `*.getAsyncOperation` operations, so each poll is an ordinary call: the right base
 * (regional for data services, global otherwise), that operation's rate-limit group,
 * auth, retries. Between polls one abortable timer runs; a wait keeps only its last record.
 */
import type { OperationDescriptor } from '../openapi/index.js';
import { UnfollowableOperationError } from './errors.js';
import type { CallOptions, CallResult, RequestExecutor } from './request-executor.js';
import { sleepOn } from '../timers/index.js';

export type AsyncFlavour = 'dataServices' | 'devices' | 'subscriptions' | 'reporting';

/** The async record as the platform sends it; every field may be missing. */
export interface AsyncOperationRecord {
  id?: string;
  type?: string;
  /** Devices and subscriptions. */
  status?: string;
  /** Data services and reporting. */
  state?: string;
  progressPercent?: number;
  suggestedPollingIntervalSeconds?: number;
  timeoutMinutes?: number;
  result?: unknown;
  resultType?: string;
  /** Reporting: the generated report's links. */
  results?: Array<{ name?: string; resourceUri?: string }>;
  error?: unknown;
  [field: string]: unknown;
}

export const AsyncOutcome = {
  succeeded: 'succeeded',
  failed: 'failed',
  timedOut: 'timedOut',
  cancelled: 'cancelled',
} as const;
export type AsyncOutcome = (typeof AsyncOutcome)[keyof typeof AsyncOutcome];

/** Why an operation did not succeed, from whichever error shape its flavour uses. */
export interface AsyncOperationFailure {
  message: string;
  code?: string;
  /** The platform's error object (or failed result), as sent. */
  details?: unknown;
}

export interface AsyncOperationResult {
  outcome: AsyncOutcome;
  /** The last record read. */
  operation: AsyncOperationRecord;
  /** Set unless the outcome is `succeeded`. */
  error?: AsyncOperationFailure;
  flavour: AsyncFlavour;
  /** The path polled. */
  location: string;
  polls: number;
}

export interface WaitOptions {
  /**
   * Give up after this many ms with outcome `timedOut`.
   * @default the record's `timeoutMinutes` from the first poll; no deadline when neither is given
   */
  timeoutMs?: number;
  /** Aborting rejects the wait with the signal's reason. */
  signal?: AbortSignal;
  /** Called when `progressPercent` changes. */
  onProgress?: (percent: number, operation: AsyncOperationRecord) => void;
  /** Lower bound of the interval between polls, in ms. @default 1_000 */
  minPollMs?: number;
  /**
   * Upper bound of the interval between polls, in ms; also bounds how far ahead a wait paced by
   * the operation's progress may sleep. @default 60_000
   */
  maxPollMs?: number;
  /** Region of a regional poll when `source` is a bare Location. @default the call's region, else the client's */
  region?: string;
}

/** Interval when the record suggests none. */
const DEFAULT_POLL_MS = 5_000;

const terminalStates: Record<string, AsyncOutcome> = {
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  TIMEDOUT: 'timedOut',
  TIMEOUT: 'timedOut',
  CANCELLED: 'cancelled',
  CANCELED: 'cancelled',
};

/** The outcome a status spells, or `undefined` while it runs (INITIALIZED, RUNNING, PAUSED, unknown). */
export function terminalOutcome(status: unknown): AsyncOutcome | undefined {
  if (typeof status !== 'string') return undefined;
  return terminalStates[status.toUpperCase().replace(/[^A-Z]/g, '')];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function flavourOf(pollOperation: OperationDescriptor): AsyncFlavour {
  switch (pollOperation.area) {
    case 'dataServices':
    case 'devices':
    case 'subscriptions':
      return pollOperation.area;
    default:
      return 'reporting';
  }
}

/** Data services and reporting report progress in `state`, devices and subscriptions in `status`. */
function statusOf(record: AsyncOperationRecord, flavour: AsyncFlavour): unknown {
  return flavour === 'devices' || flavour === 'subscriptions'
    ? (record.status ?? record.state)
    : (record.state ?? record.status);
}

/** The failure of a finished operation in one shape. */
export function failureOf(record: AsyncOperationRecord, outcome: AsyncOutcome): AsyncOperationFailure {
  const error = record.error;
  if (isRecord(error)) {
    const message = [error.message, error.error, error.errorMessage].find((value) => typeof value === 'string');
    const code = [error.errorCode, error.code].find((value) => typeof value === 'string');
    return {
      message: (message as string | undefined) ?? `the operation ended ${outcome}`,
      ...(code ? { code: code as string } : {}),
      details: error,
    };
  }
  if (typeof error === 'string' && error.length > 0) return { message: error, details: error };
  if (isRecord(record.result) && Array.isArray(record.result.failedDevicesSerial)) {
    return { message: `devices failed: ${record.result.failedDevicesSerial.join(', ')}`, details: record.result };
  }
  return {
    message: outcome === 'timedOut' ? 'the platform timed the operation out' : `the operation ended ${outcome}`,
  };
}

interface Target {
  pollOperation: OperationDescriptor;
  id: string;
  location: string;
  region: string | undefined;
}

function templatePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)');
  return new RegExp(`^${escaped}/?$`);
}

/** An absolute path that URL parsing would return unchanged: no query, fragment, dot segment or character it escapes. */
const plainPath = /^(?!\/\/)(?:\/(?!\.)[\w\-.~%]*)+$/;

function locate(executor: RequestExecutor, source: string | CallResult, region: string | undefined): Target {
  const pollOperations = executor.catalogue.operations.filter((operation) =>
    operation.id.endsWith('.getAsyncOperation'),
  );
  const fromResult = typeof source === 'string' ? undefined : source;
  const location = typeof source === 'string' ? source : source.headers.location;
  const regionOf = region ?? fromResult?.region;
  if (location) {
    // A plain path is its own pathname: the wait keeps the header's string, not a URL's href
    // (a pathname is a slice of it) for each of thousands of waits.
    const path = plainPath.test(location) ? location : new URL(location, 'http://location.invalid').pathname;
    for (const pollOperation of pollOperations) {
      const match = templatePattern(pollOperation.path).exec(path);
      if (match?.[1]) return { pollOperation, id: decodeURIComponent(match[1]), location: path, region: regionOf };
    }
    throw new UnfollowableOperationError(
      `Cannot follow '${location}': it is no async-operation path of the platform (${pollOperations.map((operation) => operation.path).join(', ')}).`,
    );
  }
  // Without a Location (a reporting export), the body's id names the operation of the call's area.
  const operation = fromResult?.operation;
  const id = isRecord(fromResult?.body) ? fromResult.body.id : undefined;
  if (operation?.async && typeof id === 'string') {
    const pollOperation =
      pollOperations.find((candidate) => candidate.id === `${operation.area}.getAsyncOperation`) ??
      pollOperations.find((candidate) => candidate.id === `${operation.async}.getAsyncOperation`);
    if (pollOperation)
      return {
        pollOperation,
        id,
        location: pollOperation.path.replace(/\{[^}]+\}/, encodeURIComponent(id)),
        region: regionOf,
      };
  }
  throw new UnfollowableOperationError(
    `${operation?.id ?? 'The call'} answered HTTP ${fromResult?.status ?? '?'} without a Location header or an operation id: there is nothing to follow.`,
  );
}

/**
 * Polls the async operation of `source` (a Location path or a 202 call result) until it
 * ends, the deadline passes, or `signal` aborts.
 */
export async function waitForOperation(
  executor: RequestExecutor,
  source: string | CallResult,
  options: WaitOptions = {},
): Promise<AsyncOperationResult> {
  const target = locate(executor, source, options.region);
  const flavour = flavourOf(target.pollOperation);
  const minPollMs = options.minPollMs ?? 1_000;
  const maxPollMs = Math.max(minPollMs, options.maxPollMs ?? 60_000);
  const callOptions: CallOptions = { region: target.region, signal: options.signal };
  const { clock } = executor;
  const startedAt = clock.now();
  // The platform's clock may differ from ours (and the simulator's runs faster), so the
  // record's `timeoutMinutes` counts from our first poll, not from its `startedAt`.
  const state: PollState = {
    startedAt,
    deadline: options.timeoutMs === undefined ? undefined : startedAt + options.timeoutMs,
    lastPercent: undefined,
    progressFrom: undefined,
  };
  for (let polls = 1; ; polls += 1) {
    // The answer is judged in a frame of its own and dropped before the sleep: thousands of waits
    // in flight hold a number each between their polls, not their last answer.
    const next = await pollOnce(executor, target, flavour, callOptions, state, polls, options.onProgress);
    if (typeof next !== 'number') return next;
    const now = clock.now();
    const suggestedMs = Math.min(maxPollMs, Math.max(minPollMs, next));
    const intervalMs = Math.min(maxPollMs, Math.max(suggestedMs, progressPacedMs(state, now, suggestedMs) ?? 0));
    await sleepOn(
      clock,
      state.deadline === undefined ? intervalMs : Math.min(intervalMs, state.deadline - now),
      options.signal,
    );
  }
}

/** What a wait keeps from one poll to the next. */
interface PollState {
  startedAt: number;
  /** When the wait gives up: the caller's timeout, else the record's `timeoutMinutes` from the first poll. */
  deadline: number | undefined;
  lastPercent: number | undefined;
  /** The first running progress the wait saw, and when (our clock): the pace is measured from it. */
  progressFrom: { percent: number; at: number } | undefined;
}

/**
 * How long to sleep by the pace the operation's progress went since the wait first saw it, or
 * `undefined` before the progress has moved. Half of what remains at that pace: the pace may
 * still change, and a long operation is asked about a few times while it is far from its end (a
 * 45-minute update in about ten polls instead of ninety), then at the suggested interval near it.
 * Once the wait has watched the pace for longer than what remains and a percent takes under half
 * the suggested interval, the pace predicts the end more closely than polling at the interval
 * would notice it: the next poll is aimed at the end (after it: a shown percent is rounded down),
 * and a poll that still lands before it sees 99 % and polls again at the suggested interval. Our
 * clock measures the pace, so a platform clock that differs from ours (or runs faster, as the
 * simulator's can) does not matter.
 */
function progressPacedMs(state: PollState, now: number, suggestedMs: number): number | undefined {
  const from = state.progressFrom;
  const percent = state.lastPercent;
  if (from === undefined || percent === undefined || percent <= from.percent || percent >= 100) return undefined;
  const watchedMs = now - from.at;
  const msPerPercent = watchedMs / (percent - from.percent);
  const remainingMs = (100 - percent) * msPerPercent;
  return remainingMs <= watchedMs && 2 * msPerPercent < suggestedMs ? remainingMs : remainingMs / 2;
}

/** One poll: the wait's result when it ends, else the interval the record suggests before the next (ms). */
async function pollOnce(
  executor: RequestExecutor,
  target: Target,
  flavour: AsyncFlavour,
  callOptions: CallOptions,
  state: PollState,
  polls: number,
  onProgress: WaitOptions['onProgress'],
): Promise<AsyncOperationResult | number> {
  const { body } = await executor.call(target.pollOperation.id, { id: target.id }, callOptions);
  const record: AsyncOperationRecord = isRecord(body) ? body : {};
  const finish = (outcome: AsyncOutcome, error?: AsyncOperationFailure): AsyncOperationResult => ({
    outcome,
    operation: record,
    ...(outcome === 'succeeded' ? {} : { error: error ?? failureOf(record, outcome) }),
    flavour,
    location: target.location,
    polls,
  });
  if (typeof record.progressPercent === 'number' && record.progressPercent !== state.lastPercent) {
    state.lastPercent = record.progressPercent;
    onProgress?.(state.lastPercent, record);
  }
  if (state.progressFrom === undefined && typeof record.progressPercent === 'number' && record.progressPercent < 100) {
    state.progressFrom = { percent: record.progressPercent, at: executor.clock.now() };
  }
  const outcome = terminalOutcome(statusOf(record, flavour));
  if (outcome) return finish(outcome);
  if (state.deadline === undefined && typeof record.timeoutMinutes === 'number' && record.timeoutMinutes > 0) {
    state.deadline = state.startedAt + record.timeoutMinutes * 60_000;
  }
  const now = executor.clock.now();
  if (state.deadline !== undefined && now >= state.deadline) {
    return finish('timedOut', {
      message: `no terminal state after ${Math.round((now - state.startedAt) / 1000)} s of waiting; the operation may still be running on the platform`,
      code: 'WAIT_DEADLINE_EXCEEDED',
    });
  }
  return typeof record.suggestedPollingIntervalSeconds === 'number'
    ? record.suggestedPollingIntervalSeconds * 1000
    : DEFAULT_POLL_MS;
}
