import { foldJournal, withoutValues } from './fold-journal.js';
import { runLeaseKey } from './lease-owner.js';
import { journalViewParts, viewOfParts, type StoredViewPart } from './journal-view.js';
import { normaliseTimestamp } from './payload.js';
import {
  assertLeaseTtl,
  cancelEvent,
  cancellableAtOnce,
  cancelledError,
  drivenEnd,
  defaultListLimit,
  waitColumns,
  encodeEvent,
  newRunToRow,
  normaliseFilter,
  resolveStoreOptions,
  rowToEntry,
  rowToRun,
  runExists,
  runNotFound,
  statusChange,
  waitEndingOf,
  type JournalRow,
  type ResolvedStoreOptions,
  type RunRow,
} from './run-row.js';
import { playbooksJsonOf, rowToApiToken, tokenExists, withoutPlaybooks, type ApiTokenRow } from './api-token-row.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import {
  claimable,
  newNotificationToRow,
  rowToNotification,
  sameNotification,
  settledColumns,
  type NotificationRow,
} from './notification-row.js';
import type { RunFilter, RunStore, RunStoreOptions, RunCount, WebSession } from './types.js';
import { RunStatus } from './types.js';
import type {
  JournalReads,
  LeaseAndScheduleMethods,
  OutboxMethods,
  RateAndTokenMethods,
  RunReads,
  RunWrites,
  WaitMethods,
  WebSessionMethods,
} from './method-groups.js';

/**
 * A run store in this process's memory, with the SQLite store's semantics (values are kept
 * as the same JSON, so they read back alike): for unit tests and runs that need no history.
 * Nothing survives the process. Its methods come in groups by what they keep (runs, waits,
 * journal, outbox, leases and schedules, rates, tokens and sessions), each over the same tables.
 */
export function createMemoryRunStore(options: RunStoreOptions = {}): RunStore {
  const tables = createMemoryTables(options);
  return {
    ...runMethods(tables),
    ...waitMethods(tables),
    ...runReads(tables),
    ...journalMethods(tables),
    ...outboxMethods(tables),
    ...leaseAndScheduleMethods(tables),
    ...rateAndTokenMethods(tables),
    ...webSessionMethods(tables),
    async close() {
      tables.close();
    },
  };
}

/** What the memory store keeps, and the helpers every group of its methods uses. */
interface MemoryTables {
  resolved: ResolvedStoreOptions;
  runs: Map<string, RunRow>;
  journals: Map<string, JournalRow[]>;
  journalViews: Map<string, StoredViewPart[]>;
  leases: Map<string, { owner: string; expiresAtMs: number }>;
  schedules: Map<string, string>;
  rateBuckets: Map<string, number>;
  apiTokens: Map<string, ApiTokenRow>;
  webSessions: Map<string, WebSession>;
  outbox: Map<string, NotificationRow>;
  record(rows: readonly NotificationRow[]): void;
  open(): void;
  close(): void;
  push(runId: string, eventJson: string): void;
  shown(row: RunRow): RunRow;
  existing(runId: string): RunRow;
}

