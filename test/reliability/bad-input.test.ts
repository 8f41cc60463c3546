/**
 * Bad input never crashes: mutated playbooks (keys deleted, values of the wrong type, random
 * text in expressions, truncated YAML) and random expressions, generated with fast-check.
 * Every rejection is located (line and column from 1), `fleetbook validate` exits 2, and
 * oversized, deeply nested and alias-bomb documents are refused cleanly.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { isExpressionError, tryCompileTemplate, type ExpressionContext } from '../../src/expressions/index.js';
import { loadPlaybook, type Problem } from '../../src/playbook/index.js';
import { runCli, type CliOutcome } from '../support/cli.js';
import { FIXTURES } from './harness.js';
import { walk, type Json } from '../support/json-walk.js';

const directory = mkdtempSync(join(tmpdir(), 'fleetbook-bad-input-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const VALID_TEXT = readFileSync(join(FIXTURES, 'rolling-update.yaml'), 'utf8');
const VALID = parse(VALID_TEXT) as unknown;

let written = 0;
function writePlaybook(text: string): string {
  written += 1;
  const file = join(directory, `mutant-${written}.yaml`);
  writeFileSync(file, text);
  return file;
}

const validate = (...files: string[]): Promise<CliOutcome> => runCli(['validate', ...files]);

/** Every problem names the file and a position from 1:1. */
function expectLocated(problems: readonly Problem[], file: string): void {
  for (const problem of problems) {
    expect(problem.file).toBe(file);
    expect(problem.line).toBeGreaterThanOrEqual(1);
    expect(problem.column).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(problem.line) && Number.isInteger(problem.column)).toBe(true);
    expect(problem.message.length).toBeGreaterThan(0);
  }
}

const wrongValue = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.string(),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 3 }),
);
/** Text that looks like an expression, more often broken than not. */
const expressionText = fc.oneof(
  fc.string(),
  fc
    .array(
      fc.constantFrom(
        'steps',
        '.',
        'inputs',
        '$',
        '(',
        ')',
        '[',
        ']',
        '{',
        '}',
        '"',
        "'",
        '&',
        '+',
        ' ',
        'and',
        '$count',
        '?',
        ':',
        '1',
        ',',
        '`',
        '~>',
        '$$',
        'function',
        '}}',
        '${{',
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.join('')),
);

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), path: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }) }),
  fc.record({
    kind: fc.constant('retype' as const),
    path: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
    value: wrongValue,
  }),
  fc.record({
    kind: fc.constant('expression' as const),
    path: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
    text: expressionText,
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

/** The valid playbook's text with some mutations applied. */
function mutate(mutations: readonly Mutation[]): string {
  const data = structuredClone(VALID) as Json;
  let truncateAt: number | undefined;
  for (const change of mutations) {
    if (change.kind === 'truncate') {
      truncateAt = change.at;
      continue;
    }
    const target = walk(data, change.path);
    if (!target) continue;
    const { parent, key } = target;
    const set = (value: Json): void => {
      if (Array.isArray(parent)) parent[key as number] = value;
      else parent[key as string] = value;
    };
    if (change.kind === 'delete') {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
    } else if (change.kind === 'retype') set(change.value);
    else set(`\${{ ${change.text} }}`);
  }
  const text = stringify(data);
  return truncateAt === undefined ? text : text.slice(0, 1 + (truncateAt % Math.max(1, text.length)));
}

describe('mutated playbooks', () => {
  it('the fixture itself is valid (the mutations start from a playbook that loads)', () => {
    const file = writePlaybook(stringify(VALID));
    expect(loadPlaybook(file).problems).toEqual([]);
  });

  it('never throw; every problem is located; a rejected playbook has no playbook object', () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        const file = writePlaybook(mutate(mutations));
        const result = loadPlaybook(file);
        expectLocated(result.problems, file);
        const errors = result.problems.filter((problem) => problem.severity === 'error');
        if (errors.length > 0) expect(result.playbook).toBeUndefined();
        else expect(result.playbook).toBeDefined();
      }),
      { numRuns: 250, seed: 8 },
    );
  });

  it('fleetbook validate exits 2 on rejected samples, printing file:line:col for each problem', async () => {
    const samples = fc.sample(fc.array(mutation, { minLength: 1, maxLength: 4 }), { numRuns: 60, seed: 88 });
    const rejected = samples
      .map(mutate)
      .map(writePlaybook)
      .filter((file) => loadPlaybook(file).problems.some((problem) => problem.severity === 'error'));
    expect(rejected.length).toBeGreaterThanOrEqual(10);
    for (const file of rejected.slice(0, 12)) {
      const result = await validate(file);
      expect(result.code, result.stdout + result.stderr).toBe(2);
      // Paths are shown relative to the working directory: match the file's name.
      expect(result.stdout).toMatch(
        new RegExp(`${basename(file).replaceAll('.', '\\.')}:[1-9]\\d*:[1-9]\\d*  error  `),
      );
      expect(result.stderr).not.toMatch(/internal error|at .*\.ts:\d+/);
    }
  });
});

