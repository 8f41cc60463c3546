import type { RunReads, RunWrites, WaitMethods } from '../method-groups.js';
import { newNotificationToRow } from '../notification-row.js';
import { normaliseTimestamp } from '../payload.js';
import {
  cancelEvent,
  cancellableAtOnce,
  cancelledError,
  defaultListLimit,
  drivenEnd,
  encodeEvent,
  newRunToRow,
  normaliseFilter,
  rowToRun,
  runExists,
  statusChange,
  waitColumns,
  waitEndingOf,
} from '../run-row.js';
import type { RunCount, RunFilter, RunsFacet } from '../types.js';
import { RunStatus } from '../types.js';
import type { MemoryTables } from './open.js';

/** A run's life as its driver writes it: created, ended, resumed, cancelled. */
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

/** Runs: created, ended, waiting, resumed, cancelled, read as readers see them, pruned. */
export function memoryRuns(tables: MemoryTables): RunsFacet {
  return { ...runMethods(tables), ...waitMethods(tables), ...runReads(tables) };
}