function createMemoryTables(options: RunStoreOptions): MemoryTables {
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

/** A run's life as its driver writes it: created, journaled, ended, resumed, cancelled. */
function runMethods(tables: MemoryTables): RunWrites {
  const { resolved, runs, journals, open, existing, push, record, shown } = tables;
  return {
    async createRun(run) {
      open();
      const row = newRunToRow(run, resolved);
      if (runs.has(row.id)) throw runExists(row.id);
      runs.set(row.id, row);
      journals.set(row.id, []);
      return rowToRun(row);
    },

    async append(runId, event) {
      open();
      existing(runId);
      push(runId, encodeEvent(runId, event, resolved));
    },

    async setRunStatus(runId, status, result) {
      open();
      const row = existing(runId);
      const ended = drivenEnd(row, runId, status, result);
      const change = statusChange(runId, ended.status, ended.result, resolved);
      const notifications = (ended.result?.notifications ?? []).map((item) => newNotificationToRow(item, resolved));
      Object.assign(row, change);
      record(notifications);
      return ended.status;
    },

    async markResumed(runId) {
      open();
      const row = existing(runId);
      Object.assign(row, statusChange(runId, RunStatus.running, {}, resolved), {
        resumes: row.resumes + 1,
        waitJson: null,
        waitDueAt: null,
      });
    },

    async cancelRun(runId, by) {
      open();
      const row = existing(runId);
      const at = resolved.now().toISOString();
      // A running run whose driver died (its lease lapsed) is driven by no one: cancelled at once.
      if (cancellableAtOnce.has(shown(row).status)) {
        Object.assign(row, {
          status: RunStatus.cancelled,
          endedAt: at,
          errorJson: JSON.stringify(cancelledError(runId, by)),
          waitJson: null,
          waitDueAt: null,
        });
        push(runId, encodeEvent(runId, cancelEvent(by, false), resolved));
        return { outcome: 'cancelled' };
      }
      if (row.status === RunStatus.running) {
        row.cancelJson = JSON.stringify({ by, at });
        push(runId, encodeEvent(runId, cancelEvent(by, true), resolved));
        return { outcome: 'requested' };
      }
      return { outcome: 'ended', status: row.status };
    },
  };
}

function waitMethods(tables: MemoryTables): WaitMethods {
  const { resolved, runs, open, existing, push } = tables;
  return {
    async suspendRun(runId, wait) {
      open();
      const row = existing(runId);
      const ended = drivenEnd(row, runId, RunStatus.waiting, undefined);
      if (ended.status !== RunStatus.waiting) {
        Object.assign(row, statusChange(runId, ended.status, ended.result, resolved));
        return ended.status;
      }
      Object.assign(row, { status: RunStatus.waiting, endedAt: null }, waitColumns(runId, wait, resolved));
      return RunStatus.waiting;
    },

    async endWait(runId, ending) {
      open();
      const row = existing(runId);
      const { outcome, event } = waitEndingOf(row, ending);
      if (!event) return outcome;
      const eventJson = encodeEvent(runId, event, resolved);
      if (outcome === 'kept' && ending.keep) Object.assign(row, waitColumns(runId, ending.keep, resolved));
      else Object.assign(row, statusChange(runId, ending.next, {}, resolved), { waitJson: null, waitDueAt: null });
      push(runId, eventJson);
      return outcome;
    },

    async listDueWaits(now, limit = defaultListLimit) {
      open();
      const cutoff = normaliseTimestamp(now, 'now');
      return [...runs.values()]
        .filter((row) => row.status === RunStatus.waiting && row.waitDueAt !== null && row.waitDueAt <= cutoff)
        .sort((a, b) => ((a.waitDueAt ?? '') < (b.waitDueAt ?? '') ? -1 : 1))
        .slice(0, limit)
        .map(rowToRun);
    },
  };
}

/** Runs as readers see them (`shown`), and their pruning. */
function runReads(tables: MemoryTables): RunReads {
  const { runs, journals, journalViews, outbox, open, shown } = tables;
  return {
    async getRun(runId) {
      open();
      const row = runs.get(runId);
      return row && rowToRun(shown(row));
    },

    async countRuns() {
      open();
      const counts = new Map<string, RunCount>();
      for (const run of [...runs.values()].map(shown)) {
        const key = `${run.playbook}\u0000${run.status}`;
        const entry = counts.get(key) ?? { playbook: run.playbook, status: run.status, count: 0 };
        entry.count += 1;
        counts.set(key, entry);
      }
      const order = (a: RunCount) => `${a.playbook}\u0000${a.status}`;
      return [...counts.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
    },

    async listRuns(filter: RunFilter = {}) {
      open();
      const { since, until, limit } = normaliseFilter(filter);
      return (
        [...runs.values()]
          .reverse()
          .map(shown)
          .filter(
            (row) =>
              (filter.playbook === undefined || row.playbook === filter.playbook) &&
              (filter.status === undefined || row.status === filter.status) &&
              (since === undefined || row.startedAt >= since) &&
              (until === undefined || row.startedAt <= until) &&
              (filter.idPrefix === undefined || row.id.startsWith(filter.idPrefix)),
          )
          // Stable sort: among equal start times the later-created run stays first.
          .sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0))
          .slice(0, limit)
          .map(rowToRun)
      );
    },

    async prune(before) {
      open();
      const cutoff = normaliseTimestamp(before, 'before');
      let pruned = 0;
      for (const [id, row] of runs) {
        if (row.endedAt !== null && row.endedAt < cutoff) {
          runs.delete(id);
          journals.delete(id);
          journalViews.delete(id);
          for (const [key, item] of outbox) if (item.runId === id) outbox.delete(key);
          pruned += 1;
        }
      }
      return pruned;
    },
  };
}

