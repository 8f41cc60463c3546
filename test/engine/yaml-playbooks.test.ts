/**
 * The engine end to end from YAML files: each playbook is written to a folder, loaded with
 * the loader (as `fleetbook run <file>` does) and run against the simulator on port 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunOptions, RunResult } from '../../src/engine/index.js';
import { hasErrors, loadPlaybook } from '../../src/playbook/index.js';
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
    const env = { HOME: '/home/ci', CI_JOB_TOKEN: ciToken, FLEETBOOK_CLIENT_SECRET: 'client-5ecret-77', FLEETBOOK_VAR_REGION: 'eu-central', FLEETBOOK_VAR_DEPLOY_TOKEN: deployToken };
    const result = await runFile(file, { env });
    expect(result.status).toBe('succeeded');
    expect(result.outputs).toEqual({ region: 'eu-central', token: '[REDACTED]', names: ['FLEETBOOK_VAR_REGION', 'FLEETBOOK_VAR_DEPLOY_TOKEN'] });
    const shown = harness.lines().find((line) => line.runId === result.runId && line.stepId === 'show' && typeof line.msg === 'string' && line.msg.startsWith('env is'));
    expect(shown?.msg).toBe('env is {"FLEETBOOK_VAR_REGION":"eu-central","FLEETBOOK_VAR_DEPLOY_TOKEN":"[REDACTED]"}');
    const journal = JSON.stringify(await harness.store.journal(result.runId));
    expect(journal).toContain('eu-central');
    for (const secret of [ciToken, deployToken, 'client-5ecret-77', '/home/ci']) {
      expect(harness.text()).not.toContain(secret);
      expect(journal).not.toContain(secret);
    }
  });
});
