import type { JournalEntry, JournalEvent, JournalReadOptions, RunStore, StepPath, StepRecord } from './types.js';
import { StepStatus } from './types.js';

/** The kind of the records `foldJournal` makes for loop items (`systems[3]`). */
export const itemKind = 'item';

/** Endings after which a write without an answer is still of unknown outcome. */
const endsInFlight = new Set<string>([StepStatus.failed, StepStatus.interrupted]);

/**
 * Folds a run's journal (in `seq` order) into one record per step execution and loop item,
 * in the order they first started. Both stores serve `steps()` from this one function.
 *
 * - status: `running` from `step.started` until `step.finished` sets it, so a step started
 *   and never finished is `running`: the point where resume picks the run up. A quiet step
 *   with one attempt (`set`, `log`, `assert`, `fail`) journals one entry, a `step.finished`
 *   carrying its `stepId` and `kind` (and its input when it is not its outputs): its start and
 *   end at once. An item whose steps are all such journals only its `item.finished`.
 * - attempts: the highest `attempt` of the step's `request.sending` events (0 when it sent none).
 * - location: the last one seen in `request.answered` or `operation.*`. A new
 *   `request.sending` forgets the previous one: its answer brings the Location that counts.
 * - unansweredRequest: set by `request.sending`, kept by a `request.failed` whose outcome is
 *   unknown, cleared by an answer, an operation seen (the write took effect) or a successful
 *   finish. A step that ended failed or interrupted keeps it: the write may still have reached
 *   the platform, and a resume (or redrive) must reconcile it before sending again.
 * - a step started again (resume re-runs it) keeps what was learned (attempts, location,
 *   an unanswered write) and drops its previous ending (status, outputs, error).
 */
export function foldJournal(entries: Iterable<JournalEntry>, options: JournalFoldOptions = {}): StepRecord[] {
  const fold = createJournalFold(options);
  for (const entry of entries) fold.add(entry);
  return fold.records();
}

export interface JournalFoldOptions {
  /**
   * Keep the steps' rendered inputs and outputs. A view that prints neither (the text of
   * `runs show`) folds without them, so a fleet's journal is not held in memory.
   * @default true
   */
  values?: boolean;
  /**
   * The records of a fold of the journal's start (a stored `JournalView`): the entries added
   * are folded on top of them, as if that start had been added first. The fold takes them
   * over (it changes them as it folds).
   */
  records?: readonly StepRecord[];
}

/** `foldJournal` one entry at a time: a journal read in pages is folded as it is read. */
export interface JournalFold {
  add(entry: JournalEntry): void;
  records(): StepRecord[];
}

export function createJournalFold(options: JournalFoldOptions = {}): JournalFold {
  const records = new Map<StepPath, StepRecord>(options.records?.map((record) => [record.path, record]));
  const values = options.values !== false;
  const add = ({ at, seq, event }: JournalEntry): void => {
    switch (event.type) {
      case 'step.started':
        startStep(records, event, at, values ? undefined : seq);
        break;
      case 'item.started':
        itemStarted(records, event, at);
        break;
      case 'item.finished':
        itemFinished(records, event, at);
        break;
      default: {
        // A quiet step's one entry: its start and its end.
        if (event.type === 'step.finished' && event.kind !== undefined)
          startStep(records, event, at, values ? undefined : seq);
        const record = records.get(event.path);
        // Events of a step whose start is missing are journal damage, not a step to invent.
        if (record) foldStepEvent(record, event, at, values ? undefined : seq);
      }
    }
  };
  return { add, records: () => [...records.values()] };
}

type EventOf<T extends JournalEvent['type']> = Extract<JournalEvent, { type: T }>;

function itemStarted(records: Map<StepPath, StepRecord>, event: EventOf<'item.started'>, at: string): void {
  const path = `${event.path}[${event.index}]`;
  records.delete(path);
  records.set(path, {
    path,
    stepId: records.get(event.path)?.stepId ?? '',
    kind: itemKind,
    status: StepStatus.running,
    attempts: 0,
    startedAt: at,
  });
}

function itemFinished(records: Map<StepPath, StepRecord>, event: EventOf<'item.finished'>, at: string): void {
  const path = `${event.path}[${event.index}]`;
  const record = records.get(path);
  if (record) {
    record.status = event.status;
    record.endedAt = at;
    if (event.label !== undefined) record.itemLabel = event.label;
    return;
  }
  // An item whose steps each journal one entry journals no start either (see the loop's items in
  // ARCHITECTURE.md): its end is its only entry, after its steps'.
  records.set(path, {
    path,
    stepId: records.get(event.path)?.stepId ?? '',
    kind: itemKind,
    status: event.status,
    attempts: 0,
    startedAt: at,
    endedAt: at,
    ...(event.label === undefined ? {} : { itemLabel: event.label }),
  });
}

/** An event of a started step into its record; `seq` given when the fold keeps seqs instead of values. */
function foldStepEvent(record: StepRecord, event: JournalEvent, at: string, seq: number | undefined): void {
  switch (event.type) {
    case 'request.sending':
      record.attempts = Math.max(record.attempts, event.attempt);
      delete record.location;
      delete record.operationOutcome;
      record.unansweredRequest = {
        attempt: event.attempt,
        operationId: event.operationId,
        method: event.method,
        ...(event.idempotency === undefined ? {} : { idempotency: event.idempotency }),
      };
      break;
    case 'request.answered':
      delete record.unansweredRequest;
      if (event.location !== undefined) record.location = event.location;
      break;
    case 'request.failed':
      if (event.outcomeUnknown && record.unansweredRequest) record.unansweredRequest.error = event.error;
      else delete record.unansweredRequest;
      break;
    // An operation seen means the write took effect: nothing left to reconcile.
    case 'operation.progress':
      delete record.unansweredRequest;
      record.location = event.location;
      break;
    case 'operation.finished':
      delete record.unansweredRequest;
      record.location = event.location;
      record.operationOutcome = event.outcome;
      break;
    case 'step.finished':
      stepFinished(record, event, at, seq);
      break;
  }
}