function journalMethods(tables: MemoryTables): JournalReads {
  const { journals, journalViews, open, existing } = tables;
  return {
    async journal(runId, afterSeq = 0, limit, options) {
      open();
      const rows = (journals.get(runId) ?? []).filter((row) => row.seq > afterSeq);
      const entries = (limit === undefined ? rows : rows.slice(0, limit)).map(rowToEntry);
      return options?.values === false ? entries.map(withoutValues) : entries;
    },

    async journalAt(runId, seqs) {
      open();
      // Seqs count from 1 without gaps: the row of seq n is the n-th.
      const rows = journals.get(runId) ?? [];
      return [...new Set(seqs)]
        .sort((a, b) => a - b)
        .flatMap((seq) => {
          const row = Number.isInteger(seq) && seq >= 1 ? rows[seq - 1] : undefined;
          return row === undefined ? [] : [rowToEntry(row)];
        });
    },

    async steps(runId) {
      open();
      return foldJournal((journals.get(runId) ?? []).map(rowToEntry));
    },

    async journalView(runId) {
      open();
      return viewOfParts(journalViews.get(runId) ?? []);
    },

    async saveJournalView(runId, view) {
      open();
      existing(runId);
      if (Number(journalViews.get(runId)?.[0]?.throughSeq ?? 0) > view.throughSeq) return;
      const { throughSeq } = view;
      journalViews.set(
        runId,
        Array.from(journalViewParts(view), (viewJson) => ({ throughSeq, viewJson })),
      );
    },
  };
}

function outboxMethods(tables: MemoryTables): OutboxMethods {
  const { resolved, outbox, open, existing, record } = tables;
  return {
    async addNotifications(items) {
      open();
      const rows = items.map((item) => newNotificationToRow(item, resolved));
      for (const item of rows) existing(item.runId);
      record(rows);
    },

    async listNotifications(filter = {}) {
      open();
      const { limit } = normaliseFilter(filter);
      return [...outbox.values()]
        .filter(
          (row) =>
            (filter.runId === undefined || row.runId === filter.runId) &&
            (filter.state === undefined || row.state === filter.state),
        )
        .slice(0, limit)
        .map(rowToNotification);
    },

    async claimNotification(key, owner, ttlMs, options) {
      open();
      assertLeaseTtl(ttlMs);
      const row = outbox.get(key);
      const nowMs = resolved.now().getTime();
      if (!row || !claimable(row, nowMs, options?.takeOverFrom)) return undefined;
      Object.assign(row, { claimedBy: owner, claimExpiresAtMs: nowMs + ttlMs, attempts: row.attempts + 1 });
      return rowToNotification(row);
    },

    async settleNotification(key, owner, outcome) {
      open();
      const row = outbox.get(key);
      if (!row || row.claimedBy !== owner || row.state !== 'pending') return false;
      const settled = settledColumns(outcome, resolved);
      Object.assign(row, {
        ...settled,
        nextAttemptAtMs: settled.nextAttemptAtMs ?? row.nextAttemptAtMs,
        claimedBy: null,
        claimExpiresAtMs: null,
      });
      return true;
    },
  };
}

