import { createJournalFold, journalPages, withoutValues } from './fold-journal.js';
import { fencedView } from './fenced-view.js';
import { viewOfParts, journalViewParts } from './journal-view.js';
import { normaliseTimestamp } from './payload.js';
import type { PendingEntry } from './postgres-journal-buffer.js';
import type { PostgresContext } from './postgres-context.js';
import { refusedWrite } from './postgres-connection.js';
import {
  appendValues,
  SQL_APPEND,
  SQL_CANCEL_LOCKED,
  SQL_CLAIM_RUN,
  SQL_COUNT_RUNS,
  SQL_DROP_JOURNAL_VIEW_PARTS,
  SQL_ADD_JOURNAL_VIEW_PART,
  SQL_DUE_WAITS,
  SQL_END_WAIT,
  SQL_GET_RUN,
  SQL_JOURNAL,
  SQL_JOURNAL_AT,
  SQL_JOURNAL_PAGE,
  SQL_JOURNAL_VIEW,
  SQL_LIST_RUNS,
  SQL_MARK_RESUMED,
  SQL_PRUNE,
  SQL_RECORD_FIRE,
  SQL_RENEW_CLAIM,
  SQL_REQUEST_CANCEL,
  SQL_REQUEUE_RUN,
  SQL_SAVE_JOURNAL_VIEW,
  SQL_SHOWN_RUN,
  SQL_SUSPEND,
} from './postgres-sql.js';
import {
  assertLeaseTtl,
  cancelEvent,
  cancellableAtOnce,
  cancelledError,
  drivenEnd,
  defaultListLimit,
  waitColumns,
  encodeEvent,
  normaliseFilter,
  rowToEntry,
  rowToRun,
  runNotFound,
  statusChange,
  waitEndingOf,
  type JournalRow,
  type RunRow,
} from './run-row.js';
import type { CancelOutcome, RunClaim, RunFilter, RunQueue } from './types.js';
import { RunStatus } from './types.js';
import type { JournalReads, RunReads, RunWrites, WaitMethods } from './method-groups.js';

/** The queue of team mode: runs queued, claimed by workers, and schedule fires. */
export function postgresQueue(context: PostgresContext): Omit<RunQueue, 'tryLeadership'> {
  const { resolved, serial, query, commit, insertRun, self } = context;
  return {
    enqueueRun: (run) => insertRun(run, RunStatus.queued),

    claimRun: (owner, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        const nowMs = resolved.now().getTime();
        const row = (
          await query<RunRow & { fence: string; previous: string | null }>(SQL_CLAIM_RUN, [owner, nowMs, nowMs + ttlMs])
        ).rows[0];
        if (!row) return undefined;
        const claim: RunClaim = { run: rowToRun(row), fence: Number(row.fence) };
        if (row.previous !== null) claim.previousOwner = row.previous;
        return claim;
      }),

    renewClaim: (runId, fence, ttlMs) =>
      serial(async () => {
        assertLeaseTtl(ttlMs);
        return (await query(SQL_RENEW_CLAIM, [runId, fence, resolved.now().getTime() + ttlMs])).rowCount === 1;
      }),

    requeueRun: (runId, fence) =>
      serial(async () => {
        await commit();
        return (await query(SQL_REQUEUE_RUN, [runId, fence])).rowCount === 1;
      }),

    fenced: (runId, fence) => fencedView(self(), runId, fence),

    recordFire: (scheduleKey, fireAt, runId) =>
      serial(
        async () =>
          (
            await query(SQL_RECORD_FIRE, [
              scheduleKey,
              normaliseTimestamp(fireAt, 'fireAt'),
              runId,
              resolved.now().toISOString(),
            ])
          ).rowCount === 1,
      ),
  };
}

/** A run's life as its driver writes it: created, journaled, ended, resumed, cancelled. */
export function postgresRunWrites(context: PostgresContext): RunWrites {
  const { resolved, serial, query, inTransaction, journal, commit, changedRun, lockedRun, writeEnd, insertRun } =
    context;
  return {
    createRun: (run) => insertRun(run, RunStatus.running),

    append: (runId, event, appendOptions) => {
      // Encoded now, so an oversized event is refused to its caller, not to a later commit.
      let entry: PendingEntry;
      try {
        entry = {
          runId,
          fence: appendOptions?.fence,
          at: resolved.now().toISOString(),
          eventJson: encodeEvent(runId, event, resolved),
        };
      } catch (error) {
        return Promise.reject(error as Error);
      }
      if (appendOptions?.buffered) return serial(() => journal.keepBuffered(entry));
      // The commit is awaited outside `serial`: it is queued behind this call.
      return serial(async () => journal.commitSoon(entry)).then(({ committed }) => committed);
    },

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

export function postgresWaits(context: PostgresContext): WaitMethods {
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
export function postgresRunReads(context: PostgresContext): RunReads {
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

export function postgresJournalReads(context: PostgresContext): JournalReads {
  const { serial, query, inTransaction, commit, self } = context;
  return {
    journal: (runId, afterSeq = 0, limit, options) =>
      serial(async () => {
        await commit();
        // Without values, the page is cut here, not by the server: casting a fleet's large events
        // to jsonb to cut them took 9.4 s of the single backend for a 10,000-system journal, where
        // reading the text and cutting each parsed entry takes 5.5 s (bench/results.md).
        if (options?.values === false)
          return (await query<JournalRow>(SQL_JOURNAL_PAGE, [runId, afterSeq, limit ?? null])).rows.map((row) =>
            withoutValues(rowToEntry(row)),
          );
        const rows =
          limit === undefined
            ? await query<JournalRow>(SQL_JOURNAL, [runId, afterSeq])
            : await query<JournalRow>(SQL_JOURNAL_PAGE, [runId, afterSeq, limit]);
        return rows.rows.map(rowToEntry);
      }),

    journalAt: (runId, seqs) =>
      serial(async () => {
        await commit();
        return (await query<JournalRow>(SQL_JOURNAL_AT, [runId, seqs])).rows.map(rowToEntry);
      }),

    async steps(runId) {
      // Read by seq pages and folded as read: the records are kept, never the whole journal.
      const fold = createJournalFold();
      for await (const page of journalPages(self(), runId)) for (const entry of page) fold.add(entry);
      return fold.records();
    },

    journalView: (runId) =>
      serial(async () => {
        return viewOfParts((await query<{ throughSeq: number; viewJson: string }>(SQL_JOURNAL_VIEW, [runId])).rows);
      }),

    saveJournalView: (runId, view) =>
      serial(async () => {
        const { throughSeq } = view;
        // Part by part, each text made as it is sent: never the whole view as one string.
        const saved = await inTransaction(async (client) => {
          const parts = journalViewParts(view);
          const first = parts.next();
          if (
            first.done ||
            (await client.query(SQL_SAVE_JOURNAL_VIEW, [runId, throughSeq, first.value])).rowCount === 0
          )
            return false;
          await client.query(SQL_DROP_JOURNAL_VIEW_PARTS, [runId]);
          let part = 0;
          for (const viewJson of parts)
            await client.query(SQL_ADD_JOURNAL_VIEW_PART, [runId, (part += 1), throughSeq, viewJson]);
          return true;
        });
        if (!saved && (await query(SQL_GET_RUN, [runId])).rowCount === 0) throw runNotFound(runId);
      }),
  };
}
