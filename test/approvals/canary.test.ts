// The canary example end to end against the simulator: the run reaches its approval gate and the
// process exits (75, nothing kept running); `approve` with a comment and a form value continues it
// to the end, and the journal holds who approved; `deny` ends it failed with the comment. The
// refusals exit 2 with a clear message.
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore, runLeaseKey } from '../../src/store/index.js';
import { createBench, type Bench } from '../resume/harness.js';
import { runCli } from '../support/cli.js';
import { spawnCli } from '../support/spawn-cli.js';

const CANARY = join(import.meta.dirname, '..', '..', 'playbooks', 'canary-rolling-update.yaml');
const SYSTEMS = ['hci-eu-central-03', 'hci-ap-northeast-04'];
const inputs = [
  '-i',
  `systemIds=${JSON.stringify(SYSTEMS)}`,
  '-i',
  'canary=hci-eu-central-03',
  '-i',
  'catalogVersion=2.4.0',
];
const me = userInfo().username;

let bench: Bench;
beforeEach(async () => {
  bench = await createBench();
});
afterEach(async () => {
  await bench.close();
});

async function stored(runId: string) {
  const store = await openRunStore({ home: bench.home });
  try {
    return { run: await store.getRun(runId), lease: await store.leaseHolder(runLeaseKey(runId)) };
  } finally {
    await store.close();
  }
}

/** Starts the canary in a process of its own and returns its run id once that process exited at the gate. */
async function runToGate(): Promise<string> {
  const cli = spawnCli(['run', CANARY, ...inputs, '--json'], bench.env);
  const code = await cli.exited;
  const result = cli
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { result?: { runId: string; status: string; wait?: { path: string } } })
    .find((line) => line.result)?.result;
  expect(code).toBe(75);
  expect(result).toMatchObject({ status: 'waiting', wait: { path: 'canaryLooksGood', reason: 'approval' } });
  return result?.runId ?? '';
}

describe('the canary example', () => {
  it('waits at the gate with no process, then approve continues it to the end', async () => {
    const runId = await runToGate();
    // Only the canary was updated before the gate.
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toEqual([expect.stringContaining('/systems/')]);
    const waiting = await stored(runId);
    expect(waiting.run).toMatchObject({ status: 'waiting', wait: { reason: 'approval', path: 'canaryLooksGood' } });
    expect(waiting.lease).toBeUndefined();

    const listed = await bench.cli(['runs', 'list', '--status', 'waiting']);
    expect(listed.code).toBe(0);
    expect(listed.lines).toEqual([
      expect.objectContaining({
        id: runId,
        status: 'waiting',
        wait: expect.objectContaining({ path: 'canaryLooksGood' }),
      }),
    ]);
    const listedText = await runCli(['runs', 'list', '--status', 'waiting', '-o', 'text'], { env: bench.env });
    expect(listedText.stdout).toMatch(/WAITING FOR/);
    expect(listedText.stdout).toContain('approval of canaryLooksGood ("canary hci-eu-central-03 is at 2.4.0');
    expect(listedText.stdout).toMatch(/times out .* \(then fail\)/);
    const shown = await runCli(['runs', 'show', runId, '-o', 'text'], { env: bench.env });
    expect(shown.stdout).toContain('waiting for: approval of canaryLooksGood');
    expect(shown.stdout).toContain(`approve: fleetbook approve ${runId} -i batchSize=<value>`);

    const approved = await bench.cli(['approve', runId, '-i', 'batchSize=2', '--comment', 'canary looks fine']);
    expect(approved.code).toBe(0);
    expect(approved.stderr).toContain(
      `run ${runId}: canaryLooksGood approved by ${me} (canary looks fine); continuing the run`,
    );
    expect(approved.result).toMatchObject({
      status: 'succeeded',
      outputs: {
        canary: 'hci-eu-central-03',
        approvedBy: me,
        approvalComment: 'canary looks fine',
        batchSize: 2,
        systems: [
          { system: 'hci-eu-central-03', before: '2.3.1', after: '2.4.0', status: 'succeeded' },
          { system: 'hci-ap-northeast-04', before: '2.2.0', after: '2.4.0', status: 'succeeded' },
        ],
      },
    });
    // Each system updated once: the canary's update was not sent again by the resume.
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(2);
    const decided = (await bench.journal(runId)).filter((entry) => entry.event.type === 'approval.decided');
    expect(decided.map((entry) => entry.event)).toEqual([
      expect.objectContaining({
        path: 'canaryLooksGood',
        decision: 'approved',
        by: me,
        comment: 'canary looks fine',
        inputs: { batchSize: 2 },
      }),
    ]);

    const twice = await bench.cli(['approve', runId]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`the gate canaryLooksGood was already approved by ${me}`);
  });

  it('deny ends the run failed with the comment, touching no other system; refusals exit 2', async () => {
    const runId = await runToGate();
    const wrongGate = await bench.cli(['approve', runId, '--step', 'fleet']);
    expect(wrongGate.code).toBe(2);
    expect(wrongGate.stderr).toContain(`run ${runId} waits at the gate canaryLooksGood, not at fleet`);
    const badInput = await bench.cli(['approve', runId, '-i', 'batchSize=0']);
    expect(badInput.code).toBe(2);
    expect(badInput.stderr).toContain("input 'batchSize' must be >= 1");
    const noComment = await bench.cli(['deny', runId]);
    expect(noComment.code).toBe(2);
    const unknown = await bench.cli(['approve', 'no-such-run']);
    expect(unknown.code).toBe(2);

    const denied = await bench.cli(['deny', runId, '--comment', 'latency doubled on the canary']);
    expect(denied.code).toBe(1);
    expect(denied.result).toMatchObject({
      status: 'failed',
      error: {
        code: 'APPROVAL_DENIED',
        message: `approval canaryLooksGood was denied by ${me}: latency doubled on the canary`,
      },
    });
    expect(bench.posts('privateCloud.runSoftwareUpdate')).toHaveLength(1);
    const notWaiting = await bench.cli(['approve', runId]);
    expect(notWaiting.code).toBe(2);
    expect(notWaiting.stderr).toContain('was already denied');
  });
});
