import { createJournalFold, journalPages, withoutValues } from '../fold-journal.js';
import { journalViewParts, viewOfParts } from '../journal-view.js';
import { encodeEvent, rowToEntry, runNotFound, type JournalRow } from '../run-row.js';
import type { JournalFacet } from '../types.js';
import type { PendingEntry } from './journal-buffer.js';
import type { PostgresContext } from './open.js';
import {
  SQL_ADD_JOURNAL_VIEW_PART,
  SQL_DROP_JOURNAL_VIEW_PARTS,
  SQL_GET_RUN,
  SQL_JOURNAL,
  SQL_JOURNAL_AT,
  SQL_JOURNAL_PAGE,
  SQL_JOURNAL_VIEW,
  SQL_SAVE_JOURNAL_VIEW,
} from './sql.js';

export function postgresJournal(context: PostgresContext): JournalFacet {
  const { resolved, serial, journal, query, inTransaction, commit, self } = context;
  return {
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
