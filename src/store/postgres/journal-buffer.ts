import type pg from 'pg';
import { FlushTimer } from '../flush-timer.js';
import { refusedWrite, unavailable, type PostgresLink } from './connection.js';
import { appendValues, SQL_APPEND, SQL_GET_RUN } from './sql.js';
import { runNotFound } from '../run-row.js';
import { StoreErrorCode, type StoreError } from '../store-error.js';

export interface PendingEntry {
  runId: string;
  /** The claim token the entry was appended under, if any. */
  fence: number | undefined;
  at: string;
  eventJson: string;
  /** An unbuffered append's caller, told when the commit that holds its entry ends. */
  waiter?: { resolve(): void; reject(error: unknown): void };
}

/**
 * Whether a failed commit refuses `entry` for good: a run that is not in the store, or a claim
 * that was taken over (`staleFence`) can never be written, whatever else the commit held.
 */
function refusedBy(error: StoreError, entry: PendingEntry): boolean {
  const details = error.details as { runId?: unknown; fence?: unknown } | undefined;
  if (error.code === StoreErrorCode.runNotFound) return entry.runId === details?.runId;
  if (error.code === StoreErrorCode.staleFence) return entry.runId === details?.runId && entry.fence === details.fence;
  return false;
}

/** Inserts one run's consecutive entries (one token) in one statement; refused when no row was written. */
async function insertRunEntries(client: pg.Pool | pg.PoolClient, runEntries: PendingEntry[]): Promise<void> {
  const first = runEntries[0];
  if (!first) return;
  const inserted = await client.query(
    SQL_APPEND,
    appendValues(
      first.runId,
      runEntries.map((entry) => entry.at),
      runEntries.map((entry) => entry.eventJson),
      first.fence,
    ),
  );
  if (inserted.rowCount === 0) throw await refusedWrite(client, first.runId, first.fence);
}

/**
 * The PostgreSQL store's journal writes: buffered appends kept in order and committed in one
 * transaction, and the group commit of the unbuffered ones (see the store's ARCHITECTURE.md).
 * Its commits run inside the store's `serial` queue, so nothing joins the buffer meanwhile.
 */
export class PostgresJournalBuffer {
  /** Runs known to exist, so a buffered append is refused for an unknown run when it is made (cleared by prune). */
  readonly knownRuns = new Set<string>();
  private readonly buffer: PendingEntry[] = [];
  private readonly flushTimer: FlushTimer;
  private groupQueued = false;

  constructor(
    private readonly link: PostgresLink,
    flushAfterMs: number,
    private readonly maxBufferedEntries: number,
  ) {
    this.flushTimer = new FlushTimer(flushAfterMs);
  }

  /**
   * Commits the buffer in one transaction and tells the callers waiting for their entries. When
   * it fails, nothing is written. Entries it refuses for good (their run is gone, or their claim
   * was taken over) are dropped and their callers told; the other waiting entries stay for the
   * commit queued after them (`commitGroup`). Any other failure (the server is gone) is told to
   * every waiting caller. Buffered entries are kept for the next commit. Runs inside `serial`,
   * so nothing joins the buffer meanwhile.
   */
  async commit(): Promise<void> {
    const { buffer } = this;
    this.flushTimer.stop();
    if (buffer.length === 0) return;
    try {
      await this.insertEntries(buffer);
    } catch (caught) {
      const error = unavailable(caught, this.link.url);
      const refusal = error.code === StoreErrorCode.runNotFound || error.code === StoreErrorCode.staleFence;
      const dropped = (entry: PendingEntry) => (refusal ? refusedBy(error, entry) : entry.waiter !== undefined);
      for (const entry of buffer) if (dropped(entry)) entry.waiter?.reject(error);
      buffer.splice(0, buffer.length, ...buffer.filter((entry) => !dropped(entry)));
      throw error;
    }
    for (const entry of buffer) entry.waiter?.resolve();
    buffer.length = 0;
  }

  commitSoon(entry: PendingEntry): { committed: Promise<void> } {
    const committed = new Promise<void>((resolve, reject) => {
      entry.waiter = { resolve, reject };
    });
    this.buffer.push(entry);
    if (!this.groupQueued) {
      this.groupQueued = true;
      // Queued at the end of this turn of the event loop, so the appends of every answer that
      // arrived in it join; not awaited: it runs after the appends waiting on `serial`.
      setImmediate(() => {
        this.link.serial(() => this.commitGroup()).catch(() => undefined);
      });
    }
    return { committed };
  }

  async keepBuffered(entry: PendingEntry): Promise<void> {
    if (!this.knownRuns.has(entry.runId)) {
      if ((await this.link.query(SQL_GET_RUN, [entry.runId])).rowCount === 0) throw runNotFound(entry.runId);
      this.knownRuns.add(entry.runId);
    }
    this.buffer.push(entry);
    if (this.buffer.length >= this.maxBufferedEntries) {
      await this.commit();
      return;
    }
    this.flushTimer.start(() => {
      // A failure keeps the entries buffered: the next commit tries again and reports it.
      this.link.serial(() => this.commit()).catch(() => undefined);
    });
  }

  /**
   * Group commit, as in the SQLite store: an unbuffered append joins the commit queued next on
   * `serial`, so the appends of one turn of the event loop, and every append made while one
   * commit is at the server, go in one. A statement and a transaction per append, one after the
   * other, cost a fleet run's process about a sixth of its CPU in socket writes alone, and
   * loaded the server. Every waiting entry has this commit queued after it; one that failed for
   * another run's entries is tried again without them.
   */
  private async commitGroup(): Promise<void> {
    const { buffer } = this;
    this.groupQueued = false;
    for (;;) {
      const before = buffer.length;
      try {
        await this.commit();
        return;
      } catch (error) {
        if (buffer.length < before && buffer.some((entry) => entry.waiter)) continue;
        for (const entry of buffer) entry.waiter?.reject(error);
        buffer.splice(0, buffer.length, ...buffer.filter((entry) => !entry.waiter));
        return;
      }
    }
  }

  /** Inserts `entries` (in order) run by run, in one transaction; nothing when it fails. */
  private async insertEntries(entries: PendingEntry[]): Promise<void> {
    // Consecutive entries of one run under one token go in one statement.
    const byRun = new Map<string, PendingEntry[]>();
    for (const entry of entries) {
      const key = `${entry.fence ?? ''}:${entry.runId}`;
      const ofRun = byRun.get(key);
      if (ofRun) ofRun.push(entry);
      else byRun.set(key, [entry]);
    }
    const { pool } = this.link;
    const [only] = byRun;
    if (byRun.size === 1 && only) {
      await insertRunEntries(pool, only[1]);
      return;
    }
    await this.link.inTransaction(async (client) => {
      for (const [, runEntries] of byRun) await insertRunEntries(client, runEntries);
    });
  }
}
