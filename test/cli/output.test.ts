/**
 * One output switch on every command (`-o text|json|yaml|wide`, `--json` its shorthand), the
 * human view off a terminal, and colour only on a terminal without NO_COLOR.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRunStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-output-'));
  env = { FLEETBOOK_HOME: join(dir, 'home') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const nightly = join(import.meta.dirname, '..', 'scheduler', 'fixtures', 'nightly', 'nightly-subscription-report.yaml');
const simulator = ['--target', 'simulator', '--time-scale', '6000'];
const ESC = '\u001b[';

async function seedRuns(): Promise<void> {
  const store = await openRunStore({ env });
  const base = {
    playbookSource: 'p.yaml',
    playbookHash: 'sha256:x',
    inputs: {},
    secretInputNames: [],
    dryRun: false,
    trigger: { kind: 'manual' as const },
  };
  await store.createRun({
    ...base,
    id: 'run-ok',
    playbook: 'first',
    startedAt: new Date(Date.now() - 60_000).toISOString(),
  });
  await store.setRunStatus('run-ok', 'succeeded');
  await store.createRun({
    ...base,
    id: 'run-bad',
    playbook: 'first',
    startedAt: new Date(Date.now() - 30_000).toISOString(),
  });
  await store.setRunStatus('run-bad', 'failed', { error: { message: 'system sys-3 did not answer' } });
  await store.close();
}

describe('the output switch', () => {
  it('runs list: text, wide (more columns), json (= --json), yaml', async () => {
    await seedRuns();
    const text = await runCli(['runs', 'list', '-o', 'text'], { env });
    expect(text.stdout.split('\n')[0]).toMatch(/^RUN +PLAYBOOK +STATUS +STARTED +DURATION +TRIGGER +RESUMES$/);
    const wide = await runCli(['runs', 'list', '-o', 'wide'], { env });
    expect(wide.stdout.split('\n')[0]).toMatch(/ RESUMES +ENDED +ERROR$/);
    expect(wide.stdout).toMatch(/\nrun-bad +first +failed .* system sys-3 did not answer\n/);
    const json = await runCli(['runs', 'list', '--output', 'json'], { env });
    expect(json.stdout).toBe((await runCli(['runs', 'list', '--json'], { env })).stdout);
    expect(
      json.stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id),
    ).toEqual(['run-bad', 'run-ok']);
    const yaml = await runCli(['runs', 'list', '-o', 'yaml'], { env });
    expect(parseAllDocuments(yaml.stdout).map((document) => (document.toJS() as { id: string }).id)).toEqual([
      'run-bad',
      'run-ok',
    ]);
  });

  it('an unknown format, or two formats at once, is exit 2 with what it takes', async () => {
    const unknown = await runCli(['runs', 'list', '-o', 'yml'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "fleetbook: --output must be one of text, json, yaml, wide, got 'yml'. Did you mean 'yaml'?\n",
    );
    const both = await runCli(['schedules', nightly, '--json', '-o', 'text'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--json and --output text ask for two formats');
  });

  it('colours statuses on a terminal only, and never with NO_COLOR set', async () => {
    await seedRuns();
    const tty = await runCli(['runs', 'list'], { env, tty: true });
    expect(tty.stdout).toContain(`${ESC}31mfailed`);
    expect(tty.stdout).toContain(`${ESC}32msucceeded`);
    // Coloured after padding: the columns line up as without colour.
    const plain = await runCli(['runs', 'list'], { env });
    expect(tty.stdout.replaceAll(/\u001b\[\d+m/g, '')).toBe(plain.stdout);
    expect(plain.stdout).not.toContain(ESC);
    expect((await runCli(['runs', 'list'], { env: { ...env, NO_COLOR: '1' }, tty: true })).stdout).not.toContain(ESC);
    expect((await runCli(['runs', 'show', 'run-bad'], { env, tty: true })).stdout).toMatch(
      /^Run run-bad {2}first {2}\u001b\[31mfailed\u001b\[0m\n/,
    );
  });

  it('schedules take -o yaml, and schedules resume -o json', async () => {
    const yaml = await runCli(['schedules', nightly, '-o', 'yaml', '--count', '1'], { env });
    expect(yaml.code).toBe(0);
    expect(parseAllDocuments(yaml.stdout)[0]?.toJS()).toMatchObject({
      key: 'nightly-subscription-report',
      timezone: 'Europe/Berlin',
    });
    const store = await openRunStore({ env });
    await store.setScheduleState('nightly-subscription-report', { paused: true, consecutiveFailures: 3 });
    await store.close();
    const resumed = await runCli(['schedules', 'resume', 'nightly-subscription-report', '-o', 'json'], { env });
    expect(JSON.parse(resumed.stdout)).toEqual({
      key: 'nightly-subscription-report',
      resumed: true,
      message: 'Schedule nightly-subscription-report resumed; it fires again at its next fire time.',
    });
  });

  it('run: -o text gives the readable view when standard output is not a terminal; -o yaml the result alone, the log on stderr', async () => {
    const file = join(dir, 'hello.yaml');
    writeFileSync(
      file,
      'name: hello\nsteps:\n  - id: say\n    log: "hello there"\noutputs:\n  said: ${{ steps.say.outputs.message }}\n',
    );
    const text = await runCli(['run', file, ...simulator, '-o', 'text'], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Running hello \(run [0-9a-f-]+\) against the embedded simulator at /);
    expect(text.stdout).toMatch(/INFO  say  hello there\n/);
    expect(text.stdout).toMatch(/\nRun [0-9a-f-]+ succeeded in /);
    const json = await runCli(['run', file, ...simulator], { env });
    expect(JSON.parse(json.stdout.trimEnd().split('\n').at(-1) ?? '')).toMatchObject({
      result: { status: 'succeeded' },
    });
    const yaml = await runCli(['run', file, ...simulator, '-o', 'yaml'], { env });
    expect(yaml.code).toBe(0);
    expect(parseAllDocuments(yaml.stdout)[0]?.toJS()).toMatchObject({
      result: { status: 'succeeded', outputs: { said: 'hello there' } },
    });
    expect(yaml.stderr).toMatch(/INFO  say  hello there\n/);
  });
});
