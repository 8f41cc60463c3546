// `fleetbook schedules trigger`: a schedule run now with its inputs, recorded as a trigger of
// the schedule; its overlap policy applied against its previous run (skip refuses, cancel-running
// cancels it first); an unknown schedule refused with exit 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { createBench, type Bench } from '../resume/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-trigger-'));
let bench: Bench;
beforeAll(async () => {
  bench = await createBench();
});
afterAll(async () => {
  await bench.close();
  rmSync(dir, { recursive: true, force: true });
});

function scheduled(overlap: string): string {
  const file = join(dir, `nightly-${overlap}.yaml`);
  writeFileSync(
    file,
    `name: nightly-${overlap}
inputs:
  region: { type: string, default: us-west, description: where }
schedules:
  - id: nightly
    cron: "0 2 * * *"
    overlap: ${overlap}
    enabled: false
    inputs: { region: eu-central }
steps:
  - id: systems
    call: privateCloud.listSystems
    region: \${{ inputs.region }}
outputs:
  region: \${{ inputs.region }}
`,
  );
  return file;
}

/** A previous run of the schedule, waiting (at a gate), as the schedule's state names it. */
async function previousWaitingRun(scheduleKey: string, runId: string): Promise<void> {
  const store = await openRunStore({ home: bench.home });
  try {
    await store.createRun({
      id: runId,
      playbook: 'p',
      playbookSource: 'p.yaml',
      playbookHash: 'h',
      inputs: {},
      secretInputNames: [],
      dryRun: false,
      trigger: { kind: 'schedule', scheduleId: scheduleKey },
      startedAt: new Date().toISOString(),
    });
    await store.suspendRun(runId, { reason: 'approval', path: 'gate', since: new Date().toISOString() });
    await store.patchScheduleState(scheduleKey, { lastRunId: runId });
  } finally {
    await store.close();
  }
}

describe('fleetbook schedules trigger', () => {
  it("runs the schedule now with its inputs, recorded as the schedule's trigger", async () => {
    const triggered = await bench.cli(['schedules', 'trigger', scheduled('allow')]);
    expect(triggered.code, triggered.stderr).toBe(0);
    expect(triggered.result).toMatchObject({ status: 'succeeded', outputs: { region: 'eu-central' } });
    const store = await openRunStore({ home: bench.home });
    try {
      expect((await store.getRun(triggered.result?.runId ?? ''))?.trigger).toEqual({
        kind: 'trigger',
        scheduleId: 'nightly',
        by: userInfo().username,
      });
    } finally {
      await store.close();
    }
  });

  it('overlap skip: refused while the previous run goes on; cancel-running: cancels it first', async () => {
    await previousWaitingRun('nightly', 'previous-1');
    const refused = await bench.cli(['schedules', 'trigger', scheduled('skip'), '--schedule', 'nightly']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('its previous run previous-1 is still waiting and its overlap policy is skip');

    const replaced = await bench.cli(['schedules', 'trigger', scheduled('cancel-running')]);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stderr).toContain('its previous run previous-1 was cancelled (overlap: cancel-running)');
    const store = await openRunStore({ home: bench.home });
    try {
      expect((await store.getRun('previous-1'))?.status).toBe('cancelled');
    } finally {
      await store.close();
    }
  });

  it('refuses an unknown schedule, naming the ones there are', async () => {
    const unknown = await bench.cli(['schedules', 'trigger', scheduled('allow'), '--schedule', 'nightyl']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("has no schedule 'nightyl' (it has: nightly)");
  });
});
