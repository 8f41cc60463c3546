import type { RunReads, RunWrites, WaitMethods } from '../method-groups.js';
import { normaliseTimestamp } from '../payload.js';
import {
  cancelEvent,
  cancellableAtOnce,
  cancelledError,
  defaultListLimit,
  drivenEnd,
  encodeEvent,
  normaliseFilter,
  rowToRun,
  runNotFound,
  statusChange,
  waitColumns,
  waitEndingOf,
  type RunRow,
} from '../run-row.js';
import type { CancelOutcome, RunFilter, RunsFacet } from '../types.js';
import { RunStatus } from '../types.js';
import { refusedWrite } from './connection.js';
import type { PostgresContext } from './open.js';
import {
  appendValues,
  SQL_APPEND,
  SQL_CANCEL_LOCKED,
  SQL_COUNT_RUNS,
  SQL_DUE_WAITS,
  SQL_END_WAIT,
  SQL_GET_RUN,
  SQL_LIST_RUNS,
  SQL_MARK_RESUMED,
  SQL_PRUNE,
  SQL_REQUEST_CANCEL,
  SQL_SHOWN_RUN,
  SQL_SUSPEND,
} from './sql.js';

/** A run's life as its driver writes it: created, ended, resumed, cancelled. */
function postgresRunWrites(context: PostgresContext): RunWrites {
  const { resolved, serial, query, inTransaction, commit, changedRun, lockedRun, writeEnd, insertRun } = context;
  return {
    createRun: (run) => insertRun(run, RunStatus.running),

    setRunStatus: (runId, status, result, fenceOptions) =>
      serial(async () => {
        statusChange(runId, status, result, resolved);
        await commit();
        return inTransaction(async (client) => {
          const ended = drivenEnd(await lockedRun(client, runId), runId, status, result);
          return writeEnd(client, runId, ended.status, ended.result, fenceOptions?.fence);
        });
      }),

    markResumed: (runId, fenceOptions) =>
      serial(async () => {
        await commit();
        await changedRun(
          runId,
          (await query(SQL_MARK_RESUMED, [runId, fenceOptions?.fence ?? null])).rowCount,
          fenceOptions?.fence,
        );
      }),

    cancelRun: (runId, by) =>
      serial(async () => {
        await commit();
        const at = resolved.now().toISOString();
        return inTransaction(async (client): Promise<CancelOutcome> => {
          // As readers see it: a running run whose driver died is driven by no one, so it ends at once.
          const row = (
            await client.query<RunRow>(`${SQL_SHOWN_RUN} FOR UPDATE OF runs`, [runId, resolved.now().getTime()])
          ).rows[0];
          if (!row) throw runNotFound(runId);
          const journalIt = (requested: boolean) =>
            client.query(
              SQL_APPEND,
              appendValues(runId, [at], [encodeEvent(runId, cancelEvent(by, requested), resolved)], undefined),
            );
          if (cancellableAtOnce.has(row.status)) {
            await client.query(SQL_CANCEL_LOCKED, [runId, at, JSON.stringify(cancelledError(runId, by))]);
            await journalIt(false);
            return { outcome: 'cancelled' };
          }
          if ((await client.query(SQL_REQUEST_CANCEL, [runId, JSON.stringify({ by, at })])).rowCount === 1) {
            await journalIt(true);
            return { outcome: 'requested' };
          }
          return { outcome: 'ended', status: row.status };
        });
      }),
  };
}

function postgresWaits(context: PostgresContext): WaitMethods {
  const { resolved, serial, query, inTransaction, commit, lockedRun, writeEnd } = context;
  return {
    suspendRun: (runId, wait, fenceOptions) =>
      serial(async () => {
        const columns = waitColumns(runId, wait, resolved);
        const fence = fenceOptions?.fence ?? null;
        await commit();
        return inTransaction(async (client) => {
          const ended = drivenEnd(await lockedRun(client, runId), runId, RunStatus.waiting, undefined);
          if (ended.status !== RunStatus.waiting)
            return writeEnd(client, runId, ended.status, ended.result, fenceOptions?.fence);
          const info = await client.query(SQL_SUSPEND, [runId, columns.waitJson, columns.waitDueAt, fence]);
          if (!info.rowCount) throw await refusedWrite(client, runId, fenceOptions?.fence);
          return RunStatus.waiting;
        });
      }),

    endWait: (runId, ending) =>
      serial(async () => {
        const change = statusChange(runId, ending.next, {}, resolved);
        await commit();
        return inTransaction(async (client) => {
          // FOR UPDATE: the wait is read under the row's lock, so of two deciders one finds it waiting.
          const row = (await client.query<RunRow>(`${SQL_GET_RUN} FOR UPDATE`, [runId])).rows[0];
          const { outcome, event } = waitEndingOf(row, ending);
          if (!event) return outcome;
          if (outcome === 'kept' && ending.keep) {
            const columns = waitColumns(runId, ending.keep, resolved);
            await client.query(SQL_SUSPEND, [runId, columns.waitJson, columns.waitDueAt, null]);
          } else
            await client.query(SQL_END_WAIT, [
              runId,
              change.status,
              change.endedAt,
              change.outputsJson ?? null,
              change.errorJson ?? null,
            ]);
          const eventJson = encodeEvent(runId, event, resolved);
          await client.query(SQL_APPEND, appendValues(runId, [resolved.now().toISOString()], [eventJson], undefined));
          return outcome;
        });
      }),

    listDueWaits: (now, limit = defaultListLimit) =>
      serial(async () => {
        await commit();
        const rows = await query<RunRow>(SQL_DUE_WAITS, [normaliseTimestamp(now, 'now'), limit]);
        return rows.rows.map(rowToRun);
      }),
  };
}

/** Runs as readers see them (`shownStatus`), and their pruning. */
function postgresRunReads(context: PostgresContext): RunReads {
  const { resolved, serial, query, commit, knownRuns } = context;
  return {
    getRun: (runId) =>
      serial(async () => {
        await commit();
        const row = (await query<RunRow>(SQL_SHOWN_RUN, [runId, resolved.now().getTime()])).rows[0];
        return row && rowToRun(row);
      }),

    countRuns: () =>
      serial(async () => {
        await commit();
        const rows = await query<{ playbook: string; status: RunStatus; count: string }>(SQL_COUNT_RUNS, [
          resolved.now().getTime(),
        ]);
        return rows.rows.map((row) => ({ playbook: row.playbook, status: row.status, count: Number(row.count) }));
      }),

    listRuns: (filter: RunFilter = {}) =>
      serial(async () => {
        const { since, until, limit } = normaliseFilter(filter);
        await commit();
        const rows = await query<RunRow>(SQL_LIST_RUNS, [
          filter.playbook ?? null,
          filter.status ?? null,
          since ?? null,
          filter.idPrefix ?? null,
          limit,
          until ?? null,
          resolved.now().getTime(),
        ]);
        return rows.rows.map(rowToRun);
      }),

    prune: (before) =>
      serial(async () => {
        const cutoff = normaliseTimestamp(before, 'before');
        await commit();
        knownRuns.clear();
        return (await query(SQL_PRUNE, [cutoff])).rowCount ?? 0;
      }),
  };
}

/** Runs: created, ended, waiting, resumed, cancelled, read as readers see them, pruned. */
export function postgresRuns(context: PostgresContext): RunsFacet {
  return { ...postgresRunWrites(context), ...postgresWaits(context), ...postgresRunReads(context) };
}
