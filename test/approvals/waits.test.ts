// Waits and cancellation end to end on the local store, against the simulator: each `onTimeout`
// applied by the sweep once the gate's timeout passed (the sweep's clock put past it: no
// sleeping); a SIGKILL of the deciding process just after approval loses nothing and sends no
// write twice; a running loop cancelled from another process ends `cancelled` with its items
// not started and no write after the cancel.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endDueWaits } from '../../src/engine/index.js';
import { openRunStore } from '../../src/store/index.js';
import { createBench, type Bench } from '../resume/harness.js';
import { spawnCli } from '../support/spawn-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-waits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CANARY = join(import.meta.dirname, '..', '..', 'playbooks', 'canary-rolling-update.yaml');
const me = userInfo().username;

let bench: Bench;
beforeEach(async () => {
  bench = await createBench();
});
afterEach(async () => {
  await bench.close();
});

function gatePlaybook(onTimeout: string): string {
  const file = join(dir, `gate-${onTimeout}.yaml`);
  writeFileSync(
    file,
    `name: gate-${onTimeout}
steps:
  - id: gate
    approval: { message: go?, timeout: 1h, onTimeout: ${onTimeout} }
  - id: systems
    call: privateCloud.listSystems
    region: eu-central
outputs:
  gate: \${{ steps.gate }}
  systems: \${{ steps.systems.status }}
`,
  );
  return file;
}

async function sweepAt(whenMs: number) {
  const store = await openRunStore({ home: bench.home });
  try {
    return await endDueWaits(store, () => whenMs);
  } finally {
    await store.close();
  }
}

describe('timeouts', () => {
  it.each([
    ['fail', 1, 'failed'],
    ['continue', 0, 'succeeded'],
    ['skip', 0, 'skipped'],
  ] as const)('onTimeout %s: applied once the sweep sees the timeout passed', async (onTimeout, exit, gateStatus) => {
    const started = await bench.cli(['run', gatePlaybook(onTimeout)]);
    expect(started.code).toBe(75);
    const runId = started.result?.runId ?? '';
    expect(started.stderr).toContain(`fleetbook approve ${runId}`);
    // Before the timeout: resume refuses, the sweep ends nothing.
    const early = await bench.cli(['resume', runId]);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain(`run ${runId} is still waiting for approval of gate ("go?")`);
    expect(await sweepAt(Date.now() + 30 * 60_000)).toEqual([]);
    const ended = await sweepAt(Date.now() + 61 * 60_000);
    expect(ended.map((entry) => entry.run.id)).toEqual([runId]);
    const resumed = await bench.cli(['resume', runId]);
    expect(resumed.code).toBe(exit);
    if (onTimeout === 'fail') expect(resumed.result?.error).toMatchObject({ code: 'APPROVAL_TIMED_OUT' });
    else
      expect(resumed.result?.outputs).toMatchObject({
        gate: { status: gateStatus, outputs: { timedOut: true, approved: false } },
        systems: 'succeeded',
      });
    const decided = (await bench.journal(runId)).filter((entry) => entry.event.type === 'approval.decided');
    expect(decided.map((entry) => entry.event)).toEqual([
      expect.objectContaining({ decision: 'timedOut', by: 'timeout' }),
    ]);
  });
});

