/**
 * Follows run journals for the event streams: one shared reader per followed run, however
 * many clients watch it. A reader keeps the run's entries read so far (journal seqs count
 * from 1 without gaps, so entry `seq` sits at index `seq - 1`) and reads what is new with
 * `journal(runId, afterSeq)`: at once when this process appended to the run (`notify`, from
 * the observed store its runs and worker write through), otherwise every `pollMs` (a worker
 * in another process). When nothing is new and the run is no longer live, the run has ended.
 */
import type { JournalEntry, RunRecord, RunStore } from '../store/index.js';

/** Statuses a run can still move from (`waiting`: an approval or a window, in team mode). */
const LIVE_STATUSES: ReadonlySet<string> = new Set(['queued', 'running', 'waiting']);

/** How long a reader nobody waits on is kept. */
const DROP_AFTER_MS = 5000;

export const isLiveStatus = (status: string): boolean => LIVE_STATUSES.has(status);

export interface JournalBatch {
  entries: JournalEntry[];
  /** The run as it ended, once every entry was handed out; the stream closes then. */
  ended?: RunRecord;
}

interface Reader {
  entries: JournalEntry[];
  ended?: RunRecord;
  users: number;
  waiters: Set<() => void>;
  reading: boolean;
  /** A notification came while reading: read again right after. */
  again: boolean;
  timer?: NodeJS.Timeout;
  /** Forgets the reader once nobody asked for a while (a stream asks again right after writing). */
  dropTimer?: NodeJS.Timeout;
}

export interface JournalHub {
  /** The entries after `afterSeq`, waiting until there are some or the run ended (or `signal` aborts: none). */
  next(runId: string, afterSeq: number, signal: AbortSignal): Promise<JournalBatch>;
  /** This process appended to `runId`: read now rather than at the next poll. */
  notify(runId: string): void;
  /** Readers in use (tests). */
  followed(): number;
  close(): void;
}

export function createJournalHub(store: RunStore, options: { pollMs?: number } = {}): JournalHub {
  const pollMs = options.pollMs ?? 100;
  const readers = new Map<string, Reader>();
  let closed = false;

  const schedule = (runId: string, reader: Reader, delayMs: number): void => {
    if (reader.timer || closed) return;
    reader.timer = setTimeout(() => {
      reader.timer = undefined;
      void read(runId, reader);
    }, delayMs);
  };

  async function read(runId: string, reader: Reader): Promise<void> {
    if (reader.reading) {
      reader.again = true;
      return;
    }
    reader.reading = true;
    try {
      do {
        reader.again = false;
        await readNew(store, runId, reader);
        // Waiters are woken after each read, not once the appends pause: a busy run streams as it goes.
        wakeAll(reader);
      } while (reader.again);
    } catch {
      // A failed read (the store restarting) is tried again at the next poll.
    } finally {
      reader.reading = false;
    }
    wakeAll(reader);
    if (reader.users > 0 && !reader.ended) schedule(runId, reader, pollMs);
  }

  return {
    async next(runId, afterSeq, signal) {
      let reader = readers.get(runId);
      if (!reader) {
        reader = { entries: [], users: 0, waiters: new Set(), reading: false, again: false };
        readers.set(runId, reader);
      }
      const current = reader;
      clearTimeout(current.dropTimer);
      current.users += 1;
      try {
        for (;;) {
          if (signal.aborted || closed) return { entries: [] };
          if (current.entries.length > afterSeq) return { entries: current.entries.slice(afterSeq) };
          if (current.ended) return { entries: [], ended: current.ended };
          await nextChange(current, signal, () => read(runId, current));
        }
      } finally {
        current.users -= 1;
        if (current.users === 0) {
          clearTimeout(current.timer);
          current.timer = undefined;
          // A run nobody watches any more is read again from the store when asked.
          current.dropTimer = setTimeout(() => {
            if (current.users === 0 && readers.get(runId) === current) readers.delete(runId);
          }, DROP_AFTER_MS);
          current.dropTimer.unref();
        }
      }
    },
    notify(runId) {
      const reader = readers.get(runId);
      if (!reader) return;
      clearTimeout(reader.timer);
      reader.timer = undefined;
      void read(runId, reader);
    },
    followed: () => readers.size,
    close() {
      closed = true;
      for (const reader of readers.values()) {
        clearTimeout(reader.timer);
        clearTimeout(reader.dropTimer);
        for (const wake of reader.waiters) wake();
      }
      readers.clear();
    },
  };
}

function wakeAll(reader: Reader): void {
  const waiting = [...reader.waiters];
  reader.waiters.clear();
  for (const wake of waiting) wake();
}

/** Appends the run's entries after those read so far; when there are none and the run is over, marks it ended. */
async function readNew(store: RunStore, runId: string, reader: Reader): Promise<void> {
  const fresh = await store.journal(runId, reader.entries.length);
  if (fresh.length > 0) {
    reader.entries.push(...fresh);
    return;
  }
  if (reader.ended) return;
  const run = await store.getRun(runId);
  // Ended: what was journaled between the read above and the status change comes first.
  if (run && !isLiveStatus(run.status)) {
    reader.entries.push(...(await store.journal(runId, reader.entries.length)));
    reader.ended = run;
  }
}

/** Resolves at the reader's next read, or when `signal` aborts; starts a read unless one is under way or due. */
function nextChange(reader: Reader, signal: AbortSignal, read: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      reader.waiters.delete(done);
      resolve();
    };
    reader.waiters.add(done);
    signal.addEventListener('abort', done, { once: true });
    if (!reader.reading && !reader.timer) void read();
  });
}