describe('random expressions', () => {
  const context: ExpressionContext = {
    inputs: { catalogVersion: '2.4.0', ids: ['a', 'b'] },
    steps: { catalog: { status: 'succeeded', outputs: { body: { items: [{ version: '2.4.0' }] } } } },
    run: { id: 'run-1', playbook: 'fuzz', dryRun: false, startedAt: '2024-01-01T00:00:00Z' },
    env: {},
  };

  it('compile or are refused with a position inside the expression; evaluation fails only with an ExpressionError', async () => {
    await fc.assert(
      fc.asyncProperty(expressionText, async (text) => {
        const value = `\${{ ${text} }}`;
        const { template, errors } = tryCompileTemplate(value, { pointer: '/steps/0/set/v', stepId: 'fuzz' });
        for (const error of errors) {
          expect(isExpressionError(error)).toBe(true);
          expect(error.offsetInValue).toBeGreaterThanOrEqual(0);
          expect(error.offsetInValue).toBeLessThanOrEqual(value.length);
        }
        if (!template) return;
        await template.evaluate(context).then(
          () => undefined,
          (error: unknown) => expect(isExpressionError(error), String(error)).toBe(true),
        );
      }),
      { numRuns: 400, seed: 8 },
    );
  });
});

describe('hostile documents', () => {
  it('a 10 MB playbook is refused before parsing, exit 2', async () => {
    const file = writePlaybook(`name: big\nsteps:\n  - id: a\n    set:\n      v: "${'x'.repeat(10 * 1024 * 1024)}"\n`);
    const result = loadPlaybook(file);
    expect(result.problems).toMatchObject([{ code: 'FILE_TOO_LARGE', line: 1, column: 1 }]);
    const cli = await validate(file);
    expect(cli.code).toBe(2);
    expect(cli.stdout).toMatch(/is 10485\d+ bytes; a playbook may have at most 1048576/);
  });

  it.each([
    ['sequences', '['.repeat(10_000) + ']'.repeat(10_000)],
    ['mappings', '{a: '.repeat(10_000) + '1' + '}'.repeat(10_000)],
  ])('10,000 levels of nested %s are refused with a located problem, exit 2', async (_kind, value) => {
    const file = writePlaybook(`name: deep\nsteps:\n  - id: a\n    set:\n      v: ${value}\n`);
    const result = loadPlaybook(file);
    expect(result.playbook).toBeUndefined();
    expect(result.problems.length).toBeGreaterThan(0);
    expectLocated(result.problems, file);
    expect(result.problems[0]?.line).toBe(5);
    expect((await validate(file)).code).toBe(2);
  });

  it('a YAML alias bomb ("billion laughs") is refused, exit 2', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [index, name] of [...'bcdefghi'].entries()) {
      const previous = 'abcdefghi'[index];
      levels.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${previous}`).join(',')}]`);
    }
    const file = writePlaybook(
      `name: bomb\nsteps:\n  - id: a\n    set:\n${levels.map((line) => `      ${line}`).join('\n')}\n`,
    );
    const startedAt = Date.now();
    const result = loadPlaybook(file);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(result.problems).toMatchObject([{ code: 'YAML_ALIAS_LIMIT', severity: 'error' }]);
    expectLocated(result.problems, file);
    const cli = await validate(file);
    expect(cli.code).toBe(2);
    expect(cli.stdout).toContain('aliases');
  });
});
