import type {
  AsyncOperationRecord,
  AsyncOperations,
  AsyncOperationSpec,
  AsyncOutcome,
  InjectedFailure,
  Rng,
  SimClock,
} from './context.js';
import { errorMessage } from '../errors/index.js';

/** What fault injection decides for a new async operation of a given type. */
export type AsyncFaultKind = 'FAILED' | 'TIMEDOUT' | 'never';

/** Consulted once per started operation; faults.ts implements it (counts, rates). */
export interface AsyncFaultSource {
  takeAsyncFault(type: string): AsyncFaultKind | undefined;
}

/** Non-terminal and terminal states as the async GETs show them. */
export type AsyncState = 'INITIALIZED' | 'RUNNING' | AsyncOutcome['status'];

const MINUTE_MS = 60_000;
/** Devices and subscriptions forget a finished operation after a day (facts page). */
const FORGET_AFTER_MS: Partial<Record<AsyncOperationRecord['flavour'], number>> = {
  devices: 24 * 60 * MINUTE_MS,
  subscriptions: 24 * 60 * MINUTE_MS,
};
const LOCATION_PREFIX: Record<AsyncOperationRecord['flavour'], string> = {
  dataServices: '/data-services/v1beta1/async-operations/',
  devices: '/devices/v1/async-operations/',
  subscriptions: '/subscriptions/v1/async-operations/',
  reporting: '/reporting/v1/async-operations/',
};
/** Share of the duration an operation spends INITIALIZED before it shows RUNNING. */
const INITIALIZED_SHARE = 0.05;

interface Pending {
  endsAt: number;
  /** Start order breaks ties so equal end times complete deterministically. */
  seq: number;
  id: string;
  complete: AsyncOperationSpec['complete'];
  injectedFailure: InjectedFailure | undefined;
  /** The terminal state an injected failure ends in. */
  injectedStatus: 'FAILED' | 'TIMEDOUT';
}

function before(x: Pending, y: Pending): boolean {
  return x.endsAt < y.endsAt || (x.endsAt === y.endsAt && x.seq < y.seq);
}

/** A binary min-heap on (endsAt, seq): settle() pops only what is due. */
function createHeap() {
  const items: Pending[] = [];
  return {
    get size() {
      return items.length;
    },
    peek: (): Pending | undefined => items[0],
    push(item: Pending) {
      items.push(item);
      let i = items.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!before(items[i]!, items[parent]!)) break;
        [items[i], items[parent]] = [items[parent]!, items[i]!];
        i = parent;
      }
    },
    pop(): Pending | undefined {
      const top = items[0];
      const last = items.pop();
      if (items.length > 0 && last) {
        items[0] = last;
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          const right = left + 1;
          let smallest = i;
          if (left < items.length && before(items[left]!, items[smallest]!)) smallest = left;
          if (right < items.length && before(items[right]!, items[smallest]!)) smallest = right;
          if (smallest === i) break;
          [items[i], items[smallest]] = [items[smallest]!, items[i]!];
          i = smallest;
        }
      }
      return top;
    },
  };
}

/** The state and progress of `record` at simulated time `nowMs`. */
export function asyncStateOf(
  record: AsyncOperationRecord,
  nowMs: number,
): { state: AsyncState; progressPercent: number } {
  if (record.outcome) {
    return {
      state: record.outcome.status,
      progressPercent: record.outcome.status === 'SUCCEEDED' ? 100 : progressAt(record, record.endedAt ?? nowMs),
    };
  }
  const elapsed = nowMs - record.startedAt;
  const duration = record.endsAt - record.startedAt;
  const state = elapsed < duration * INITIALIZED_SHARE ? 'INITIALIZED' : 'RUNNING';
  return { state, progressPercent: progressAt(record, nowMs) };
}

function progressAt(record: AsyncOperationRecord, nowMs: number): number {
  const duration = record.endsAt - record.startedAt;
  if (duration <= 0) return 99;
  // A running operation never shows 100: that is for SUCCEEDED.
  return Math.max(0, Math.min(99, Math.floor(((nowMs - record.startedAt) / duration) * 100)));
}

interface Timing {
  timeoutMinutes: number;
  durationMs: number;
  /** Ends TIMEDOUT when its timeout passes: a TIMEDOUT fault, or an area's timeout shorter than its work (`overrun`). */
  timedOut: boolean;
  overrun: boolean;
}

/**
 * How long an operation runs and whether it times out. The platform gives up on an operation
 * when its timeout passes: one that would run longer than the timeout its area gives it ends
 * TIMEDOUT then, as does a TIMEDOUT fault.
 */
function timingOf(spec: AsyncOperationSpec, fault: AsyncFaultKind | undefined): Timing {
  const timeoutMinutes = spec.timeoutMinutes ?? Math.max(60, Math.ceil((2 * spec.durationMs) / MINUTE_MS));
  const overrun =
    fault !== 'never' && spec.timeoutMinutes !== undefined && spec.durationMs > timeoutMinutes * MINUTE_MS;
  const timedOut = fault === 'TIMEDOUT' || overrun;
  return {
    timeoutMinutes,
    durationMs: timedOut ? timeoutMinutes * MINUTE_MS : Math.max(0, spec.durationMs),
    timedOut,
    overrun,
  };
}

