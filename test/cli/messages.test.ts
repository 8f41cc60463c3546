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
    // After the default subcommand's options too: `--limit 2` is an option and its value, not the typo.
    const afterOptions = await runCli(['runs', '--limit', '2', 'lst'], { env });
    expect(afterOptions.code).toBe(2);
    expect(afterOptions.stderr).toBe(
      "fleetbook: 'lst' is not a command of 'fleetbook runs' (list, show, logs, cancel, prune). Did you mean 'list'?\n",
    );
    const afterJoinedOptions = await runCli(['runs', '-o', 'json', '--limit=2', 'shwo', 'abcd'], { env });
    expect(afterJoinedOptions.stderr).toContain("'shwo' is not a command of 'fleetbook runs'");
    expect(afterJoinedOptions.stderr).toContain("Did you mean 'show'?");
    const schedulesAfterOptions = await runCli(['schedules', '-o', 'json', 'lst'], { env });
    expect(schedulesAfterOptions.code).toBe(2);
    expect(schedulesAfterOptions.stderr).toContain("Did you mean 'list'?");
    // A subcommand written after options is not dispatched by commander: say where it goes.
    const misplaced = await runCli(['runs', '--limit', '2', 'show', 'abcd'], { env });
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toBe(
      "fleetbook: 'show' comes first, before its options: `fleetbook runs show [options]`.\n",
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

describe('steps without an id', () => {
  it('are named in words (kind, place, line) in messages and runs show; the journal keeps their ids', async () => {
    const file = join(dir, 'deliver.yaml');
    writeFileSync(
      file,
      [
        'name: deliver',
        'steps:',
        '  - id: deliver',
        '    block:',
        '      - id: hello',
        '        log: "delivering"',
        '      - fail: "nothing to deliver"',
        '',
      ].join('\n'),
    );
    const run = await runCli(['run', file, '--target', 'simulator', '-o', 'json'], { env });
    expect(run.code).toBe(1);
    const lines = jsonLines(run.stdout);
    const failed = lines.find((line) => line.msg === 'step `fail` (2nd step of `deliver`, line 7) failed');
    // The line keeps the step's key for machines.
    expect(failed).toMatchObject({ path: 'deliver.fail#1.2', level: 50 });
    expect(lines.map((line) => line.msg)).toContain('step deliver failed');
    const error = lines.find(
      (line) => line.event === undefined && typeof line.msg === 'string' && /^run .* failed$/.test(line.msg),
    );
    expect(JSON.stringify(error)).toContain('step `fail` (2nd step of `deliver`, line 7) failed: nothing to deliver');
    expect(run.stdout).not.toMatch(/"msg":"[^"]*fail#1\.2/);
    const runId = String(lines.find((line) => typeof line.runId === 'string')?.runId);
    const shown = await runCli(['runs', 'show', runId], { env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('`fail` (2nd step)');
    expect(shown.stdout).not.toContain('fail#1.2');
    // Machine output keeps the keys a resume and scripts rely on.
    const json = await runCli(['runs', 'show', runId, '-o', 'json'], { env });
    expect(json.stdout).toContain('"path":"deliver.fail#1.2"');
  });
});
