// The playbook hash resume compares covers what the engine runs, not the words around it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../src/playbook/index.js';
import { createBench, fixture, type Bench } from './harness.js';

const original = readFileSync(fixture('one-system-update.yaml'), 'utf8');
/** Edits that change no step: a description, an input's description, a schedule and its cron, comments. */
const described = original
  .replace('name: one-system-update\n', 'name: one-system-update\ndescription: Updates one system.\n# a comment\n')
  .replace(
    'catalogVersion: { type: string, default: "2.4.0" }',
    'catalogVersion: { type: string, default: "2.4.0", description: the target catalog }',
  )
  .concat('schedules:\n  - id: weekly\n    cron: "0 3 * * 0"\n    enabled: false\n');
const recronned = described
  .replace('cron: "0 3 * * 0"', 'cron: "30 4 * * 6"')
  .replace('Updates one system.', 'Updates a system.');

let dir: string | undefined;
let bench: Bench | undefined;
afterEach(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  await bench?.close();
  bench = undefined;
});

function hashOf(text: string): string {
  dir ??= mkdtempSync(join(tmpdir(), 'fleetbook-hash-'));
  const file = join(dir, `p${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const loaded = loadPlaybook(file);
  expect(loaded.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
  return loaded.playbook!.hash;
}

describe('the playbook hash', () => {
  it('ignores the description, input descriptions, schedules and comments; a step, an input default or a default policy changes it', () => {
    const base = hashOf(original);
    expect(hashOf(described)).toBe(base);
    expect(hashOf(recronned)).toBe(base);
    expect(hashOf(original.replace('limit: 100 }', 'limit: 50 }'))).not.toBe(base);
    expect(hashOf(original.replace('default: "2.4.0"', 'default: "2.5.0"'))).not.toBe(base);
    expect(hashOf(original.replace('minPoll: 10ms', 'minPoll: 20ms'))).not.toBe(base);
  });

  it('lets a run resume after its description and cron were edited, and refuses it after a step changed', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 2 }] });
    const copy = join(bench.home, '..', 'edited.yaml');
    writeFileSync(copy, original);
    const first = await bench.cli(['run', copy]);
    expect(first.code).toBe(1);
    const runId = first.result!.runId;

    writeFileSync(copy, recronned);
    const resumed = await bench.cli(['resume', runId]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(1);
    expect(resumed.result?.error).toMatchObject({ code: 'OPERATION_FAILED' });

    writeFileSync(copy, recronned.replace('limit: 100 }', 'limit: 50 }'));
    const refused = await bench.cli(['resume', runId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('changed since run');
  });
});
