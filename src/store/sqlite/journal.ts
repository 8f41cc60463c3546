import { foldJournal, mapIterable, withoutValues } from '../fold-journal.js';
import { viewOfParts } from '../journal-view.js';
import { encodeEvent, rowToEntry, runNotFound } from '../run-row.js';
import type { JournalFacet } from '../types.js';
import type { SqliteContext } from './open.js';

export function sqliteJournal(context: SqliteContext): JournalFacet {
  const { resolved, statements, journal, open, commit, saveViewParts } = context;
  return {
    // Not async: an append is hot (two per loop item), and a buffered one needs no promise of its
    // own. A failure is a rejection, as from the other methods.
    append(runId, event, appendOptions) {
      try {
        open();
        const entry = { runId, at: journal.appendedAt(), eventJson: encodeEvent(runId, event, resolved) };
        if (!appendOptions?.buffered) return journal.commitSoon(entry);
        journal.keepBuffered(entry);
        return journal.appended;
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async journal(runId, afterSeq = 0, limit, options) {
      open();
      commit();
      const page = options?.values === false ? statements.journalPageWithoutValues : statements.journalPage;
      const rows =
        limit === undefined && options?.values !== false
          ? statements.journal.all(runId, afterSeq)
          : page.all(runId, afterSeq, limit ?? -1);
      return options?.values === false ? rows.map((row) => withoutValues(rowToEntry(row))) : rows.map(rowToEntry);
    },

    async journalAt(runId, seqs) {
      open();
      commit();
      return statements.journalAt.all(runId, JSON.stringify(seqs)).map(rowToEntry);
    },

    async steps(runId) {
      open();
      commit();
      // One row parsed at a time (`iterate`): the fold keeps the records, never the whole journal.
      return foldJournal(mapIterable(statements.journal.iterate(runId, 0), rowToEntry));
    },

    async journalView(runId) {
      open();
      return viewOfParts(statements.journalView.iterate(runId));
    },

    async saveJournalView(runId, view) {
      open();
      if (!saveViewParts(runId, view) && !statements.runExists.get(runId)) throw runNotFound(runId);
    },
  };
}