describe('a decision after the deadline', () => {
  it('`fleetbook approve` after the gate timed out: exit 2 APPROVAL_TIMED_OUT, and the run ends as onTimeout says', async () => {
    const file = join(dir, 'gate-short.yaml');
    writeFileSync(
      file,
      `name: gate-short
steps:
  - id: gate
    approval: { message: go?, timeout: 1s, onTimeout: fail }
  - id: systems
    call: privateCloud.listSystems
    region: eu-central
`,
    );
    const started = await bench.cli(['run', file]);
    expect(started.code).toBe(75);
    const runId = started.result?.runId ?? '';
    // The gate's 1 s runs on the wall clock (the approving process's): approve once it passed.
    const store = await openRunStore({ home: bench.home });
    const timeoutAt = Date.parse((await store.getRun(runId).finally(() => store.close()))?.wait?.timeoutAt ?? '');
    while (Date.now() <= timeoutAt) await new Promise((resolve) => setTimeout(resolve, timeoutAt + 1 - Date.now()));
    const late = await bench.cli(['approve', runId, '--comment', 'looks good']);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain(`run ${runId}: gate timed out before this approval, so its onTimeout (fail) applies`);
    expect(late.stderr).toMatch(
      new RegExp(`fleetbook: run ${runId}: the gate gate timed out at .*; a decision after the timeout is refused`),
    );
    // The same process continued the run with the timeout: the gate failed, nothing after it ran.
    expect(late.result).toMatchObject({ runId, status: 'failed', error: { code: 'APPROVAL_TIMED_OUT' } });
    expect(bench.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toEqual([]);
    const decided = (await bench.journal(runId)).filter((entry) => entry.event.type === 'approval.decided');
    expect(decided.map((entry) => entry.event)).toEqual([
      expect.objectContaining({ decision: 'timedOut', by: 'timeout' }),
    ]);
    const again = await bench.cli(['deny', runId, '--comment', 'no']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('a decision after the timeout is refused');
  });
});

describe('crashes', () => {
  it('SIGKILL of the approving process during the resumed run’s first write: nothing lost, no write repeated', async () => {
    // Simulated time runs 6000 times faster than the wall clock: a precheck's 4 simulated hours of
    // validity would pass in 2.4 s, and a resume reconciling a precheck that expired meanwhile
    // rightly sends it again. Prechecks that stay valid 30 simulated days keep the test about the kill.
    await bench.close();
    bench = await createBench({ world: { privateCloud: { precheckValidityMinutes: 43_200 } } });
    const inputs = ['-i', 'systemIds=["hci-eu-central-03","hci-ap-northeast-04"]', '-i', 'canary=hci-eu-central-03'];
    const started = await bench.cli(['run', CANARY, ...inputs, '-i', 'catalogVersion=2.4.0']);
    expect(started.code).toBe(75);
    const runId = started.result?.runId ?? '';
    // The fleet's first write is held 3 s by the simulator: the kill lands while it is in flight,
    // and the resume below starts before the platform has applied it.
    bench.sim.control.faults.set({ rules: [{ route: 'privateCloud.runSoftwarePrechecks', latencyMs: 3000 }] });
    const approving = spawnCli(['approve', runId, '--comment', 'go', '--json'], bench.env);
    const deadline = Date.now() + 60_000;
    while (bench.posts('privateCloud.runSoftwarePrechecks').length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await approving.signal('SIGKILL')).toBeNull();
    const journal = await bench.journal(runId);
    expect(journal.some((entry) => entry.event.type === 'approval.decided')).toBe(true);
    bench.sim.control.faults.set({ rules: [] });
    const held = bench.sim.control
      .requests({ operationId: 'privateCloud.runSoftwarePrechecks' })
      .filter((entry) => entry.method === 'POST' && entry.status === 0);
    expect(held, 'the write still held by the platform when the resume starts').toHaveLength(1);

    // Resumed at once: reconciliation waits for the held write to land (the settle time), then
    // finds it and attaches instead of sending it again.
    const resumed = await bench.cli(['resume', runId], { FLEETBOOK_RECONCILE_SETTLE: '5s' });
    expect(resumed.code).toBe(0);
    expect(resumed.result).toMatchObject({ status: 'succeeded', outputs: { approvedBy: me, approvalComment: 'go' } });
    // One precheck and one update accepted per system, whatever the kill interrupted (a write the
    // platform refused, 4xx, may be sent again: it changed nothing).
    for (const operationId of ['privateCloud.runSoftwarePrechecks', 'privateCloud.runSoftwareUpdate']) {
      const log = bench.sim.control.requests({ operationId }).filter((entry) => entry.method === 'POST');
      const accepted = log.filter((entry) => entry.status < 400).map((entry) => entry.path);
      const described = log.map((entry) => `${entry.path} ${entry.status}`).join('; ');
      expect(new Set(accepted).size, `${operationId}: ${described}`).toBe(accepted.length);
      expect(accepted, described).toHaveLength(2);
    }
    const reconciled = resumed.lines.filter((line) => String(line.msg).includes('of unknown outcome'));
    expect(reconciled.map((line) => line.msg)).toEqual([
      expect.stringMatching(/^privateCloud\.runSoftwarePrechecks of unknown outcome: reading the platform in [1-5] s/),
      'privateCloud.runSoftwarePrechecks of unknown outcome reconciled: attach',
    ]);
  });
});

describe('runs cancel', () => {
  it('a running loop cancelled from another process ends cancelled: items not started, no write after the cancel', async () => {
    const file = join(dir, 'slow-loop.yaml');
    writeFileSync(
      file,
      `name: slow-loop
steps:
  - id: each
    forEach: [1, 2, 3, 4, 5, 6, 7, 8]
    as: n
    steps:
      - id: work
        call: privateCloud.listSystems
        region: eu-central
      - sleep: 1s
`,
    );
    const running = spawnCli(['run', file, '--json'], bench.env);
    await running.waitFor('"msg":"step each[1].work');
    const [run] = await (async () => {
      const store = await openRunStore({ home: bench.home });
      try {
        return await store.listRuns({ status: 'running' });
      } finally {
        await store.close();
      }
    })();
    const runId = run?.id ?? '';
    const cancelled = await bench.cli(['runs', 'cancel', runId]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.lines).toEqual([{ runId, outcome: 'requested' }]);
    expect(await running.exited).toBe(1);
    const result = running
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map(
        (line) => JSON.parse(line) as { result?: { status: string; steps: Array<{ kind: string; status: string }> } },
      )
      .find((line) => line.result)?.result;
    expect(result?.status).toBe('cancelled');
    const items = result?.steps.filter((step) => step.kind === 'item').map((step) => step.status) ?? [];
    // Seen at the driver's next heartbeat (2 s): the item in flight stops, none starts after.
    expect(items.filter((status) => status === 'notStarted').length).toBeGreaterThanOrEqual(3);
    expect(items.filter((status) => status === 'interrupted')).toHaveLength(1);
    const started = items.filter((status) => status !== 'notStarted').length;
    expect(bench.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(started);
    const again = await bench.cli(['resume', runId]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`run ${runId} was cancelled by ${me}; a cancelled run is not resumed`);
    const waitingCancel = await bench.cli(['runs', 'cancel', runId]);
    expect(waitingCancel.code).toBe(2);
    expect(waitingCancel.stderr).toContain('already ended cancelled');
  });

  it('a waiting run is cancelled at once', async () => {
    const started = await bench.cli(['run', gatePlaybook('fail')]);
    const runId = started.result?.runId ?? '';
    const cancelled = await bench.cli(['runs', 'cancel', runId]);
    expect(cancelled.lines).toEqual([{ runId, outcome: 'cancelled' }]);
    expect(cancelled.code).toBe(0);
    const approve = await bench.cli(['approve', runId]);
    expect(approve.code).toBe(2);
    expect(approve.stderr).toContain(`run ${runId} is not waiting for an approval (it is cancelled)`);
  });
});
