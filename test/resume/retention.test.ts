// FLEETBOOK_RETENTION applies by itself: a run's end prunes runs that ended longer ago.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRunStore, type NewRun } from '../../src/store/index.js';
import { createBench, type Bench } from './harness.js';

let bench: Bench | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
});

const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString();
const oldRun = (id: string, startedAt: string): NewRun => ({
  id,
  playbook: 'p',
  playbookSource: 'p.yaml',
  playbookHash: 'h',
  inputs: {},
  secretInputNames: [],
  dryRun: false,
  trigger: { kind: 'manual' },
  startedAt,
});

/** Runs that ended 40 and 2 days ago, and one crashed 40 days ago (never ended: kept); the old one with an output folder. */
async function seed(home: string): Promise<void> {
  for (const [id, days, ends] of [
    ['ended-40d', 40, true],
    ['ended-2d', 2, true],
    ['crashed-40d', 40, false],
  ] as const) {
    const store = await openRunStore({ home, now: () => new Date(daysAgo(days)) });
    await store.createRun(oldRun(id, daysAgo(days)));
    if (ends) await store.setRunStatus(id, 'succeeded');
    await store.close();
  }
  mkdirSync(join(home, 'outputs', 'ended-40d'), { recursive: true });
  writeFileSync(join(home, 'outputs', 'ended-40d', 'big.json'), '[]');
}

async function runIds(home: string): Promise<string[]> {
  const store = await openRunStore({ home });
  try {
    return (await store.listRuns({ limit: 100 })).map((run) => run.id).sort();
  } finally {
    await store.close();
  }
}

describe('FLEETBOOK_RETENTION', () => {
  it('prunes the runs that ended longer ago, with their output files, when a run ends', async () => {
    bench = await createBench();
    await seed(bench.home);
    const book = join(bench.home, '..', 'note.yaml');
    writeFileSync(book, 'name: note\nsteps:\n  - id: note\n    log: "hello"\n');
    const run = await bench.cli(['run', book], { FLEETBOOK_RETENTION: '7d' });
    expect(run.code).toBe(0);
    expect(await runIds(bench.home)).toEqual(['crashed-40d', 'ended-2d', run.result!.runId].sort());
    expect(existsSync(join(bench.home, 'outputs', 'ended-40d'))).toBe(false);
    expect(run.lines.find((line) => line.event === 'runs.pruned')).toMatchObject({ pruned: 1 });
  });

  it('without it, nothing is pruned; a value that is not a duration is refused before the run (exit 2)', async () => {
    bench = await createBench();
    await seed(bench.home);
    const book = join(bench.home, '..', 'note.yaml');
    writeFileSync(book, 'name: note\nsteps:\n  - id: note\n    log: "hello"\n');
    const kept = await bench.cli(['run', book]);
    expect(kept.code).toBe(0);
    expect(await runIds(bench.home)).toHaveLength(4);

    const refused = await bench.cli(['run', book], { FLEETBOOK_RETENTION: 'a month' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("FLEETBOOK_RETENTION must be a duration like 30d or 12h, got 'a month'");
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(await runIds(bench.home)).toHaveLength(4);
  });
});
