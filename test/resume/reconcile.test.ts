// Writes declared repeatable: a delete whose answer was lost is done when the resource is gone
// (reconciled as the run goes on, by the same declaration resume uses).
import { afterEach, describe, expect, it } from 'vitest';
import { createBench, fixture, type Bench } from './harness.js';

let bench: Bench | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
});

describe('a repeatable write of unknown outcome', () => {
  it('takes a delete whose answer was lost as done when the read finds the tenant gone: one DELETE, no 404', async () => {
    bench = await createBench();
    bench.sim.control.faults.set({ rules: [{ route: 'workspaces.deleteTenant', afterAccept: true, count: 1 }] });
    const run = await bench.cli(['run', fixture('tenant-cleanup.yaml')]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.lines.find((line) => line.decision !== undefined)).toMatchObject({
      decision: 'done',
      operationId: 'workspaces.deleteTenant',
    });
    const deletes = bench.sim.control.requests({ operationId: 'workspaces.deleteTenant' });
    expect(deletes).toHaveLength(1);
    expect(bench.sim.control.requests({ operationId: 'workspaces.getWorkspace' }).map((entry) => entry.status)).toEqual(
      [404],
    );
  });
});