function stepFinished(record: StepRecord, event: EventOf<'step.finished'>, at: string, seq: number | undefined): void {
  record.status = event.status;
  record.endedAt = at;
  if (!endsInFlight.has(event.status)) delete record.unansweredRequest;
  if (seq === undefined && event.outputs !== undefined) record.outputs = event.outputs;
  if (seq !== undefined) {
    // Ended before without starting again: which ending's outputs count is not known here.
    if (record.finishedSeq !== undefined) delete record.startedSeq;
    record.finishedSeq = seq;
  }
  if (event.error !== undefined) record.error = event.error;
}

/** `values` mapped one at a time as they are iterated (a store's rows parsed as the fold reads them). */
export function* mapIterable<T, U>(values: Iterable<T>, map: (value: T) => U): Iterable<U> {
  for (const value of values) yield map(value);
}

/** Entries read per page by `journalPages`: a few MB of JSON at most for a fleet's journal. */
export const JOURNAL_PAGE_SIZE = 2000;

/**
 * A run's journal after `afterSeq` in pages of `pageSize` entries by seq, for a reader that folds or prints it
 * as it goes instead of holding it whole. A source that ignores the limit gives one page. The
 * next page is asked for before this one is handed over, so a database server makes it while
 * the reader works on this one (PostgreSQL: its cut of a fleet's page takes as long as the fold).
 */
export async function* journalPages(
  source: Pick<RunStore, 'journal'>,
  runId: string,
  pageSize = JOURNAL_PAGE_SIZE,
  options?: JournalReadOptions,
  afterSeq = 0,
): AsyncIterable<JournalEntry[]> {
  const ask = (afterSeq: number): Promise<JournalEntry[]> => {
    const page = source.journal(runId, afterSeq, pageSize, options);
    // Handled here so a failure while the reader works on the page before is not an unhandled
    // rejection; it is thrown where the page is awaited.
    page.catch(() => undefined);
    return page;
  };
  let next: Promise<JournalEntry[]> | undefined = ask(afterSeq);
  while (next) {
    const page: JournalEntry[] = await next;
    const last = page.at(-1);
    next = last === undefined || page.length < pageSize ? undefined : ask(last.seq);
    if (last !== undefined) yield page;
  }
}

/**
 * A `values: false` read takes whole, and cuts with `withoutValues` after parsing it, an event
 * that carries no step values (any but `step.*`: requests, operations, items) or is shorter
 * than this many bytes of JSON: cutting those in SQL (a JSON parse and write per row in the
 * database) costs more than the few bytes of value they carry. A larger step event (outputs,
 * API answers) is cut in SQL, so its values are never sent nor parsed. The type is told by the
 * JSON's first characters (the journal writes `type` first); one written otherwise is taken
 * whole and cut in JS, which gives the same entry.
 */
export const SMALL_EVENT_BYTES = 512;

/** The start of a `step.*` event's JSON, the only events with values (see `SMALL_EVENT_BYTES`). */
export const STEP_EVENT_JSON_START = '{"type":"step.';

/** An entry as a `values: false` read gives it (what the stores cut in SQL): no step input, no outputs but a string message. */
export function withoutValues(entry: JournalEntry): JournalEntry {
  const { event } = entry;
  if (event.type === 'step.started' && event.input !== undefined) {
    const { input: _input, ...rest } = event;
    return { ...entry, event: rest };
  }
  if (event.type === 'step.finished' && (event.outputs !== undefined || event.input !== undefined)) {
    // A quiet step's one entry carries its input too.
    const { outputs, input: _input, ...rest } = event;
    const message = (outputs as { message?: unknown } | null)?.message;
    return { ...entry, event: typeof message === 'string' ? { ...rest, outputs: { message } } : rest };
  }
  return entry;
}

/**
 * A step's (re)start: `step.started`, or the one entry of a quiet step (a `step.finished` with
 * its `stepId` and `kind`). A re-run step keeps what was learned and drops its previous ending.
 * `seqWithoutValues`: a fold without values, which notes the entry's seq where the input would be.
 */
function startStep(
  records: Map<StepPath, StepRecord>,
  event: { path: StepPath; stepId?: string; kind?: string; input?: unknown },
  at: string,
  seqWithoutValues: number | undefined,
): void {
  const previous = records.get(event.path);
  records.delete(event.path);
  const record: StepRecord = {
    path: event.path,
    stepId: event.stepId ?? previous?.stepId ?? '',
    kind: event.kind ?? previous?.kind ?? '',
    status: StepStatus.running,
    attempts: previous?.attempts ?? 0,
    startedAt: at,
  };
  if (seqWithoutValues !== undefined) record.startedSeq = seqWithoutValues;
  else if (event.input !== undefined) record.input = event.input;
  if (previous?.location !== undefined) record.location = previous.location;
  if (previous?.operationOutcome !== undefined) record.operationOutcome = previous.operationOutcome;
  if (previous?.unansweredRequest !== undefined) record.unansweredRequest = previous.unansweredRequest;
  // Re-inserted so a re-run step sits where it ran last, next to its re-run children.
  records.set(event.path, record);
}
