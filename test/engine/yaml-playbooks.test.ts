/**
 * The engine end to end from YAML files: each playbook is written to a folder, loaded with
 * the loader (as `fleetbook run <file>` does) and run against the simulator on port 0.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunOptions, RunResult } from '../../src/engine/index.js';
import { hasErrors, loadPlaybook } from '../../src/playbook/index.js';
import { renderLockKey } from '../../src/scheduler/index.js';
import { startHarness, type Harness } from './harness.js';

let harness: Harness;
let dir: string;
beforeAll(async () => {
  harness = await startHarness({}, { logLevel: 'debug' });
});
afterAll(async () => {
  await harness.close();
});
beforeEach((context) => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-yaml-'));
  context.onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
});

/** Writes the files (name → YAML) to the test's folder; returns the path of the first. */
function files(texts: Record<string, string>): string {
  for (const [name, text] of Object.entries(texts)) writeFileSync(join(dir, name), text);
  return join(dir, Object.keys(texts)[0] ?? '');
}

/** Loads `file` with the loader (no problem expected) and runs it. */
async function runFile(file: string, options: Partial<RunOptions> = {}): Promise<RunResult> {
  const loaded = loadPlaybook(file);
  expect(loaded.problems).toEqual([]);
  if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(`${file} does not load`);
  return harness.run(loaded.playbook, { env: {}, ...options });
}

/** The statuses of the run's steps, by path. */
function statuses(result: RunResult): Record<string, string> {
  return Object.fromEntries(result.steps.map((step) => [step.path, step.status + (step.rescued ? ' (rescued)' : '')]));
}

/** The messages the run's `log` steps wrote, in order. */
function logged(result: RunResult): string[] {
  return harness
    .lines()
    .filter((line) => line.runId === result.runId && line.playbookLog === true)
    .map((line) => String(line.msg));
}

describe('env in expressions', () => {
  it('shows only FLEETBOOK_VAR_* variables, and a secret-looking one is redacted in log lines, the journal and the outputs', async () => {
    const ciToken = 'ci-job-t0ken-4417';
    const deployToken = 'deploy-t0ken-9302';
    const file = files({
      'env.yaml': `name: env-reader
steps:
  - id: show
    log: "env is \${{ $string(env) }}"
  - id: keep
    set:
      region: \${{ env.FLEETBOOK_VAR_REGION }}
      token: "\${{ env.FLEETBOOK_VAR_DEPLOY_TOKEN }}"
      home: \${{ env.HOME }}
outputs:
  region: \${{ steps.keep.outputs.region }}
  token: \${{ steps.keep.outputs.token }}
  names: \${{ $keys(env) }}
`,
    });
    const env = {
      HOME: '/home/ci',
      CI_JOB_TOKEN: ciToken,
      FLEETBOOK_CLIENT_SECRET: 'client-5ecret-77',
      FLEETBOOK_VAR_REGION: 'eu-central',
      FLEETBOOK_VAR_DEPLOY_TOKEN: deployToken,
    };
    const result = await runFile(file, { env });
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({
      region: 'eu-central',
      token: '[REDACTED]',
      names: ['FLEETBOOK_VAR_REGION', 'FLEETBOOK_VAR_DEPLOY_TOKEN'],
    });
    const shown = harness
      .lines()
      .find(
        (line) =>
          line.runId === result.runId &&
          line.stepId === 'show' &&
          typeof line.msg === 'string' &&
          line.msg.startsWith('env is'),
      );
    expect(shown?.msg).toBe('env is {"FLEETBOOK_VAR_REGION":"eu-central","FLEETBOOK_VAR_DEPLOY_TOKEN":"[REDACTED]"}');
    const journal = JSON.stringify(await harness.store.journal(result.runId));
    expect(journal).toContain('eu-central');
    for (const secret of [ciToken, deployToken, 'client-5ecret-77', '/home/ci']) {
      expect(harness.text()).not.toContain(secret);
      expect(journal).not.toContain(secret);
    }
  });

  it("renders a playbook's lock key from the same FLEETBOOK_VAR_* variables, not the rest of the environment", async () => {
    const loaded = loadPlaybook(
      files({
        'locked.yaml':
          'name: locked\nlock: "fleet-${{ env.HOME }}-${{ env.FLEETBOOK_VAR_REGION }}"\nsteps:\n  - log: hello\n',
      }),
    );
    expect(loaded.problems).toEqual([]);
    if (!loaded.playbook) throw new Error('locked.yaml does not load');
    const key = await renderLockKey(
      loaded.playbook,
      {},
      { id: 'run-1', dryRun: false, env: { HOME: '/home/ci', FLEETBOOK_VAR_REGION: 'eu-central' } },
    );
    expect(key).toBe('fleet--eu-central');
  });
});

