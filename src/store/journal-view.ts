import { createJournalFold, journalPages, JOURNAL_PAGE_SIZE, type JournalFold } from './fold-journal.js';
import type { JournalEntry, JournalView, LoggedLine, RunStore } from './types.js';

/**
 * Collects the `log:` lines of a journal read in pieces (pages, in order): `add` each entry,
 * `lines` at the end. A `log:` step's kind is on its first entry, so one pass finds its line.
 * `from`: a stored view's log, continued by the entries added.
 */
export function logLineCollector(from?: Pick<JournalView, 'logPaths' | 'log'>): {
  add(entry: JournalEntry): void;
  lines: LoggedLine[];
  logPaths: Set<string>;
} {
  const logPaths = new Set<string>(from?.logPaths);
  const lines: LoggedLine[] = from ? [...from.log] : [];
  return {
    add(entry) {
      const { event } = entry;
      // A `log:` step journals one entry, a `step.finished` with its kind (a `step.started` in older journals).
      if ((event.type === 'step.started' || event.type === 'step.finished') && event.kind === 'log')
        logPaths.add(event.path);
      const message = logMessage(entry, logPaths);
      if (message !== undefined) lines.push({ at: entry.at, path: event.path, message });
    },
    lines,
    logPaths,
  };
}

/** The message a `log:` step wrote (its output), or undefined for any other entry. */
export function logMessage(entry: JournalEntry, logPaths: ReadonlySet<string>): string | undefined {
  const { event } = entry;
  if (event.type !== 'step.finished' || !logPaths.has(event.path)) return undefined;
  const outputs = event.outputs as { message?: unknown } | undefined;
  return typeof outputs?.message === 'string' ? outputs.message : undefined;
}

/**
 * A run's journal folded without values (what the text of `fleetbook runs show` prints: the
 * step records and the `log:` lines), read in pages as it is folded. `from`, a view of the
 * journal's start kept by the store, is continued by the entries after it: only those are read.
 */
export async function foldJournalView(
  source: Pick<RunStore, 'journal'>,
  runId: string,
  from?: JournalView,
): Promise<JournalView> {
  // Made at the first entry after the view: a view with nothing after it is the fold as it is.
  let fold: JournalFold | undefined;
  const log = logLineCollector(from);
  let throughSeq = from?.throughSeq ?? 0;
  for await (const page of journalPages(source, runId, JOURNAL_PAGE_SIZE, { values: false }, throughSeq)) {
    fold ??= createJournalFold({ values: false, ...(from ? { records: from.records } : {}) });
    for (const entry of page) {
      fold.add(entry);
      log.add(entry);
    }
    throughSeq = page.at(-1)?.seq ?? throughSeq;
  }
  if (fold === undefined && from !== undefined) return from;
  return { throughSeq, records: fold?.records() ?? [], logPaths: [...log.logPaths], log: log.lines };
}

/**
 * Journals shorter than this are folded from scratch by `runs show` (about 5 µs an entry, a
 * quarter of a second at the threshold): no view is kept for them. Keeping one reads the journal
 * back as the run ends (about 11 µs an entry), which a shorter run would pay for nothing: a loop of
 * 10,000 `set` steps (20,002 entries) took 230 ms longer. A fleet's run keeps one from about 560
 * systems (90 entries per system).
 */
export const JOURNAL_VIEW_MIN_ENTRIES = 50_000;

/**
 * Keeps the view of a run's journal in the store (`RunStore.saveJournalView`) when the journal
 * has at least `minEntries` entries, continuing the view kept before (a resumed run's) with the
 * entries after it. Returns the seq the kept view goes to, or undefined when none was written.
 */
export async function checkpointJournalView(
  store: Pick<RunStore, 'journal' | 'journalView' | 'saveJournalView'>,
  runId: string,
  minEntries = JOURNAL_VIEW_MIN_ENTRIES,
): Promise<number | undefined> {
  // Seqs count from 1 without gaps: an entry after `minEntries - 1` means the journal is long enough.
  const long = await store.journal(runId, Math.max(0, minEntries - 1), 1, { values: false });
  if (long.length === 0) return undefined;
  const from = await store.journalView(runId);
  const view = await foldJournalView(store, runId, from);
  if (from !== undefined && view.throughSeq === from.throughSeq) return undefined;
  await store.saveJournalView(runId, view);
  return view.throughSeq;
}

/** Step records per part of a kept view: a few hundred KB of JSON. */
export const VIEW_PART_RECORDS = 2000;

/**
 * How every store keeps a view: its seq in a column of its own, the rest as JSON texts made one
 * at a time, each a row (part 0 with the `log:` lines, then the records `VIEW_PART_RECORDS` at a
 * time). As one text, a 10,000-system view was a 50 MB string, copied again as UTF-8 by the
 * database driver (and by SQLite into its record): 110 MB more at the end of a fleet's run.
 */
export function* journalViewParts(view: JournalView): Generator<string> {
  const { records } = view;
  yield JSON.stringify({ logPaths: view.logPaths, log: view.log, records: records.slice(0, VIEW_PART_RECORDS) });
  for (let start = VIEW_PART_RECORDS; start < records.length; start += VIEW_PART_RECORDS)
    yield JSON.stringify({ records: records.slice(start, start + VIEW_PART_RECORDS) });
}

interface ViewPart {
  records: JournalView['records'];
  logPaths?: JournalView['logPaths'];
  log?: JournalView['log'];
}

/** A stored part of a view: the seq the view goes to and one of `journalViewParts`'s texts. */
export interface StoredViewPart {
  throughSeq: number | string;
  viewJson: string;
}

/** A kept view read back from its parts, in order (parsed one at a time); undefined when there are none. */
export function viewOfParts(parts: Iterable<StoredViewPart>): JournalView | undefined {
  let view: JournalView | undefined;
  for (const { throughSeq, viewJson } of parts) {
    view ??= { throughSeq: Number(throughSeq), records: [], logPaths: [], log: [] };
    const part = JSON.parse(viewJson) as ViewPart;
    for (const record of part.records) view.records.push(record);
    if (part.logPaths) view.logPaths = part.logPaths;
    if (part.log) view.log = part.log;
  }
  return view;
}
