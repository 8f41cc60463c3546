import { describe, expect, it } from 'vitest';
import { journalViewParts, logLineCollector, viewOfParts, VIEW_PART_RECORDS } from './journal-view.js';
import type { JournalEntry, JournalEvent } from './types.js';

const entry = (seq: number, event: JournalEvent): JournalEntry => ({
  runId: 'r1',
  seq,
  at: `2026-11-27T10:00:0${seq}.000Z`,
  event,
});

describe('logLineCollector', () => {
  it('finds the line of a log step journaled as one entry, and of one with a start (older journals)', () => {
    const log = logLineCollector();
    [
      entry(1, {
        type: 'step.finished',
        path: 'note',
        stepId: 'note',
        kind: 'log',
        status: 'succeeded',
        outputs: { message: 'one entry' },
      }),
      entry(2, { type: 'step.started', path: 'old', stepId: 'old', kind: 'log' }),
      entry(3, { type: 'step.finished', path: 'old', status: 'succeeded', outputs: { message: 'started first' } }),
      entry(4, {
        type: 'step.finished',
        path: 'other',
        stepId: 'other',
        kind: 'set',
        status: 'succeeded',
        outputs: { message: 'not a log' },
      }),
    ].forEach((item) => log.add(item));
    expect(log.lines.map((line) => line.message)).toEqual(['one entry', 'started first']);
  });
});

describe('journalViewParts', () => {
  it('cuts a view into texts of at most VIEW_PART_RECORDS records, read back as the same view', () => {
    const records = Array.from({ length: 2 * VIEW_PART_RECORDS + 1 }, (_, index) => ({
      path: `systems[${index}]`,
      stepId: 'systems',
      kind: 'item',
      status: 'succeeded' as const,
      attempts: 0,
      startedAt: '2026-11-27T10:00:00.000Z',
    }));
    const view = { throughSeq: 9, records, logPaths: ['note'], log: [{ at: 'now', path: 'note', message: 'hi' }] };
    const parts = [...journalViewParts(view)];
    expect(parts.map((text) => (JSON.parse(text) as { records: unknown[] }).records.length)).toEqual([
      VIEW_PART_RECORDS,
      VIEW_PART_RECORDS,
      1,
    ]);
    expect(viewOfParts(parts.map((viewJson) => ({ throughSeq: '9', viewJson })))).toEqual(view);
    expect(viewOfParts([])).toBeUndefined();
  });
});
