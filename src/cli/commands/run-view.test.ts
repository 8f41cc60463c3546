import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../engine/index.js';
import { formatSummary } from './run-view.js';

type Step = RunResult['steps'][number];

const step = (path: string, kind: string, status: string): Step => ({
  path,
  stepId: path.split('.').at(-1) ?? path,
  kind,
  status: status as Step['status'],
  attempts: kind === 'item' ? 0 : 1,
  durationMs: 1000,
});

/** A run of a 40-item loop, each item an `update` call: item 7 failed, items 30-39 never started. */
function fleetRun(): RunResult {
  const steps: Step[] = [step('plan', 'set', 'succeeded'), step('systems', 'forEach', 'failed')];
  for (let index = 0; index < 40; index += 1) {
    const status = index === 7 ? 'failed' : index >= 30 ? 'notStarted' : 'succeeded';
    steps.push(step(`systems[${index}]`, 'item', status));
    if (index < 30) steps.push(step(`systems[${index}].update`, 'call', status));
  }
  return { runId: 'run-1', status: 'failed', steps, simulatedSteps: [], durationMs: 60_000 };
}

describe('formatSummary: the end of fleetbook run', () => {
  it('summarises a loop of many items: counts by status under its row, the first and last items and the failed one listed', () => {
    const lines = formatSummary(fleetRun()).trim().split('\n');
    const stepsListed = lines.slice(2).map((line) =>
      line
        .trim()
        .split(/\s{2,}/)
        .at(-1),
    );
    expect(stepsListed).toEqual([
      'plan',
      'systems',
      expect.stringMatching(
        /^40 items of systems: 29 succeeded, 1 failed, 10 notStarted; listed: the first and last 3 and any failed, running or interrupted; all: fleetbook runs show run-1 --items$/,
      ),
      'systems[0]',
      'systems[0].update',
      'systems[1]',
      'systems[1].update',
      'systems[2]',
      'systems[2].update',
      'systems[7]',
      'systems[7].update',
      'systems[37]',
      'systems[38]',
      'systems[39]',
    ]);
  });

  it('lists every item of a loop of 20 items or fewer', () => {
    const run = fleetRun();
    const small = { ...run, steps: run.steps.filter((entry) => !/\[(2\d|3\d)\]/.test(entry.path)) };
    const text = formatSummary(small);
    expect(text).not.toContain('items of');
    expect(text.match(/systems\[\d+\]\n/g)).toHaveLength(20);
  });
});
