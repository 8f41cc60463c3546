// A rehearsal keeps its world: the bundled canary run on the embedded simulator (`--target
// simulator`) stops at its approval gate and its process exits; `fleetbook approve <run>`, as the
// waiting run prints it (no --target), continues it in a process of its own against the same
// world, restored from `<FLEETBOOK_HOME>/worlds/<runId>.json`: the request log there shows the
// canary's precheck and update from the first process, and the fleet's updates succeed. A decider
// with nothing to continue the run against records nothing: exit 2, the gate still waits.
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SimulatorSnapshot } from '../../src/simulator/index.js';
import { openRunStore } from '../../src/store/index.js';
import { jsonLines, runCli } from '../support/cli.js';
import { spawnCli } from '../support/spawn-cli.js';

const CANARY = join(import.meta.dirname, '..', '..', 'playbooks', 'canary-rolling-update.yaml');
const inputs = [
  '-i',
  'systemIds=["hci-eu-central-03","hci-ap-northeast-04"]',
  '-i',
  'canary=hci-eu-central-03',
  '-i',
  'catalogVersion=2.4.0',
];

let dir: string;
let home: string;
let env: Record<string, string>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-rehearsal-'));
  home = join(dir, 'home');
  // No FLEETBOOK_* platform: the embedded simulator is all there is.
  env = { FLEETBOOK_HOME: home, FLEETBOOK_RECONCILE_SETTLE: '10ms' };
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

type Result = { runId: string; status: string; outputs?: Record<string, unknown>; wait?: { path: string } };
const resultOf = (stdout: string): Result | undefined =>
  jsonLines(stdout).find((line) => line.result)?.result as Result | undefined;

/** The canary on the embedded simulator to its gate: in a process of its own, else in this one. */
async function rehearseToGate({ spawned }: { spawned: boolean }): Promise<string> {
  const args = ['run', CANARY, ...inputs, '--target', 'simulator', '--time-scale', '6000', '--json'];
  let code: number | null;
  let stdout: string;
  if (spawned) {
    const cli = spawnCli(args, env);
    code = await cli.exited;
    stdout = cli.stdout();
  } else {
    ({ code, stdout } = await runCli(args, { env }));
  }
  expect(code).toBe(75);
  const result = resultOf(stdout);
  expect(result).toMatchObject({ status: 'waiting', wait: { path: 'canaryLooksGood' } });
  return result?.runId ?? '';
}

const worldOf = (runId: string): SimulatorSnapshot =>
  JSON.parse(readFileSync(join(home, 'worlds', `${runId}.json`), 'utf8')) as SimulatorSnapshot;

/** [path, status] of the requests to one operation the saved world's log holds. */
const logged = (world: SimulatorSnapshot, operationId: string): Array<[string, number]> =>
  world.requests.filter((entry) => entry.operationId === operationId).map((entry) => [entry.path, entry.status]);

async function statusOf(runId: string): Promise<string | undefined> {
  const store = await openRunStore({ home });
  try {
    return (await store.getRun(runId))?.status;
  } finally {
    await store.close();
  }
}

describe('a rehearsal run keeps its world', () => {
  it('approve without --target continues the canary against the world it stopped in', async () => {
    const runId = await rehearseToGate({ spawned: true });
    const atGate = worldOf(runId);
    expect(logged(atGate, 'privateCloud.runSoftwarePrechecks')).toEqual([[expect.any(String), 202]]);
    const [canaryPrecheck] = logged(atGate, 'privateCloud.runSoftwarePrechecks')[0] ?? [];

    // In this process: the simulator the run had is gone with its process, the world is on disk.
    const approve = await runCli(['approve', runId, '-i', 'batchSize=2', '--comment', 'canary fine', '--json'], {
      env,
    });
    expect(approve.code).toBe(0);
    expect(resultOf(approve.stdout)).toMatchObject({
      status: 'succeeded',
      outputs: {
        systems: [
          { system: 'hci-eu-central-03', before: '2.3.1', after: '2.4.0', status: 'succeeded' },
          { system: 'hci-ap-northeast-04', before: '2.2.0', after: '2.4.0', status: 'succeeded' },
        ],
      },
    });
    // Saved again after the approval: the first process's precheck of the canary, then the fleet's.
    const after = worldOf(runId);
    const prechecks = logged(after, 'privateCloud.runSoftwarePrechecks');
    expect(prechecks[0]).toEqual([canaryPrecheck, 202]);
    expect(prechecks).toHaveLength(2);
    expect(logged(after, 'privateCloud.runSoftwareUpdate')).toEqual([
      [expect.stringContaining('/systems/'), 202],
      [expect.stringContaining('/systems/'), 202],
    ]);
  }, 120_000);

  it('a decider with nothing to continue the run against records nothing: the run stays approvable', async () => {
    const runId = await rehearseToGate({ spawned: false });
    const world = join(home, 'worlds', `${runId}.json`);
    const aside = join(dir, 'world-aside.json');
    renameSync(world, aside);

    const refused = await runCli(['approve', runId, '--comment', 'canary fine'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`run ${runId}: nothing was recorded, the gate still waits.`);
    expect(refused.stderr).toContain(`no saved simulator world of the run (${world})`);
    expect(refused.stderr).toContain('FLEETBOOK_CLIENT_ID');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(await statusOf(runId)).toBe('waiting');
    expect(existsSync(world)).toBe(false);

    renameSync(aside, world);
    const approved = await runCli(['approve', runId, '--comment', 'canary fine', '--json'], { env });
    expect(approved.code).toBe(0);
    expect(resultOf(approved.stdout)).toMatchObject({ status: 'succeeded' });
  });
});
