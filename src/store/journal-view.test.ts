import { describe, expect, it } from 'vitest';
import { logLineCollector } from './journal-view.js';
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