/** The end of an operation as `settle()` will run it, with the failure a fault or its timeout injects. */
function pendingEnd(
  spec: AsyncOperationSpec,
  record: AsyncOperationRecord,
  fault: AsyncFaultKind | undefined,
  { timedOut, overrun, timeoutMinutes }: Timing,
  seq: number,
): Pending {
  return {
    endsAt: record.endsAt,
    seq,
    id: record.id,
    complete: spec.complete,
    injectedFailure: timedOut
      ? {
          errorCode: 'OPERATION_TIMED_OUT',
          message: `The ${spec.type} operation did not finish within ${timeoutMinutes} minutes${overrun ? '' : ' (injected fault)'}`,
        }
      : fault === 'FAILED'
        ? { errorCode: 'SIMULATED_FAILURE', message: `The ${spec.type} operation failed (injected fault)` }
        : undefined,
    injectedStatus: timedOut ? 'TIMEDOUT' : 'FAILED',
  };
}

/** The outcome of a due operation: its completion's, unless an injected failure overrides it. */
function completed(due: Pending): AsyncOutcome {
  let outcome: AsyncOutcome;
  try {
    outcome = due.complete(due.injectedFailure);
  } catch (error) {
    // One broken completion must not wedge every later request's settle().
    outcome = {
      status: 'FAILED',
      error: { errorCode: 'SIMULATOR_INTERNAL_ERROR', message: errorMessage(error) },
    };
  }
  if (due.injectedFailure && outcome.status !== due.injectedStatus)
    return { status: due.injectedStatus, error: due.injectedFailure };
  return outcome;
}

/**
 * The registry of long-running operations. Lazy: no timer per operation; a record's
 * state is derived from the clock when read, and `settle()` (called by the core before
 * every handler) runs the `complete()` of each operation whose end time has passed, in
 * end-time order, so side effects land in the order they would have on the platform.
 */
export function createAsyncOperations(clock: SimClock, rng: Rng, faults?: AsyncFaultSource): AsyncOperations {
  const records = new Map<string, AsyncOperationRecord>();
  const pending = createHeap();
  /** Ids of operations not yet ended, by resource id (the 409 checks). */
  const runningByResource = new Map<string, Set<string>>();
  let seq = 0;

  function forgetRunning(record: AsyncOperationRecord): void {
    if (record.resourceId === undefined) return;
    const ids = runningByResource.get(record.resourceId);
    ids?.delete(record.id);
    if (ids?.size === 0) runningByResource.delete(record.resourceId);
  }

  return {
    start(spec) {
      const startedAt = clock.now();
      const fault = faults?.takeAsyncFault(spec.type);
      const timing = timingOf(spec, fault);
      const record: AsyncOperationRecord = {
        id: rng.uuid(),
        flavour: spec.flavour,
        type: spec.type,
        ...(spec.resourceId === undefined ? {} : { resourceId: spec.resourceId }),
        ...(spec.resourceUri === undefined ? {} : { resourceUri: spec.resourceUri }),
        startedAt,
        endsAt: startedAt + timing.durationMs,
        timeoutMinutes: timing.timeoutMinutes,
        ...(fault === 'never' ? { stuck: true } : {}),
      };
      records.set(record.id, record);
      if (record.resourceId !== undefined) {
        let ids = runningByResource.get(record.resourceId);
        if (!ids) runningByResource.set(record.resourceId, (ids = new Set()));
        ids.add(record.id);
      }
      if (fault !== 'never') pending.push(pendingEnd(spec, record, fault, timing, (seq += 1)));
      return record;
    },

    list(flavour) {
      // Through `get`, so a record past its retention is forgotten here too.
      return [...records.values()].filter((record) => record.flavour === flavour && this.get(record.id) !== undefined);
    },
    get(id) {
      const record = records.get(id);
      if (!record) return undefined;
      const forgetAfter = FORGET_AFTER_MS[record.flavour];
      if (forgetAfter !== undefined && record.endedAt !== undefined && clock.now() >= record.endedAt + forgetAfter) {
        records.delete(id);
        return undefined;
      }
      return record;
    },

    locationOf: (record) => LOCATION_PREFIX[record.flavour] + record.id,

    settle() {
      const now = clock.now();
      for (let due = pending.peek(); due && due.endsAt <= now; due = pending.peek()) {
        pending.pop();
        const record = records.get(due.id);
        if (!record) continue;
        const outcome = completed(due);
        record.outcome = outcome;
        record.endedAt = due.endsAt;
        forgetRunning(record);
      }
    },

    running(resourceId) {
      const ids = runningByResource.get(resourceId);
      if (!ids) return [];
      return [...ids].map((id) => records.get(id)).filter((r): r is AsyncOperationRecord => r !== undefined);
    },
  };
}
