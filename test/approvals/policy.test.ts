// A gate's approval policy through the CLI door (`fleetbook run`, `approve`, `deny`, `runs show`):
// `required` counts distinct approvers (the same person twice refused, exit 2; the run waits until
// the last), `notRequester` refuses the person who started the run, and a gate of groups only
// refuses the CLI's user, who has no groups. The other approvers' decisions come from elsewhere
// (`recordApproval` on the same store, as another person's `fleetbook approve` would write them).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordApproval } from '../../src/engine/index.js';
import { openRunStore } from '../../src/store/index.js';
import { createBench, type Bench } from '../resume/harness.js';
import { runCli } from '../support/cli.js';

const me = userInfo().username;
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-approval-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let bench: Bench;
beforeEach(async () => {
  bench = await createBench();
});
afterEach(async () => {
  await bench.close();
});

function gatePlaybook(name: string, approval: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
steps:
  - id: gate
    approval:
      message: go?
${approval}
  - log: "approved by \${{ steps.gate.outputs.approvedBy }}"
`,
  );
  return file;
}

async function runToGate(file: string): Promise<string> {
  const started = await bench.cli(['run', file]);
  expect(started.code).toBe(75);
  return started.result?.runId ?? '';
}

/** Another approver's approval, written to the same store as their own `fleetbook approve` would. */
async function approveAs(runId: string, by: string): Promise<string> {
  const store = await openRunStore({ home: bench.home });
  try {
    return (await recordApproval(store, { runId, decision: 'approved', by }, Date.now)).status;
  } finally {
    await store.close();
  }
}

describe('approval policies at the CLI', () => {
  it('required 2: the first approval is counted and the run waits, the same person twice is refused, a second completes', async () => {
    const runId = await runToGate(
      gatePlaybook('two', `      approvers: { users: [${me}, alice], groups: [change-managers] }\n      required: 2`),
    );
    const first = await runCli(['approve', runId, '--comment', 'looks fine', '-o', 'text'], { env: bench.env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      `run ${runId}: gate approved by ${me} (looks fine); 1 of 2 approvals: ${me}; waiting for a change-manager or alice other than ${me}`,
    );
    const shown = await runCli(['runs', 'show', runId, '-o', 'text'], { env: bench.env });
    expect(shown.stdout).toContain(`approvals: 1 of 2 approvals: ${me}; waiting for a change-manager or alice`);
    const twice = await bench.cli(['approve', runId]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`${me} already approved gate at`);
    expect(twice.stderr).not.toMatch(/\n\s+at /);
    expect(await approveAs(runId, 'alice')).toBe('interrupted');
    const journal = (await bench.journal(runId)).map((entry) => entry.event);
    expect(journal.filter((event) => event.type.startsWith('approval.'))).toEqual([
      expect.objectContaining({ type: 'approval.given', by: me, comment: 'looks fine', of: 2 }),
      expect.objectContaining({
        type: 'approval.decided',
        by: 'alice',
        approvals: [expect.objectContaining({ by: me })],
      }),
    ]);
  });

  it('a second person completes: the run goes on in their `fleetbook approve`', async () => {
    const runId = await runToGate(gatePlaybook('second', `      approvers: [alice, ${me}]\n      required: 2`));
    expect(await approveAs(runId, 'alice')).toBe('waiting');
    const second = await bench.cli(['approve', runId]);
    expect(second.code).toBe(0);
    expect(second.result).toMatchObject({ status: 'succeeded' });
    expect(second.lines.some((line) => line.msg === `approved by ${me}`)).toBe(true);
  });

  it('notRequester refuses the person who started the run; a gate of groups refuses the CLI user, who has none', async () => {
    const own = await runToGate(gatePlaybook('own', `      approvers: [${me}, alice]\n      notRequester: true`));
    const refused = await bench.cli(['approve', own]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `${me} started this run, and the gate gate may not be decided by the person who started or triggered it (notRequester)`,
    );
    const denied = await bench.cli(['deny', own, '--comment', 'no']);
    expect(denied.code).toBe(2);
    const grouped = await runToGate(gatePlaybook('grouped', '      approvers: { groups: [change-managers] }'));
    const noGroup = await bench.cli(['approve', grouped]);
    expect(noGroup.code).toBe(2);
    expect(noGroup.stderr).toContain(
      `${me} is not an approver of gate (approvers: groups change-managers; ${me} has no groups`,
    );
    const store = await openRunStore({ home: bench.home });
    try {
      expect((await store.getRun(own))?.status).toBe('waiting');
      expect((await store.getRun(grouped))?.status).toBe('waiting');
    } finally {
      await store.close();
    }
  });
});
