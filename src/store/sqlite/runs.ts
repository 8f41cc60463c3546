import type { RunReads, RunWrites, WaitMethods } from '../method-groups.js';
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
  runNotFound,
  statusChange,
  waitColumns,
  waitEndingOf,
} from '../run-row.js';
import type { CancelOutcome, RunFilter, RunsFacet } from '../types.js';
import { RunStatus } from '../types.js';
import type { SqliteContext } from './open.js';
import { isSqliteError } from './statements.js';

/** A run's life as its driver writes it: created, ended, resumed, cancelled. */
function sqliteRunWrites(context: SqliteContext): RunWrites {
  const { resolved, db, statements, journal, open, commit, changedRun, endDrive } = context;
  return {
    async createRun(run) {
      open();
      const row = newRunToRow(run, resolved);
      try {
        statements.insertRun.run(row);
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')) throw runExists(row.id);
        throw error;
      }
      journal.knowRun(row.id);
      return rowToRun(row);
    },

    async setRunStatus(runId, status, result) {
      open();
      commit();
      statusChange(runId, status, result, resolved);
      // IMMEDIATE: the row is read under the write lock, so a cancel is either before the end or refused after it.
      return endDrive.immediate(runId, status, result);
    },

    async markResumed(runId) {
      open();
      commit();
      changedRun(runId, statements.markResumed.run(runId).changes);
    },

    async cancelRun(runId, by) {
      open();
      commit();
      const at = resolved.now().toISOString();
      return db
        .transaction((): CancelOutcome => {
          // As readers see it: a running run whose driver died is driven by no one, so it ends at once.
          const row = statements.shownRun.get({ id: runId, nowMs: resolved.nowMs() });
          if (!row) throw runNotFound(runId);
          if (!cancellableAtOnce.has(row.status) && row.status !== RunStatus.running)
            return { outcome: 'ended', status: row.status };
          const error = cancelledError(runId, by);
          const cancelNow = cancellableAtOnce.has(row.status) ? statements.cancelShown : statements.cancelNow;
          if (cancelNow.run({ id: runId, endedAt: at, errorJson: JSON.stringify(error) }).changes === 1) {
            journal.insertEntry({ runId, at, eventJson: encodeEvent(runId, cancelEvent(by, false), resolved) });
            return { outcome: 'cancelled' };
          }
          if (statements.requestCancel.run({ id: runId, cancelJson: JSON.stringify({ by, at }) }).changes === 1) {
            journal.insertEntry({ runId, at, eventJson: encodeEvent(runId, cancelEvent(by, true), resolved) });
            return { outcome: 'requested' };
          }
          return { outcome: 'ended', status: row.status };
        })
        .immediate();
    },
  };
}

function sqliteWaits(context: SqliteContext): WaitMethods {
  const { resolved, db, statements, journal, open, commit, changedRun, writeEnd } = context;
  return {
    async suspendRun(runId, wait) {
      open();
      commit();
      const columns = waitColumns(runId, wait, resolved);
      return db
        .transaction((): RunStatus => {
          const row = statements.getRun.get(runId);
          if (!row) throw runNotFound(runId);
          const ended = drivenEnd(row, runId, RunStatus.waiting, undefined);
          if (ended.status !== RunStatus.waiting) return writeEnd(runId, ended.status, ended.result);
          changedRun(runId, statements.suspend.run({ id: runId, ...columns }).changes);
          return RunStatus.waiting;
        })
        .immediate();
    },

    async endWait(runId, ending) {
      open();
      commit();
      const change = statusChange(runId, ending.next, {}, resolved);
      // IMMEDIATE: the wait is read under the write lock, so of two deciders one finds it waiting.
      return db
        .transaction(() => {
          const { outcome, event } = waitEndingOf(statements.getRun.get(runId), ending);
          if (!event) return outcome;
          if (outcome === 'kept' && ending.keep)
            statements.suspend.run({ id: runId, ...waitColumns(runId, ending.keep, resolved) });
          else
            statements.endWait.run({
              id: runId,
              status: change.status,
              endedAt: change.endedAt,
              outputsJson: change.outputsJson ?? null,
              errorJson: change.errorJson ?? null,
            });
          journal.insertEntry({
            runId,
            at: resolved.now().toISOString(),
            eventJson: encodeEvent(runId, event, resolved),
          });
          return outcome;
        })
        .immediate();
    },

    async listDueWaits(now, limit = defaultListLimit) {
      open();
      commit();
      return statements.dueWaits.all(normaliseTimestamp(now, 'now'), limit).map(rowToRun);
    },
  };
}

/** Runs as readers see them (`SQL_SHOWN_STATUS`), and their pruning. */
function sqliteRunReads(context: SqliteContext): RunReads {
  const { resolved, statements, journal, open, commit } = context;
  return {
    async getRun(runId) {
      open();
      commit();
      const row = statements.shownRun.get({ id: runId, nowMs: resolved.nowMs() });
      return row && rowToRun(row);
    },

    async countRuns() {
      open();
      commit();
      return statements.countRuns.all({ nowMs: resolved.nowMs() });
    },

    async listRuns(filter: RunFilter = {}) {
      open();
      const { since, until, limit } = normaliseFilter(filter);
      commit();
      return statements.listRuns
        .all({
          playbook: filter.playbook ?? null,
          status: filter.status ?? null,
          since: since ?? null,
          until: until ?? null,
          idPrefix: filter.idPrefix ?? null,
          limit,
          nowMs: resolved.nowMs(),
        })
        .map(rowToRun);
    },

    async prune(before) {
      open();
      const cutoff = normaliseTimestamp(before, 'before');
      commit();
      journal.forgetRuns();
      return statements.prune.run(cutoff).changes;
    },
  };
}

/** Runs: created, ended, waiting, resumed, cancelled, read as readers see them, pruned. */
export function sqliteRuns(context: SqliteContext): RunsFacet {
  return { ...sqliteRunWrites(context), ...sqliteWaits(context), ...sqliteRunReads(context) };
}
