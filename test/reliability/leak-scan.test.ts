/**
 * The suite-wide secret scan (test/support/leak-scan.ts) really sees what the tests write:
 * secrets planted in a deleted temp dir, a SQLite store, a CLI's captured output and the
 * folder the global teardown sweeps are each reported with their file and line.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { testCredentials } from '../../src/api/testing.js';
import { DEFAULT_CLIENTS } from '../../src/simulator/index.js';
import { createSqliteRunStore, StepStatus } from '../../src/store/index.js';
import globalSetup from '../support/global-setup.js';
import { removalLeaks, scanCaptures, scanFile, SUITE_DIR_ENV, SUITE_SECRETS } from '../support/leak-scan.js';
import { captureStream } from '../support/cli.js';

const TOKEN = `sim_${'0f'.repeat(24)}`;

it("scans for the simulator clients' secrets and the API tests' credentials", () => {
  for (const client of DEFAULT_CLIENTS) expect(SUITE_SECRETS).toContain(client.clientSecret);
  expect(SUITE_SECRETS).toContain(testCredentials.clientSecret);
});

it('every test process writes its temp dirs under the one suite folder', () => {
  const suite = process.env[SUITE_DIR_ENV];
  expect(suite).toBeTruthy();
  expect(realpathSync(tmpdir())).toBe(suite);
  expect(process.env.FLEETBOOK_HOME).toBe(join(suite ?? '', 'home'));
});

it('a temp dir deleted with a secret in a log file is reported with the file and line, by rmSync and by fs/promises rm', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'fleetbook-leak-'));
  writeFileSync(join(directory, 'run.log'), `{"msg":"fine"}\n{"msg":"fine"}\n{"msg":"client sim-operator-secret"}\n`);
  mkdirSync(join(directory, 'nested'));
  writeFileSync(join(directory, 'nested', 'out.txt'), `Authorization: Bearer ${TOKEN}\n`);
  rmSync(directory, { recursive: true, force: true });
  const found = removalLeaks().splice(0);
  const name = directory.split('/').at(-1);
  expect(found).toEqual([
    { where: `${name}/nested/out.txt:1`, what: 'a bearer token (sim_…)' },
    { where: `${name}/run.log:3`, what: 'secret sim-…' },
  ]);

  const other = mkdtempSync(join(tmpdir(), 'fleetbook-leak-'));
  // JSON-escaped, as a log line would hold the API tests' secret with its quotes.
  writeFileSync(join(other, 'log.json'), JSON.stringify({ secret: testCredentials.clientSecret }));
  await rm(other, { recursive: true });
  expect(removalLeaks().splice(0)).toEqual([{ where: `${other.split('/').at(-1)}/log.json:1`, what: 'secret very…' }]);

  // A clean folder is no leak.
  const clean = mkdtempSync(join(tmpdir(), 'fleetbook-leak-'));
  writeFileSync(join(clean, 'run.log'), '{"msg":"token [REDACTED]"}\n');
  rmSync(clean, { recursive: true });
  expect(removalLeaks()).toEqual([]);
});

it('a secret in a journal entry of a SQLite store is found in the database file', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'fleetbook-leak-'));
  try {
    const file = join(directory, 'runs.sqlite');
    const store = createSqliteRunStore({ file });
    const run = await store.createRun({
      id: 'run-leaky',
      playbook: 'leaky',
      playbookSource: 'leaky.yaml',
      playbookHash: 'x',
      inputs: {},
      secretInputNames: [],
      dryRun: false,
      trigger: { kind: 'manual' },
      startedAt: new Date(0).toISOString(),
    });
    await store.append(run.id, {
      type: 'step.finished',
      path: 'note',
      status: StepStatus.succeeded,
      outputs: { said: 'token tok-5ecret-value-981' },
    });
    await store.close();
    expect(scanFile(file).map((leak) => leak.what)).toEqual(['secret tok-…']);
  } finally {
    // Planted on purpose: forget it, so this file does not fail for it.
    rmSync(directory, { recursive: true, force: true });
    removalLeaks().splice(0);
  }
});

it('a captured output holding a secret is reported under its label', () => {
  const stream = captureStream('planted stdout');
  stream.write('line one\nline two hook-token-3f9a1c77\n');
  expect(scanCaptures()).toEqual([{ where: 'planted stdout:2', what: 'secret hook…' }]);
});

it('the global teardown scans what the tests left in the suite folder and fails on a leak', () => {
  const saved = {
    TMPDIR: process.env.TMPDIR,
    FLEETBOOK_HOME: process.env.FLEETBOOK_HOME,
    suite: process.env[SUITE_DIR_ENV],
    exitCode: process.exitCode,
  };
  const teardown = globalSetup();
  const inner = process.env[SUITE_DIR_ENV] ?? '';
  let failure: unknown;
  try {
    mkdirSync(join(inner, 'home'), { recursive: true });
    writeFileSync(join(inner, 'home', 'left.log'), `ok\n${TOKEN}\n`);
  } finally {
    try {
      teardown();
    } catch (error) {
      failure = error;
    }
    process.env[SUITE_DIR_ENV] = saved.suite;
    // The teardown failed this worker's exit code as it would the suite's: the leak was planted.
    process.exitCode = saved.exitCode;
  }
  expect(process.env.TMPDIR).toBe(saved.TMPDIR);
  expect(process.env.FLEETBOOK_HOME).toBe(saved.FLEETBOOK_HOME);
  expect(String(failure)).toContain('home/left.log:2: a bearer token');
  expect(existsSync(inner)).toBe(false);
});
