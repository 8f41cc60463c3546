import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../../src/openapi/description.js';
import { loadPlaybook } from '../../src/playbook/index.js';
import type { ForEachStep } from '../../src/steps/index.js';
import { playbookSchemaText } from '../../src/playbook/playbook-schema.js';
import { createStepRegistry } from '../../src/steps/registry.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const yamlIn = (folder: string): string[] =>
  readdirSync(join(here, folder))
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => join(here, folder, name));

const scratch = mkdtempSync(join(tmpdir(), 'fleetbook-loader-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('valid playbooks', () => {
  it.each(yamlIn('valid'))('%s loads with no problem', (file) => {
    const { playbook, problems } = loadPlaybook(file);
    expect(problems).toEqual([]);
    expect(playbook?.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('invalid playbooks', () => {
  it.each(yamlIn('invalid'))('%s reports exactly its expected problems', async (file) => {
    const { playbook, problems } = loadPlaybook(file);
    expect(playbook).toBeUndefined();
    const text = problems
      .map((p) => `${relative(root, p.file)}:${p.line}:${p.column} ${p.severity} ${p.code} ${p.pointer} ${p.message}`)
      .join('\n');
    await expect(`${text}\n`).toMatchFileSnapshot(join(here, 'invalid', `${basename(file, '.yaml')}.expected.txt`));
  });
});

describe('step examples', () => {
  const examples = createStepRegistry()
    .list()
    .flatMap((definition) =>
      definition.examples.map((example) => [definition.kind, example.description, example.yaml] as const),
    );
  it.each(examples)('%s: %s', (kind, _description, yaml) => {
    const file = join(scratch, `${kind}-${examples.findIndex((entry) => entry[2] === yaml)}.yaml`);
    writeFileSync(file, yaml);
    expect(loadPlaybook(file).problems).toEqual([]);
  });
});

describe('normalised playbook', () => {
  it('converts durations, merges retry defaults and compiles expressions', async () => {
    const { playbook } = loadPlaybook(join(here, 'valid', 'rolling-cluster-update.yaml'));
    expect(playbook?.defaults).toMatchObject({
      timeoutMs: 14_400_000,
      retry: { maxAttempts: 3, initialDelayMs: 2000, maxDelayMs: 60_000, on: ['transient'] },
    });
    const loop = playbook?.steps[1] as ForEachStep | undefined;
    expect(loop?.kind).toBe('forEach');
    if (loop?.kind !== 'forEach') return;
    expect(loop.as).toBe('system');
    const update = loop.steps[1];
    expect(update).toMatchObject({
      kind: 'call',
      operationId: 'privateCloud.runSoftwareUpdate',
      wait: { timeoutMs: 21_600_000 },
    });
    expect(update?.rescue?.[0]?.retry.maxAttempts).toBe(2);
    expect(
      await loop.concurrency.evaluate({
        inputs: { maxParallelSystems: 4 },
        steps: {},
        env: {},
        run: { id: 'r', playbook: 'p', dryRun: false, startedAt: '' },
      }),
    ).toBe(4);
    expect(playbook?.schedules[0]).toMatchObject({
      cron: '0 2 * * SAT',
      timezone: 'Europe/Berlin',
      overlap: 'skip',
      catchUp: 'last',
      enabled: true,
    });
  });

  it('reads `window:` and `freeze:` of the playbook and of a schedule (its timezone the default)', () => {
    const { playbook } = loadPlaybook(join(here, 'windows', 'windowed-update.yaml'));
    expect(playbook?.window).toEqual({
      timezone: 'Europe/Berlin',
      weekly: [
        { days: ['sat', 'sun'], from: '01:00', to: '06:00' },
        { days: ['fri'], from: '22:00', to: '02:00' },
      ],
      onClose: 'wait',
    });
    expect(playbook?.freeze).toEqual([
      { from: '2026-12-20', to: '2027-01-03', reason: 'year-end freeze', timezone: 'Europe/Berlin' },
    ]);
    expect(playbook?.schedules[0]).toMatchObject({
      window: { timezone: 'Europe/Berlin', weekly: [{ days: ['sat'], from: '01:00', to: '03:30' }], onClose: 'fail' },
      freeze: [],
    });
  });

  it('loads `uses` recursively and refuses a cycle', () => {
    const dir = join(scratch, 'uses');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'child.yaml'),
      'name: child\ninputs:\n  who: { type: string }\nsteps:\n  - log: "hi ${{ inputs.who }}"\n',
    );
    writeFileSync(
      join(dir, 'parent.yaml'),
      'name: parent\nsteps:\n  - id: greet\n    uses: ./child.yaml\n    with: { who: me }\n',
    );
    const { playbook, problems } = loadPlaybook(join(dir, 'parent.yaml'));
    expect(problems).toEqual([]);
    expect(playbook?.steps[0]).toMatchObject({
      kind: 'uses',
      playbookRef: './child.yaml',
      playbook: { name: 'child' },
    });
    writeFileSync(join(dir, 'a.yaml'), 'name: a\nsteps:\n  - uses: ./b.yaml\n');
    writeFileSync(join(dir, 'b.yaml'), 'name: b\nsteps:\n  - uses: ./a.yaml\n');
    expect(loadPlaybook(join(dir, 'a.yaml')).problems.map((problem) => problem.code)).toContain('USES_CYCLE');
  });

  it("`uses` reads only .yaml/.yml files in the calling playbook's folder (or under it), the bundled ones, or an allowed folder", () => {
    const outside = join(scratch, 'outside');
    const dir = join(scratch, 'confined');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'shared.yaml'), 'name: shared\nsteps:\n  - log: hi\n');
    writeFileSync(join(dir, '.env'), 'FLEETBOOK_CLIENT_SECRET=s3cr3t-value\n');
    writeFileSync(join(dir, 'sub', 'child.yaml'), 'name: child\nsteps:\n  - log: hi\n');
    symlinkSync(join(outside, 'shared.yaml'), join(dir, 'link.yaml'));
    const uses = (ref: string): string => {
      writeFileSync(join(dir, 'parent.yaml'), `name: parent\nsteps:\n  - uses: ${ref}\n`);
      return loadPlaybook(join(dir, 'parent.yaml'))
        .problems.map((problem) => `${problem.code} ${problem.message}`)
        .join('\n');
    };
    expect(uses('./sub/child.yaml')).toBe('');
    expect(uses('device-onboarding')).not.toContain('USES_NOT_ALLOWED');
    expect(uses('device-onboarding')).toContain('INVALID_USES_INPUTS');
    expect(uses('./.env')).toMatch(/^USES_NOT_ALLOWED '\.\/\.env' is not a playbook file/);
    expect(uses('/dev/zero')).toMatch(/^USES_NOT_ALLOWED/);
    expect(uses('../outside/shared.yaml')).toMatch(
      /^USES_NOT_ALLOWED '\.\.\/outside\/shared\.yaml' is outside the calling playbook's folder/,
    );
    expect(uses('./link.yaml')).toMatch(/^USES_NOT_ALLOWED/);
    expect(uses('/etc/passwd.yaml')).toMatch(/^USES_NOT_ALLOWED/);
    for (const ref of ['./.env', '../outside/shared.yaml']) expect(uses(ref)).not.toContain('s3cr3t');
    writeFileSync(join(dir, 'parent.yaml'), 'name: parent\nsteps:\n  - uses: ../outside/shared.yaml\n');
    expect(loadPlaybook(join(dir, 'parent.yaml'), { usesFrom: [outside] }).problems).toEqual([]);
  });

  it('refuses a device or a FIFO before reading it, and reads no more than the cap', () => {
    expect(loadPlaybook('/dev/zero').problems).toEqual([
      expect.objectContaining({
        code: 'NOT_A_FILE',
        message: expect.stringContaining('not a regular file') as unknown,
      }),
    ]);
    const fifo = join(scratch, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(loadPlaybook(fifo).problems[0]?.code).toBe('NOT_A_FILE');
    writeFileSync(join(scratch, 'big.yaml'), 'x'.repeat(2000));
    expect(loadPlaybook(join(scratch, 'big.yaml'), { maxBytes: 1000 }).problems[0]?.code).toBe('FILE_TOO_LARGE');
  });

  it('refuses alias bombs and files that are not text', () => {
    const bomb = [
      'name: bomb',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 6 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(', ')}]`,
      ),
      'steps: []',
    ].join('\n');
    writeFileSync(join(scratch, 'bomb.yaml'), bomb);
    expect(loadPlaybook(join(scratch, 'bomb.yaml')).problems[0]?.code).toBe('YAML_ALIAS_LIMIT');
    writeFileSync(join(scratch, 'binary.yaml'), Buffer.from([0x6e, 0x61, 0x00, 0x01]));
    expect(loadPlaybook(join(scratch, 'binary.yaml')).problems[0]?.code).toBe('NOT_TEXT');
    writeFileSync(join(scratch, 'latin1.yaml'), Buffer.from('name: caf\xe9\n', 'latin1'));
    expect(loadPlaybook(join(scratch, 'latin1.yaml')).problems[0]).toMatchObject({
      code: 'INVALID_UTF8',
      line: 1,
      column: 10,
    });
    expect(loadPlaybook(scratch).problems[0]?.code).toBe('NOT_A_FILE');
    expect(loadPlaybook(join(scratch, 'missing.yaml')).problems[0]?.code).toBe('FILE_NOT_FOUND');
  });
});

describe('schemas/playbook.schema.json', () => {
  it('is what `npm run generate:schema` writes (run it after changing a step kind or an operation)', () => {
    const committed = readFileSync(join(root, 'schemas', 'playbook.schema.json'), 'utf8');
    expect(committed === playbookSchemaText(createStepRegistry(), loadPlatformDescription())).toBe(true);
  });
});

describe('YAML slips a person makes, explained once with the fix', () => {
  const problemsOf = (name: string, text: string) => {
    writeFileSync(join(scratch, name), text);
    return loadPlaybook(join(scratch, name)).problems.map(({ code, message, line, column }) => ({
      code,
      message,
      line,
      column,
    }));
  };

  it('an unquoted ${{ a ? b : c }} is one problem saying to quote the whole value, not a cascade of parser errors', () => {
    const problems = problemsOf(
      'ternary.yaml',
      'name: t\ninputs:\n  n: { type: number, default: 1 }\nsteps:\n  - id: one\n    log: ${{ inputs.n > 1 ? "many" : "one" }}\n',
    );
    expect(problems).toEqual([
      {
        code: 'YAML_UNQUOTED_EXPRESSION',
        message: `this \${{ }} is not quoted, so YAML reads its ': ', '{' and '}' as structure rather than text: quote the whole value, e.g. '\${{ inputs.n > 1 ? "many" : "one" }}'`,
        line: 6,
        column: 10,
      },
    ]);
  });

  it('a list item indented one space too far is one problem naming both columns, not "Sequence item without - indicator"', () => {
    const problems = problemsOf(
      'indent.yaml',
      'name: a\nsteps:\n  - id: one\n    log: "x"\n   - id: two\n    log: "y"\n',
    );
    expect(problems).toEqual([
      {
        code: 'YAML_BAD_INDENT',
        message:
          'All sequence items must start at the same column. Check the indentation: this line starts at column 4, the list item on line 3 at column 3; items of one list, and keys of one mapping, start at the same column.',
        line: 5,
        column: 4,
      },
    ]);
  });
});
