import { foldJournal, withoutValues } from '../fold-journal.js';
import { journalViewParts, viewOfParts } from '../journal-view.js';
import { encodeEvent, rowToEntry } from '../run-row.js';
import type { JournalFacet } from '../types.js';
import type { MemoryTables } from './open.js';

export function memoryJournal(tables: MemoryTables): JournalFacet {
  const { resolved, journals, journalViews, open, existing, push } = tables;
  return {
    async append(runId, event) {
      open();
      existing(runId);
      push(runId, encodeEvent(runId, event, resolved));
    },

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
