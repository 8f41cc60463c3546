/**
 * The four mistakes typed outputs exist to catch, each refused by `fleetbook validate` with the
 * place of the offending name in the `${{ }}` and a suggestion; `-o json` gives the pointer and
 * the exact range for an editor to underline.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../playbooks/invalid/${name}.yaml`, import.meta.url));

describe('fleetbook validate: typed step outputs', () => {
  it.each([
    [
      'typed-loop-item-path',
      '12:35',
      'UNKNOWN_PATH_FIELD',
      "`steps.work` has no field 'steps'",
      'Did you mean `steps.work.outputs.items.steps.after.outputs.body.name`?',
      '   |                                   ^',
    ],
    [
      'typed-misspelt-field',
      '8:71',
      'UNKNOWN_PATH_FIELD',
      "`steps.before.outputs.body.softwareInfo` has no field 'hypervisorCluster'",
      'Did you mean `steps.before.outputs.body.softwareInfo.hypervisorClusters`?',
      '  |                                                                       ^',
    ],
    [
      'typed-wrong-operation',
      '11:50',
      'UNKNOWN_PATH_FIELD',
      "`steps.catalogs.outputs.body` has no field 'softwareInfo': its fields are items, count, total.",
      "Did you mean `steps.system.outputs.body.softwareInfo.currentUpdateStatus`? That field is in what step 'system' returns.",
      '   |                                                  ^',
    ],
    [
      'typed-step-before-it-ran',
      '12:36',
      'STEP_NOT_YET_RUN',
      "step 'precheck' has not run at this point",
      'read it after the loop as `steps.work.outputs.items.steps.precheck.outputs.body.name`',
      '   |                                    ^',
    ],
  ])('%s: refused at %s (%s) with a suggestion', async (name, at, code, what, hint, caret) => {
    const result = await runCli(['validate', fixture(name)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`${name}.yaml:${at}  error  ${what}`);
    expect(result.stdout).toContain(hint);
    expect(result.stdout).toContain(`(${code})`);
    expect(result.stdout).toContain(caret);
    expect(result.stdout).toContain('1 error(s), 0 warning(s) in 1 file(s)');
  });

  it('-o json carries the JSON pointer and the range of the misspelt name', async () => {
    const result = await runCli(['validate', '-o', 'json', fixture('typed-misspelt-field')]);
    expect(result.code).toBe(2);
    const [problem] = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    const start = { line: 8, column: 71 };
    expect(problem).toMatchObject({
      code: 'UNKNOWN_PATH_FIELD',
      pointer: '/steps/1/log',
      line: 8,
      column: 71,
      range: { start, end: { line: 8, column: 71 + 'hypervisorCluster'.length } },
    });
    const { range } = problem as { range: { start: { offset: number }; end: { offset: number } } };
    const text = readFileSync(fixture('typed-misspelt-field'), 'utf8');
    expect(text.slice(range.start.offset, range.end.offset)).toBe('hypervisorCluster');
  });

  it('--format json (the older spelling) gives the same', async () => {
    const [asked, older] = await Promise.all([
      runCli(['validate', '-o', 'json', fixture('typed-loop-item-path')]),
      runCli(['validate', '--format', 'json', fixture('typed-loop-item-path')]),
    ]);
    expect(older.stdout).toBe(asked.stdout);
    expect(JSON.parse(older.stdout)).toMatchObject([
      { pointer: '/steps/1/log', range: { start: { line: 12, column: 35 } } },
    ]);
  });
});