describe('uses', () => {
  it('runs the child playbook file with the inputs the parent gives and hands its outputs back', async () => {
    const parent = files({
      'parent.yaml': `name: parent
inputs:
  prefix: { type: string, default: "node" }
steps:
  - id: inventory
    uses: ./child/inventory.yaml
    with: { count: 3, prefix: "\${{ inputs.prefix }}" }
  - id: after
    set: { first: "\${{ steps.inventory.outputs.names[0] }}" }
outputs:
  names: \${{ steps.inventory.outputs.names }}
  total: \${{ steps.inventory.outputs.total }}
  first: \${{ steps.after.outputs.first }}
`,
    });
    mkdirSync(join(dir, 'child'));
    files({
      'child/inventory.yaml': `name: inventory
inputs:
  count: { type: integer }
  prefix: { type: string }
steps:
  - id: list
    call: privateCloud.listSystems
  - id: names
    set: { names: "\${{ ($prefix := inputs.prefix; [1..inputs.count].($prefix & '-' & $string($))) }}" }
outputs:
  names: \${{ steps.names.outputs.names }}
  total: \${{ steps.list.outputs.body.total }}
`,
    });
    const listedBefore = harness.sim.control.requests({ operationId: 'privateCloud.listSystems' }).length;
    const result = await runFile(parent, { inputs: { prefix: 'edge' } });
    expect(result.status).toBe('succeeded');
    const total = (await harness.client.invoke('privateCloud.listSystems')).body as { total: number };
    expect(result.outputs).toEqual({ names: ['edge-1', 'edge-2', 'edge-3'], total: total.total, first: 'edge-1' });
    // The child's read and the test's own.
    expect(harness.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(listedBefore + 2);
    expect(statuses(result)).toMatchObject({ inventory: 'succeeded', after: 'succeeded' });
  });
});

describe('forEach', () => {
  it('gives each item loop.index, loop.first and loop.last, and env, while the run goes on', async () => {
    const file = files({
      'loop.yaml': `name: loop-reader
steps:
  - id: each
    forEach: \${{ ["a", "b", "c"] }}
    as: name
    steps:
      - id: mark
        log: "\${{ name }} index=\${{ loop.index }} first=\${{ loop.first }} last=\${{ loop.last }} region=\${{ env.FLEETBOOK_VAR_REGION }}"
`,
    });
    const result = await runFile(file, { env: { FLEETBOOK_VAR_REGION: 'eu-central' } });
    expect(result.status).toBe('succeeded');
    expect(logged(result)).toEqual([
      'a index=0 first=true last=false region=eu-central',
      'b index=1 first=false last=false region=eu-central',
      'c index=2 first=false last=true region=eu-central',
    ]);
  });
});

describe('block with rescue and always', () => {
  it('a rescue that ends in fail: gives the run its message; a recovered step logs that it recovered, not that it failed', async () => {
    const file = files({
      'rescue-fails.yaml': `name: rescue-fails
steps:
  - id: deliver
    block:
      - id: send
        fail: "mail server refused"
    rescue:
      - log: "telling the on-call"
      - fail: "delivery failed and the on-call was paged"
`,
      'recovers.yaml': `name: recovers
steps:
  - id: deliver
    fail: "first try failed"
    rescue:
      - log: "second way"
`,
    });
    const failed = await runFile(file);
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toContain('delivery failed and the on-call was paged');
    expect(failed.error?.message).not.toContain('mail server refused');
    const deliver = failed.steps.find((step) => step.path === 'deliver');
    expect(deliver?.error).toMatchObject({
      message: 'delivery failed and the on-call was paged',
      details: { rescuedFrom: { message: 'step deliver.send failed: mail server refused' } },
    });

    const recovered = await runFile(join(dir, 'recovers.yaml'));
    expect(recovered.status).toBe('succeeded');
    const line = harness
      .lines()
      .find((entry) => entry.runId === recovered.runId && entry.stepId === 'deliver' && entry.status === 'succeeded');
    expect(line?.msg).toBe('step deliver recovered: its rescue succeeded after it failed (first try failed)');
    expect(line?.error).toBeUndefined();
    expect(line?.recoveredFrom).toMatchObject({ message: 'first try failed' });
  });

  it("runs the block's rescue after a step inside it fails, then its always; the run goes on and succeeds", async () => {
    const file = files({
      'rescued.yaml': `name: rescued-block
steps:
  - id: update
    block:
      - id: before
        log: "before"
      - id: broken
        fail: "boom"
      - id: skippedAfter
        log: "never"
    rescue:
      - id: recover
        log: "rescuing: \${{ steps.update.status }} after \${{ steps.broken.error.message }}"
    always:
      - id: cleanup
        log: "cleanup"
  - id: next
    log: "next"
`,
    });
    const result = await runFile(file);
    expect(result.status).toBe('succeeded');
    expect(logged(result)).toEqual(['before', 'rescuing: failed after boom', 'cleanup', 'next']);
    expect(statuses(result)).toEqual({
      update: 'succeeded (rescued)',
      'update.before': 'succeeded',
      'update.broken': 'failed',
      'update.skippedAfter': 'notStarted',
      'update.recover': 'succeeded',
      'update.cleanup': 'succeeded',
      next: 'succeeded',
    });
  });

  it('runs always after a block that fails without a rescue, and the run fails with the error', async () => {
    const file = files({
      'failed.yaml': `name: failed-block
steps:
  - id: update
    block:
      - id: broken
        fail: "boom"
    always:
      - id: cleanup
        log: "cleanup after \${{ steps.update.status }}"
  - id: next
    log: "never"
`,
    });
    const result = await runFile(file);
    expect(result.status).toBe('failed');
    // The run's error says which step ended the block, and why.
    expect(result.error?.message).toBe('step update.broken failed: boom');
    expect(logged(result)).toEqual(['cleanup after failed']);
    expect(statuses(result)).toEqual({
      update: 'failed',
      'update.broken': 'failed',
      'update.cleanup': 'succeeded',
      next: 'notStarted',
    });
  });
});