function leaseAndScheduleMethods(tables: MemoryTables): LeaseAndScheduleMethods {
  const { resolved, leases, schedules, open } = tables;
  return {
    async acquireLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      const lease = leases.get(key);
      if (lease && lease.owner !== owner && lease.expiresAtMs > nowMs) return false;
      leases.set(key, { owner, expiresAtMs: nowMs + ttlMs });
      return true;
    },

    async renewLease(key, owner, ttlMs) {
      open();
      assertLeaseTtl(ttlMs);
      const nowMs = resolved.now().getTime();
      const lease = leases.get(key);
      if (lease?.owner !== owner || lease.expiresAtMs <= nowMs) return false;
      lease.expiresAtMs = nowMs + ttlMs;
      return true;
    },

    async releaseLease(key, owner) {
      open();
      if (leases.get(key)?.owner === owner) leases.delete(key);
    },

    async leaseHolder(key) {
      open();
      const lease = leases.get(key);
      if (!lease || lease.expiresAtMs <= resolved.now().getTime()) return undefined;
      return { owner: lease.owner, expiresAt: new Date(lease.expiresAtMs).toISOString() };
    },

    async getScheduleState(scheduleKey) {
      open();
      const text = schedules.get(scheduleKey);
      return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
    },

    async setScheduleState(scheduleKey, state) {
      open();
      schedules.set(scheduleKey, JSON.stringify(state));
    },

    async patchScheduleState(scheduleKey, patch) {
      open();
      const text = schedules.get(scheduleKey);
      const state = text === undefined ? {} : (JSON.parse(text) as Record<string, unknown>);
      for (const [name, value] of Object.entries(patch)) {
        if (value === null) delete state[name];
        else state[name] = value;
      }
      schedules.set(scheduleKey, JSON.stringify(state));
    },
  };
}

function rateAndTokenMethods(tables: MemoryTables): RateAndTokenMethods {
  const { resolved, rateBuckets, apiTokens, open } = tables;
  return {
    async takeRate(key, intervalMs, toleranceMs) {
      open();
      const now = resolved.now().getTime();
      const tat = Math.max(rateBuckets.get(key) ?? now, now) + Math.ceil(intervalMs);
      rateBuckets.set(key, tat);
      return Math.max(tat - Math.ceil(intervalMs) - Math.floor(toleranceMs) - now, 0);
    },

    async pushRate(key, notBeforeMs, toleranceMs) {
      open();
      rateBuckets.set(key, Math.max(rateBuckets.get(key) ?? 0, Math.ceil(notBeforeMs + toleranceMs)));
    },

    async createApiToken(token) {
      open();
      if ([...apiTokens.values()].some((row) => row.name === token.name || row.id === token.id))
        throw tokenExists(token.name);
      const row: ApiTokenRow = { ...withoutPlaybooks(token), revokedAt: null, playbooksJson: playbooksJsonOf(token) };
      apiTokens.set(token.id, row);
      return rowToApiToken(row);
    },

    async getApiToken(id) {
      open();
      const row = apiTokens.get(id);
      return row && { ...rowToApiToken(row), hash: row.hash };
    },

    async listApiTokens() {
      open();
      return [...apiTokens.values()].map(rowToApiToken);
    },

    async revokeApiToken(idOrName) {
      open();
      const row = [...apiTokens.values()].find((candidate) => candidate.id === idOrName || candidate.name === idOrName);
      if (!row) return undefined;
      row.revokedAt ??= resolved.now().toISOString();
      return rowToApiToken(row);
    },
  };
}

function webSessionMethods(tables: MemoryTables): WebSessionMethods {
  const { resolved, webSessions, open } = tables;
  return {
    async createWebSession(session) {
      open();
      webSessions.set(session.idHash, { ...session });
    },

    async getWebSession(idHash) {
      open();
      const session = webSessions.get(idHash);
      return session && session.expiresAtMs > resolved.now().getTime() ? { ...session } : undefined;
    },

    async deleteWebSession(idHash) {
      open();
      webSessions.delete(idHash);
    },

    async sweepWebSessions() {
      open();
      const now = resolved.now().getTime();
      let swept = 0;
      for (const [idHash, session] of webSessions)
        if (session.expiresAtMs <= now) {
          webSessions.delete(idHash);
          swept += 1;
        }
      return swept;
    },
  };
}
