import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../store/index.js';
import { recordsShown } from './step-table.js';

const record = (path: string, kind: string, status = 'succeeded'): StepRecord => ({
  path,
  stepId: '',
  kind,
  status: status as StepRecord['status'],
  attempts: 0,
  startedAt: '2026-11-25T20:00:00.000Z',
});

/** A loop of `count` items, each with a `work` step holding a loop of two items with a `check` step. */
function loop(count: number, failed: number[] = []): StepRecord[] {
  const records = [record('systems', 'forEach')];
  for (let index = 0; index < count; index += 1) {
    const status = failed.includes(index) ? 'failed' : 'succeeded';
    records.push(
      record(`systems[${index}]`, 'item', status),
      record(`systems[${index}].work`, 'forEach', status),
      record(`systems[${index}].work[0]`, 'item'),
      record(`systems[${index}].work[0].check`, 'call'),
      record(`systems[${index}].work[1]`, 'item', status),
      record(`systems[${index}].work[1].check`, 'call', status),
    );
  }
  return records;
}

describe('recordsShown: the records of the text view of runs show', () => {
  it("drops the steps of a summarised loop's items left out, keeping their item records for the counts", () => {
    const shown = recordsShown(loop(30, [12])).map((shownRecord) => shownRecord.path);
    const withSteps = new Set(
      shown.filter((path) => path.endsWith('.work')).map((path) => Number(/\[(\d+)\]/.exec(path)?.[1])),
    );
    expect([...withSteps]).toEqual([0, 1, 2, 12, 27, 28, 29]);
    expect(shown.filter((path) => /^systems\[\d+\]$/.test(path))).toHaveLength(30);
    expect(shown).toContain('systems[12].work[1].check');
    expect(shown).not.toContain('systems[13].work');
  });

  it('keeps every record of a loop of 20 items or fewer', () => {
    const records = loop(20, [3]);
    expect(recordsShown(records)).toEqual(records);
  });
});
