import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, type CliOutcome } from '../support/cli.js';

const fixture = (path: string): string => fileURLToPath(new URL(`../playbooks/${path}`, import.meta.url));

const run = (args: string[]): Promise<CliOutcome> => runCli(['validate', ...args]);

describe('fleetbook validate', () => {
  it('exits 0 for a valid playbook', async () => {
    const result = await run([fixture('valid/rolling-cluster-update.yaml')]);
    expect(result).toMatchObject({ code: 0, stdout: '1 playbook(s) valid\n' });
  });

  it('prints every problem with its location and a code frame, and exits 2', async () => {
    const result = await run([fixture('invalid/kitchen-sink.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      "test/playbooks/invalid/kitchen-sink.yaml:6:11  error  unknown operation 'privateCloud.listSystem'. Did you mean 'privateCloud.listSystems'? Run 'fleetbook actions' to list them.  (UNKNOWN_OPERATION)\n" +
        '  4 | steps:\n' +
        '  5 |   - id: first\n' +
        '> 6 |     call: privateCloud.listSystem\n' +
        '    |           ^\n' +
        '  7 |   - id: first\n',
    );
    expect(result.stdout).toContain('11 error(s), 0 warning(s) in 1 file(s)');
    expect(result.stderr).toBe('');
  });

  it.each([
    ['invalid/alias-cycle.yaml', 'YAML_ALIAS_CYCLE', ':3:31'],
    ['invalid/nesting-too-deep.yaml', 'NESTING_TOO_DEEP', ':19:65'],
    ['invalid/collection-key.yaml', 'YAML_COLLECTION_KEY', ':4:7'],
    ['invalid/alias-limit.yaml', 'YAML_ALIAS_LIMIT', ':2:10'],
  ])('%s: a located %s, exit 2, never an internal error or a Node warning', async (file, code, at) => {
    const warnings: unknown[] = [];
    const onWarning = (warning: unknown): number => warnings.push(warning);
    process.on('warning', onWarning);
    const result = await run([fixture(file)]).finally(() => process.off('warning', onWarning));
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`${file}${at}  error`);
    expect(result.stdout).toContain(`(${code})`);
    expect(result.stderr).toBe('');
    expect(warnings).toEqual([]);
  });

  it('never prints a line of a file that is not a playbook: a .env named by uses, or given itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-validate-env-'));
    writeFileSync(join(dir, '.env'), 'FLEETBOOK_CLIENT_SECRET=s3cr3t-from-env\n');
    writeFileSync(join(dir, 'env.yaml'), 'FLEETBOOK_CLIENT_SECRET=s3cr3t-from-env\n');
    writeFileSync(join(dir, 'parent.yaml'), 'name: parent\nsteps:\n  - uses: ./.env\n  - uses: ./env.yaml\n');
    const result = await run([join(dir, 'parent.yaml'), join(dir, 'env.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('(USES_NOT_ALLOWED)');
    expect(result.stdout).toContain('(NOT_A_PLAYBOOK)');
    expect(result.stdout + result.stderr).not.toContain('s3cr3t');
  });

  it('never prints a line of a YAML file uses: names that is not a playbook (credentials, a compose file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-validate-yml-'));
    writeFileSync(join(dir, 'creds.yml'), 'db:\n  password: s3cr3t-in-yml\n  user: admin\n');
    writeFileSync(
      join(dir, 'compose.yml'),
      'name: web\nservices:\n  web:\n    environment:\n      TOKEN: s3cr3t-compose\n',
    );
    writeFileSync(join(dir, 'parent.yaml'), 'name: parent\nsteps:\n  - uses: ./creds.yml\n  - uses: ./compose.yml\n');
    const result = await run([join(dir, 'parent.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('creds.yml:1:1  error');
    expect(result.stdout).toContain('compose.yml:1:1  error');
    expect(result.stdout.match(/\(NOT_A_PLAYBOOK\)/g)).toHaveLength(2);
    expect(result.stdout + result.stderr).not.toMatch(/s3cr3t|password|TOKEN|services/);
    // A playbook in error is still shown line by line, a misspelt top-level field included.
    writeFileSync(join(dir, 'typo.yaml'), 'name: typo\ninput: {}\nsteps:\n  - log: hi\n');
    const typo = await run([join(dir, 'typo.yaml')]);
    expect(typo.stdout).toContain("unknown field 'input' in the playbook. Did you mean 'inputs'?");
    expect(typo.stdout).toContain('> 2 | input: {}');
  });

  it('lets uses: read a shared folder only when FLEETBOOK_USES_FROM names it, and still only playbook files there', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fleetbook-validate-uses-from-'));
    const [project, shared] = [join(root, 'project'), join(root, 'shared')];
    mkdirSync(project);
    mkdirSync(shared);
    writeFileSync(join(shared, 'greet.yaml'), 'name: greet\nsteps:\n  - log: hello\n');
    writeFileSync(join(shared, '.env'), 'FLEETBOOK_CLIENT_SECRET=s3cr3t-shared\n');
    writeFileSync(join(project, 'main.yaml'), 'name: main\nsteps:\n  - uses: ../shared/greet.yaml\n');
    writeFileSync(join(project, 'env.yaml'), 'name: env\nsteps:\n  - uses: ../shared/.env\n');

    const refused = await run([join(project, 'main.yaml')]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain("is outside the calling playbook's folder");

    const env = { FLEETBOOK_USES_FROM: shared };
    expect(await runCli(['validate', join(project, 'main.yaml')], { env })).toMatchObject({ code: 0 });
    const secret = await runCli(['validate', join(project, 'env.yaml')], { env });
    expect(secret.code).toBe(2);
    expect(secret.stdout).toContain('(USES_NOT_ALLOWED)');
    expect(secret.stdout + secret.stderr).not.toContain('s3cr3t');
  });

  it('refuses /dev/zero at once with exit 2', async () => {
    const result = await run(['/dev/zero']);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('/dev/zero:1:1  error  is not a regular file');
  });

  it('prints JSON problems: a duplicate key named with where it first appeared, and the other problems with it', async () => {
    const result = await run(['--format', 'json', fixture('invalid/duplicate-keys.yaml')]);
    expect(result.code).toBe(2);
    const problems = JSON.parse(result.stdout) as Array<{ code: string; line: number; column: number }>;
    expect(problems[0]).toEqual({
      code: 'YAML_DUPLICATE_KEY',
      message:
        "the key 'name' is written twice in this mapping, first at line 3, column 1: keep one (the later value would silently replace the earlier)",
      severity: 'error',
      file: 'test/playbooks/invalid/duplicate-keys.yaml',
      line: 4,
      column: 1,
      pointer: '/name',
      // A YAML error is a place, not a span: an empty range there (offset 148 is the start of line 4).
      range: { start: { line: 4, column: 1, offset: 148 }, end: { line: 4, column: 1, offset: 148 } },
    });
    expect(problems.map((problem) => [problem.code, problem.line, problem.column])).toEqual([
      ['YAML_DUPLICATE_KEY', 4, 1],
      ['YAML_DUPLICATE_KEY', 6, 35],
      ['YAML_DUPLICATE_KEY', 10, 5],
      ['UNKNOWN_OPERATION', 12, 11],
      ['INVALID_DURATION', 13, 12],
    ]);
  });

  it('points the code frame at the misspelt name inside the expression, not at the start of the string', async () => {
    const result = await run([fixture('invalid/unknown-names.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      "test/playbooks/invalid/unknown-names.yaml:10:44  error  unknown name 'input': an expression here reads inputs, steps, run, env. Did you mean 'inputs'?  (UNKNOWN_NAME)\n" +
        '   8 | steps:\n' +
        '   9 |   - id: first\n' +
        '> 10 |     log: "count ${{ inputs.nope }} and ${{ input.count }}"\n' +
        '     |                                            ^\n',
    );
    expect(result.stderr).toBe('');
  });

  it('prints GitHub annotations', async () => {
    const result = await run(['--format', 'github', fixture('invalid/schedules.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stdout.split('\n')[0]).toBe(
      "::error file=test/playbooks/invalid/schedules.yaml,line=5,col=11,endLine=5,endColumn=23,title=INVALID_CRON::'61 * * * *' is not a cron expression: Constraint error, got value 61 expected range 0-59",
    );
  });

  it('locates files that cannot be read, without a stack trace', async () => {
    const result = await run(['-o', 'json', fixture('no-such-file.yaml'), fixture('valid')]);
    expect(result.code).toBe(2);
    expect(
      (JSON.parse(result.stdout) as Array<{ code: string; line: number }>).map((problem) => [
        problem.code,
        problem.line,
      ]),
    ).toEqual([['FILE_NOT_FOUND', 1]]);
    expect(result.stderr).toBe('');
  });

  it('takes a folder, as daemon and schedules do: each of its playbooks is checked', async () => {
    const valid = await run([fixture('valid')]);
    expect(valid).toMatchObject({ code: 0, stdout: '1 playbook(s) valid\n' });
    const invalid = await run([fixture('invalid')]);
    expect(invalid.code).toBe(2);
    expect(invalid.stdout).toContain('test/playbooks/invalid/kitchen-sink.yaml:6:11  error  unknown operation');
    expect(invalid.stdout).toContain('test/playbooks/invalid/schedules.yaml:5:11  error');
  });

  it('takes the output switch of every command: -o text|json|yaml|github, --json; --format is its older spelling', async () => {
    const file = fixture('invalid/schedules.yaml');
    const json = await run(['-o', 'json', file]);
    const shorthand = await run(['--json', file]);
    const legacy = await run(['--format', 'json', file]);
    expect(json.code).toBe(2);
    expect(shorthand.stdout).toBe(json.stdout);
    expect(legacy.stdout).toBe(json.stdout);
    expect((JSON.parse(json.stdout) as Array<{ code: string }>)[0]?.code).toBe('INVALID_CRON');
    const yaml = await run(['-o', 'yaml', file]);
    expect(yaml.stdout).toMatch(/^---\n- code: INVALID_CRON\n {2}message: /);
    expect((await run(['--output', 'github', file])).stdout).toMatch(
      /^::error file=test\/playbooks\/invalid\/schedules\.yaml,line=5/,
    );
    expect((await run(['-o', 'text', file])).stdout).toContain('schedules.yaml:5:11  error');
  });

  it('refuses an unknown format with exit 2', async () => {
    const result = await run(['--format', 'xml', fixture('valid/rolling-cluster-update.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("argument 'xml' is invalid. Allowed choices are stylish, json, github.");
    const output = await run(['-o', 'jsno', fixture('valid/rolling-cluster-update.yaml')]);
    expect(output.code).toBe(2);
    expect(output.stderr).toBe(
      "fleetbook: --output must be one of text, json, yaml, wide, github, got 'jsno'. Did you mean 'json'?\n",
    );
  });
});
