/**
 * What a resume knows from the journal of the run it continues: each step's last ending (to
 * replay what succeeded), the request each step had in flight (to re-attach or reconcile
 * instead of sending again), and the async operations already followed to their end.
 */
import { foldJournal } from '../store/index.js';
import { StepStatus, type JournalEntry, type StepPath, type StepRecord } from '../store/index.js';

/**
 * A step's last request whose effect the step never consumed (the process stopped first).
 * - `unknown`: sent, no answer journaled (or a failure that may have reached the platform).
 * - `answered`: a success answer (status, Location) journaled, the step not finished.
 * - `operation`: its async operation seen (progress or end), the step not finished.
 */
export interface InFlightRequest {
  state: 'unknown' | 'answered' | 'operation';
  /** The platform operation, or `http` for a webhook. */
  operationId: string;
  /** The request's HTTP method (journals written before it was kept have none). */
  method?: string;
  /** When it was journaled as sending (ms since the epoch). */
  sentAtMs: number;
  httpStatus?: number;
  location?: string;
  /** The answer's body, when the journal kept it (a write's small answer). */
  body?: unknown;
}

export interface ResumePlan {
  /** The journal's record of each step execution and loop item, by path. */
  records: ReadonlyMap<StepPath, StepRecord>;
  /** The in-flight request of each step that has one, by path. */
  inFlight: ReadonlyMap<StepPath, InFlightRequest>;
  /** Locations of async operations the run followed to their end. */
  knownLocations: ReadonlySet<string>;
  /** Send writes whose outcome cannot be reconciled. @default false */
  confirmUnknown: boolean;
  /**
   * A recorded step's outputs: from its record, or read back from the journal when the plan was
   * made from a journal read without values (a fleet's journal is not held whole: only the
   * outputs a replay needs are read, one entry each).
   */
  outputsOf(record: StepRecord): Promise<unknown>;
}

/** Reads back one journal entry's event by seq (`RunStore.journal(runId, seq - 1, 1)`). */
export type ReadJournalEvent = (seq: number) => Promise<JournalEntry['event'] | undefined>;

/** Endings that a resume replays instead of running again. */
export const replayedStatuses: ReadonlySet<string> = new Set([
  StepStatus.succeeded,
  StepStatus.skipped,
  StepStatus.simulated,
]);

/**
 * The plan from a run's journal. With `readEvent`, `entries` may have been read without values
 * (`values: false`): the steps' outputs are read back by seq when a replay asks for them.
 */
export function createResumePlan(
  entries: readonly JournalEntry[],
  confirmUnknown = false,
  readEvent?: ReadJournalEvent,
): ResumePlan {
  const inFlight = new Map<StepPath, InFlightRequest>();
  const knownLocations = new Set<string>();
  for (const { event, at } of entries) {
    const current = 'path' in event ? inFlight.get(event.path) : undefined;
    switch (event.type) {
      case 'request.sending':
        inFlight.set(event.path, {
          state: 'unknown',
          operationId: event.operationId,
          method: event.method,
          sentAtMs: Date.parse(at),
        });
        break;
      case 'request.answered':
        if (current)
          Object.assign(
            current,
            { state: 'answered', httpStatus: event.httpStatus },
            event.location === undefined ? {} : { location: event.location },
            event.body === undefined ? {} : { body: event.body },
          );
        break;
      case 'request.failed':
        // Refused, or known not to have arrived: a new request is the only way on.
        if (!event.outcomeUnknown) inFlight.delete(event.path);
        break;
      case 'operation.progress':
      case 'operation.finished':
        if (current) Object.assign(current, { state: 'operation', location: event.location });
        if (event.type === 'operation.finished') knownLocations.add(event.location);
        break;
      case 'step.finished':
        // An interrupted step stopped mid-way: what it had in flight is still in flight. A step
        // that ended otherwise consumed its request, except a write it never heard back from.
        if (
          event.status !== StepStatus.interrupted &&
          !(event.status === StepStatus.failed && current?.state === 'unknown')
        )
          inFlight.delete(event.path);
        break;
      default:
        break;
    }
  }
  return {
    records: new Map(foldJournal(entries, { values: readEvent === undefined }).map((record) => [record.path, record])),
    inFlight,
    knownLocations,
    confirmUnknown,
    async outputsOf(record) {
      if (record.outputs !== undefined || record.finishedSeq === undefined || readEvent === undefined)
        return record.outputs;
      const event = await readEvent(record.finishedSeq);
      return event?.type === 'step.finished' ? event.outputs : undefined;
    },
  };
}

/**
 * The platform state a resume would depend on: async operations in flight and writes whose
 * outcome is not journaled. A resume against another platform than the one that ran them (a
 * new embedded simulator: the one that ran them ended with its process) cannot find them.
 */
export function platformStateInFlight(
  entries: readonly JournalEntry[],
): Array<{ path: StepPath; operationId: string; location?: string }> {
  return (
    [...createResumePlan(entries).inFlight.entries()]
      // A webhook (`http`) or an e-mail reaches another service, and a read is simply sent again.
      .filter(
        ([, request]) =>
          request.operationId !== 'http' &&
          request.operationId !== 'email' &&
          (request.location !== undefined ||
            request.state === 'operation' ||
            (request.state === 'unknown' && request.method !== 'GET')),
      )
      .map(([path, request]) => ({
        path,
        operationId: request.operationId,
        ...(request.location === undefined ? {} : { location: request.location }),
      }))
  );
}
