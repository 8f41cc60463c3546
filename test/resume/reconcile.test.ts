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
    const run = await bench.cli(['run', fixture('tenant-cleanup.yaml')], { FLEETBOOK_RECONCILE_SETTLE: '1s' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The read waits the settle time first: a write the platform still held would have landed.
    expect(run.lines.map((line) => line.msg)).toContain(
      'workspaces.deleteTenant of unknown outcome: reading the platform in 1 s, once a write it still holds has landed',
    );
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

describe('FLEETBOOK_RECONCILE_SETTLE', () => {
  it('refuses a value that is not a duration before the run is recorded (exit 2)', async () => {
    bench = await createBench();
    for (const value of ['soon', '5000', '2h']) {
      const refused = await bench.cli(['run', fixture('tenant-cleanup.yaml')], { FLEETBOOK_RECONCILE_SETTLE: value });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `FLEETBOOK_RECONCILE_SETTLE must be a duration like 5s or 1m (at most 1h), or 0, got '${value}'`,
      );
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    }
    expect(await bench.cli(['runs', 'list'])).toMatchObject({ code: 0, lines: [] });
  });
});
