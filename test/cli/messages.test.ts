/** Messages a new user meets: subcommand and playbook-name typos, input typos, loop tolerance. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-messages-'));
  env = { FLEETBOOK_HOME: join(dir, 'home') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('typos name what was meant', () => {
  it('a misspelt subcommand of runs or schedules is named, not taken as an argument or a file (exit 2)', async () => {
    const runs = await runCli(['runs', 'shwo', 'abcd'], { env });
    expect(runs.code).toBe(2);
    expect(runs.stderr).toBe(
      "fleetbook: 'shwo' is not a command of 'fleetbook runs' (list, show, logs, cancel, prune). Did you mean 'show'?\n",
    );
    const schedules = await runCli(['schedules', 'lst'], { env });
    expect(schedules.code).toBe(2);
    expect(schedules.stderr).toBe(
      "fleetbook: 'lst' is not a command of 'fleetbook schedules' (list, trigger, resume). Did you mean 'list'?\n",
    );
    // The defaults still take what they took.
    expect((await runCli(['runs', '--limit', '1'], { env })).code).toBe(0);
    expect((await runCli(['schedules', 'nightly-report-export', '-o', 'json'], { env })).code).toBe(0);
  });

  it('a misspelt bundled playbook name is suggested, with the bundled names', async () => {
    const { code, stderr } = await runCli(['run', 'rolling-cluster-updat', '--target', 'simulator'], { env });
    expect(code).toBe(2);
    expect(stderr).toContain(
      "no bundled playbook 'rolling-cluster-updat' (nor a file: a path needs a '/' or a .yaml ending). Did you mean 'rolling-cluster-update'? Bundled: canary-rolling-update, consumption-report-download, ",
    );
    expect(stderr).toContain('(FILE_NOT_FOUND)');
  });

  it('-i maxParalel=3 names the input meant; -i recipients=a@b says how to write a list', async () => {
    const input = await runCli(['run', 'rolling-cluster-update', '-i', 'maxParalel=3', '--target', 'simulator'], {
      env,
    });
    expect(input.code).toBe(2);
    expect(input.stderr).toContain(
      "unknown input 'maxParalel': did you mean 'maxParallelSystems'? (it takes: catalogVersion, ",
    );
    const list = await runCli(
      ['run', 'nightly-report-export', '-i', 'recipients=a@example.com,b@example.com', '--target', 'simulator'],
      { env },
    );
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(
      `input 'recipients' must be array (declared array, got "a@example.com,b@example.com"); a list is written as JSON: -i 'recipients=["a@example.com","b@example.com"]'`,
    );
  });
});

describe('loop tolerance', () => {
  it('says "1 failed item exceeds the tolerance of 0"', async () => {
    const file = join(dir, 'loop.yaml');
    writeFileSync(
      file,
      'name: loop\nsteps:\n  - id: items\n    forEach: "${{ [1, 2, 3] }}"\n    as: n\n    tolerate: { failures: 0 }\n    steps:\n      - id: check\n        fail: "item ${{ n }} is bad"\n',
    );
    const { code, stdout } = await runCli(['run', file, '--target', 'simulator', '-o', 'json'], { env });
    expect(code).toBe(1);
    expect(jsonLines(stdout).map((line) => line.msg)).toContain(
      'forEach items: 1 failed item exceeds the tolerance of 0; no new item starts',
    );
  });
});
