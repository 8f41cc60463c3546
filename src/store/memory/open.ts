import type { AuditRow } from '../audit-row.js';
import { type ApiTokenRow } from '../api-token-row.js';
import { type StoredViewPart } from '../journal-view.js';
import { runLeaseKey } from '../lease-owner.js';
import { sameNotification, type NotificationRow } from '../notification-row.js';
import {
  resolveStoreOptions,
  runNotFound,
  type JournalRow,
  type ResolvedStoreOptions,
  type RunRow,
} from '../run-row.js';
import { StoreError, StoreErrorCode } from '../store-error.js';
import type { RunStoreOptions, WebSession } from '../types.js';
import { RunStatus } from '../types.js';

/** What the memory store keeps, and the helpers every group of its methods uses. */
export interface MemoryTables {
  resolved: ResolvedStoreOptions;
  runs: Map<string, RunRow>;
  journals: Map<string, JournalRow[]>;
  journalViews: Map<string, StoredViewPart[]>;
  leases: Map<string, { owner: string; expiresAtMs: number }>;
  schedules: Map<string, string>;
  rateBuckets: Map<string, number>;
  apiTokens: Map<string, ApiTokenRow>;
  webSessions: Map<string, WebSession>;
  auditLog: AuditRow[];
  outbox: Map<string, NotificationRow>;
  record(rows: readonly NotificationRow[]): void;
  open(): void;
  close(): void;
  push(runId: string, eventJson: string): void;
  shown(row: RunRow): RunRow;
  existing(runId: string): RunRow;
}

export function createMemoryTables(options: RunStoreOptions): MemoryTables {
  const resolved = resolveStoreOptions(options);
  // Map order is insertion order: the tie-break of runs started at the same instant.
  const runs = new Map<string, RunRow>();
  const journals = new Map<string, JournalRow[]>();
  // As the other stores keep them: JSON text, read back as a copy.
  const journalViews = new Map<string, StoredViewPart[]>();
  const leases = new Map<string, { owner: string; expiresAtMs: number }>();
  // Insertion order is the outbox's order (oldest first).
  const outbox = new Map<string, NotificationRow>();
  let closed = false;
  return {
    resolved,
    runs,
    journals,
    journalViews,
    leases,
    schedules: new Map<string, string>(),
    rateBuckets: new Map<string, number>(),
    apiTokens: new Map<string, ApiTokenRow>(),
    webSessions: new Map<string, WebSession>(),
    auditLog: [],
    outbox,
    /** One row per key and per (run, event, segment, channel), as the SQL stores' constraints keep it: the first stays. */
    record(rows) {
      for (const row of rows)
        if (![...outbox.values()].some((kept) => sameNotification(kept, row))) outbox.set(row.key, row);
    },
    open() {
      if (closed) throw new StoreError('The run store is closed.', StoreErrorCode.storeClosed);
    },
    close() {
      closed = true;
    },
    push(runId, eventJson) {
      const journal = journals.get(runId) ?? [];
      journal.push({ runId, seq: journal.length + 1, at: resolved.now().toISOString(), eventJson });
      journals.set(runId, journal);
    },
    /** The row as readers see it (`shownStatus`): running only while its driver's lease is live. */
    shown(row) {
      if (row.status !== RunStatus.running) return row;
      const lease = leases.get(runLeaseKey(row.id));
      return lease && lease.expiresAtMs > resolved.now().getTime() ? row : { ...row, status: RunStatus.interrupted };
    },
    existing(runId) {
      const row = runs.get(runId);
      if (!row) throw runNotFound(runId);
      return row;
    },
  };
}
