import type Database from 'better-sqlite3';
import { FlushTimer } from '../flush-timer.js';
import { runNotFound, type ResolvedStoreOptions } from '../run-row.js';
import { isSqliteError, type SqliteStatements } from './statements.js';

/** A journal entry appended but not yet committed; `at` is the time of the append. */
export interface PendingEntry {
  runId: string;
  at: string;
  eventJson: string;
  /** An unbuffered append's caller, told when the commit that holds its entry ends. */
  waiter?: { resolve(): void; reject(error: unknown): void };
}

/** The most rows one INSERT of a buffered batch writes (2 parameters each, far below SQLite's limit). */
const maxRowsPerInsert = 64;

type BatchInsert = Database.Statement<[string[], { runId: string; seq: number }]>;

/**
 * The SQLite store's journal writes: buffered appends (see `RunStore.append`) kept in order here
 * and committed in one transaction, and the group commit of the unbuffered ones. Every other
 * write and read of the store commits it first (`commit`), so it never reads around the buffer.
 */
export class SqliteJournalBuffer {
  /** What every append that succeeded resolves to: one promise, not one per append. */
  readonly appended = Promise.resolve();
  private readonly buffer: PendingEntry[] = [];
  private readonly flushTimer: FlushTimer;
  private commitScheduled = false;
  // Runs known to exist, so a buffered append is refused for an unknown run when it is made,
  // not later in a commit that has no caller to tell (cleared by prune).
  private readonly knownRuns = new Set<string>();
  // An entry's time as text: a loop appends dozens of entries in one millisecond, and formatting
  // the same time again for each was a few per cent of a quiet step's CPU.
  private lastAppendMs = Number.NaN;
  private lastAppendAt = '';
  // Multi-row INSERTs of a batch, by row count (powers of two up to `maxRowsPerInsert`), prepared
  // on first use: one statement per 64 rows costs a fraction of 64 single-row ones in binding and
  // stepping, which was most of a buffered append's time. The rows of one statement are one run's
  // consecutive entries: its id and first seq are bound once (`@runId`, `@seq + i`), each row
  // binds only its time and event.
  private readonly insertsByRows = new Map<number, BatchInsert>();
  private readonly insertEntries: Database.Transaction<(entries: PendingEntry[]) => void>;

  constructor(
    private readonly db: Database.Database,
    private readonly statements: SqliteStatements,
    private readonly resolved: ResolvedStoreOptions,
    flushAfterMs: number,
    private readonly maxBufferedEntries: number,
  ) {
    this.flushTimer = new FlushTimer(flushAfterMs);
    this.insertEntries = db.transaction((entries: PendingEntry[]) => this.insertBatch(entries));
  }

  appendedAt(): string {
    const ms = this.resolved.nowMs();
    if (ms !== this.lastAppendMs) {
      this.lastAppendMs = ms;
      this.lastAppendAt = new Date(ms).toISOString();
    }
    return this.lastAppendAt;
  }

  /** A run just created: its appends need no look-up. */
  knowRun(runId: string): void {
    this.knownRuns.add(runId);
  }

  /** After a prune: a run known to exist may be gone. */
  forgetRuns(): void {
    this.knownRuns.clear();
  }

  insertEntry(entry: PendingEntry): void {
    this.statements.append.run(entry.runId, entry.at, entry.eventJson, entry.runId);
  }

  /**
   * Commits the buffered entries in one transaction. When it fails
   * nothing is written: the unbuffered appends it held are told, and the buffered entries are
   * kept for the next commit to try again.
   */
  commit(): void {
    const { buffer } = this;
    this.flushTimer.stop();
    if (buffer.length === 0) return;
    try {
      if (buffer.length === 1) this.insertEntry(buffer[0]!);
      else this.insertEntries(buffer);
    } catch (caught) {
      const error = isSqliteError(caught, 'SQLITE_CONSTRAINT_FOREIGNKEY')
        ? runNotFound(buffer.find((entry) => entry.waiter)?.runId ?? buffer[0]?.runId ?? '')
        : caught;
      const kept = buffer.filter((entry) => !entry.waiter);
      for (const entry of buffer) entry.waiter?.reject(error);
      buffer.splice(0, buffer.length, ...kept);
      throw error;
    }
    for (const entry of buffer) entry.waiter?.resolve();
    buffer.length = 0;
  }

  /**
   * Group commit: the unbuffered appends of one turn of the event loop (the answers of many
   * systems' requests arrive together) are committed in one transaction at its end, each caller
   * resolved once its entry is durable. One commit per append rewrote the journal's last pages
   * into the WAL each time: most of a fleet run's SQLite time.
   */
  commitSoon(entry: PendingEntry): Promise<void> {
    this.knownRun(entry.runId);
    const committed = new Promise<void>((resolve, reject) => {
      entry.waiter = { resolve, reject };
    });
    this.buffer.push(entry);
    if (!this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(this.commitAtTurnEnd);
    }
    return committed;
  }

  keepBuffered(entry: PendingEntry): void {
    this.knownRun(entry.runId);
    this.buffer.push(entry);
    if (this.buffer.length >= this.maxBufferedEntries) {
      this.commit();
      return;
    }
    this.flushTimer.start(() => {
      try {
        this.commit();
      } catch {
        // Nothing was written and the entries are still buffered: the next commit (the next
        // unbuffered append, read, status change or close) tries again and reports the failure.
      }
    });
  }

  private readonly commitAtTurnEnd = (): void => {
    this.commitScheduled = false;
    try {
      this.commit();
    } catch {
      // The callers of the failed commit were told; the buffered entries wait for the next one.
    }
  };

  private knownRun(runId: string): void {
    if (!this.knownRuns.has(runId)) {
      if (!this.statements.runExists.get(runId)) throw runNotFound(runId);
      this.knownRuns.add(runId);
    }
  }

  // A batch looks up each run's last seq once and numbers its entries from there: inside the
  // transaction the write lock is held, so no other process can append in between.
  private insertBatch(entries: PendingEntry[]): void {
    const lastSeqs = new Map<string, number>();
    for (let first = 0; first < entries.length;) {
      const { runId } = entries[first] as PendingEntry;
      let end = first + 1;
      while (end < entries.length && end - first < maxRowsPerInsert && entries[end]?.runId === runId) end += 1;
      const rows = 2 ** Math.floor(Math.log2(end - first));
      const seq = (lastSeqs.get(runId) ?? this.statements.lastSeq.get(runId)?.seq ?? 0) + 1;
      const values: string[] = [];
      for (let index = first; index < first + rows; index += 1) {
        const entry = entries[index] as PendingEntry;
        values.push(entry.at, entry.eventJson);
      }
      this.insertOf(rows).run(values, { runId, seq });
      lastSeqs.set(runId, seq + rows - 1);
      first += rows;
    }
  }

  private insertOf(rows: number): BatchInsert {
    let statement = this.insertsByRows.get(rows);
    if (!statement) {
      const tuples = Array.from({ length: rows }, (_, row) => `(@runId, @seq + ${row}, ?, ?)`);
      statement = this.db.prepare(`INSERT INTO journal (run_id, seq, at, event_json) VALUES ${tuples.join(', ')}`);
      this.insertsByRows.set(rows, statement);
    }
    return statement;
  }
}
