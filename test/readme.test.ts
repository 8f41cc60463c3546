/**
 * The README is a newcomer's first contact: its commands must exist and do what the text
 * says, its example playbook and snippets must be valid, and the error it shows must be the
 * one the command prints. The commands are taken from the README itself and run with the
 * built CLI (`npm test` builds before the tests), from the folder holding `first.yaml`, as a
 * newcomer would type them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../src/playbook/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};
const BIN = resolve(import.meta.dirname, '../bin/fleetbook.js');
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-readme-'));
const home = join(dir, 'home');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first fenced block (of `lang`, '' for a plain one) after `marker` in the README. */
function blockAfter(marker: string, lang: string): string {
  const at = readme.indexOf(marker);
  if (at === -1) throw new Error(`README has no '${marker}'`);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(at));
  if (!block?.[1]) throw new Error(`README has no \`\`\`${lang} block after '${marker}'`);
  return block[1];
}

/** The `npx fleetbook ...` lines of a sh block, as argument lists (comments dropped). */
function fleetbookCommands(block: string): string[][] {
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npx fleetbook '))
    .map((line) => line.slice('npx fleetbook '.length).split(/\s+/));
}

interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function fleetbook(args: string[]): Promise<CliOutcome> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      cwd: dir,
      env: { ...process.env, FLEETBOOK_HOME: home },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

/** The `result` line of a run's JSON-lines output. */
function resultOf(stdout: string): { runId: string; status: string; outputs?: { updatable?: string[] } } | undefined {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map(
      (line) => JSON.parse(line) as { result?: { runId: string; status: string; outputs?: { updatable?: string[] } } },
    )
    .find((line) => line.result)?.result;
}

const firstPlaybook = blockAfter('Save this as `first.yaml`', 'yaml');
const tourCommands = fleetbookCommands(blockAfter('Check it, rehearse it, run it:', 'sh'));

describe('README', () => {
  it('gives the two set-up commands, and package.json has them', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
    expect(packageJson.scripts.start).toContain('demo');
    expect(packageJson.scripts.test).toContain('vitest run');
  });

  it('shows the validation error the CLI prints for a misspelt operation, with exit code 2', async () => {
    const shown = blockAfter('exit code 2, before any request is sent:', '');
    const typo = firstPlaybook.replace('call: privateCloud.listSystems', 'call: privateCloud.listSystem');
    expect(typo).not.toBe(firstPlaybook);
    writeFileSync(join(dir, 'first.yaml'), typo);
    const validate = tourCommands.find((args) => args[0] === 'validate');
    expect(validate).toEqual(['validate', 'first.yaml']);
    const { code, stdout, stderr } = await fleetbook(validate as string[]);
    expect(code, stderr).toBe(2);
    // Every line the README shows, in order, at the start of what the command prints.
    const printed = (stdout + stderr).split('\n');
    const lines = shown.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^first\.yaml:8:11 +error +unknown operation .*\(UNKNOWN_OPERATION\)$/);
    expect(printed.slice(0, lines.length)).toEqual(lines);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('runs the tour: validate, dry-run, run, runs list, runs show, runs logs', async () => {
    writeFileSync(join(dir, 'first.yaml'), firstPlaybook);
    expect(loadPlaybook(join(dir, 'first.yaml')).problems).toEqual([]);
    expect(tourCommands.map((args) => args.slice(0, 2).join(' '))).toEqual([
      'validate first.yaml',
      'run first.yaml',
      'run first.yaml',
      'runs list',
      'runs show',
      'runs logs',
    ]);
    const [validate, dryRun, run, list, show, logs] = tourCommands as [
      string[],
      string[],
      string[],
      string[],
      string[],
      string[],
    ];

    const valid = await fleetbook(validate);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);

    expect(dryRun).toEqual(['run', 'first.yaml', '--target', 'simulator', '--dry-run']);
    const rehearsed = await fleetbook([...dryRun, '--json']);
    expect(rehearsed.code, rehearsed.stderr).toBe(0);
    const rehearsal = resultOf(rehearsed.stdout);
    // Reads happen in a dry run: the systems of the default region were listed.
    expect(rehearsal?.status).toBe('succeeded');
    expect(rehearsal?.outputs?.updatable?.length).toBeGreaterThan(0);

    expect(run).toContain('-i');
    const ran = await fleetbook([...run, '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const result = resultOf(ran.stdout);
    expect(result?.status).toBe('succeeded');
    expect(result?.outputs?.updatable?.length).toBeGreaterThan(0);

    // The history shows both runs, the rehearsal marked as such.
    const history = await fleetbook(list);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(new RegExp(`${result?.runId ?? '-'}\\s+first\\s+succeeded`));
    expect(history.stdout).toMatch(
      new RegExp(`${rehearsal?.runId ?? '-'}\\s+first\\s+succeeded.*manual \\(dry run\\)`),
    );

    expect(show).toEqual(['runs', 'show', '<runId>']);
    const shown = await fleetbook(['runs', 'show', result?.runId ?? '']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`Run ${result?.runId ?? ''}  first  succeeded`);
    expect(shown.stdout).toContain('inputs: region="us-west"');
    expect(shown.stdout).toMatch(/\nsystems\s+succeeded\s+1\s+\d+ms/);
    expect(shown.stdout).toMatch(/\noutputs:\n {2}updatable:\n/);

    expect(logs).toEqual(['runs', 'logs', '<runId>', '--step', 'systems']);
    const logged = await fleetbook(['runs', 'logs', result?.runId ?? '', '--step', 'systems']);
    expect(logged.code, logged.stderr).toBe(0);
    expect(logged.stdout).toMatch(/^\d\d:\d\d:\d\d {2}systems {2}started \(call\)\n/);
    expect(logged.stdout).toMatch(/ {2}systems {2}succeeded\n$/);
  });

  it("dry-runs a bundled playbook by name against the simulator, as 'Bundled playbooks' shows", async () => {
    const [dryRun] = fleetbookCommands(blockAfter('Run one by name', 'sh'));
    expect(dryRun).toEqual(['run', 'rolling-cluster-update', '--target', 'simulator', '--dry-run']);
    const { code, stdout, stderr } = await fleetbook([...(dryRun as string[]), '--json']);
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"result"')) ?? '{}') as {
      result?: { status: string; simulatedSteps: string[] };
    };
    expect(result.result?.status).toBe('succeeded');
    // The updates were printed, not sent.
    expect(result.result?.simulatedSteps.length).toBeGreaterThan(0);
  });

  it("validates the 'Schedule it' snippet as part of the first playbook", () => {
    const schedules = blockAfter('### Schedule it', 'yaml');
    expect(schedules).toMatch(/^schedules:\n/);
    // The snippet gives the runs `recipients`: the playbook declares it.
    const playbook = firstPlaybook.replace(
      /^inputs:\n/m,
      'inputs:\n  recipients: { type: array, items: { type: string }, default: [], description: "who gets the list" }\n',
    );
    const file = join(dir, 'scheduled.yaml');
    writeFileSync(file, `${playbook}${schedules}`);
    const loaded = loadPlaybook(file);
    expect(loaded.problems).toEqual([]);
    expect(loaded.playbook?.schedules).toMatchObject([
      { key: 'nightly', cron: '30 1 * * *', timezone: 'Europe/Berlin', overlap: 'skip', catchUp: 'last' },
    ]);
  });
});
