/**
 * Fuzzing kept in the suite (seeded, about 30 s): mutations of every bundled playbook, mixed
 * with the shapes that once took `fleetbook validate` or the process down (an alias inside
 * the node it names, deep nesting, names every JavaScript object inherits, list or map keys,
 * an anchor used too often, expressions that would allocate gigabytes, files that are not
 * playbooks). Every case is validated in-process: it never throws, each problem is located,
 * it stays within time and memory bounds; a sample goes through the CLI, which exits 0 or 2,
 * never with "internal error".
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadPlaybook, type Problem } from '../../src/playbook/index.js';
import { runCli } from '../support/cli.js';
import { walk, type Json } from '../support/json-walk.js';

const bundledDir = fileURLToPath(new URL('../../playbooks/', import.meta.url));
const BUNDLED = readdirSync(bundledDir)
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => ({ name, data: parse(readFileSync(join(bundledDir, name), 'utf8')) as Json }));

const directory = mkdtempSync(join(tmpdir(), 'fleetbook-fuzz-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const path = fc.array(fc.nat(), { minLength: 1, maxLength: 10 });
const INHERITED = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf'];
const HEAVY_EXPRESSIONS = [
  "$pad('x', 200000000)",
  "$join([1..1e9], ',')",
  '$string([1..10000000])',
  '[1..1e7].($ & $)',
  '$eval($string($))',
  "$replace($pad('', 1e6, 'x'), 'x', $pad('', 1e4))",
];

const dataMutation = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), path }),
  fc.record({
    kind: fc.constant('retype' as const),
    path,
    value: fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.string(),
      fc.array(fc.string(), { maxLength: 3 }),
    ),
  }),
  fc.record({
    kind: fc.constant('expression' as const),
    path,
    text: fc.oneof(fc.constantFrom(...HEAVY_EXPRESSIONS), fc.string({ maxLength: 20 })),
  }),
  fc.record({ kind: fc.constant('inheritedKey' as const), path, key: fc.constantFrom(...INHERITED) }),
  fc.record({ kind: fc.constant('nest' as const), path, depth: fc.integer({ min: 1, max: 400 }) }),
);

/** Shapes written as YAML text (aliases, keys that are collections), added at the end of the document. */
const textShape = fc.oneof(
  fc.constant('extra: &loop [ {log: a}, {block: *loop} ]'),
  fc.constant('steps: &s [ {log: a}, {block: *s} ]'),
  fc
    .integer({ min: 90, max: 400 })
    .map((uses) => `anchor: &a hello\nuses: [${Array.from({ length: uses }, () => '*a').join(', ')}]`),
  fc.constant('? [a, b]\n: 1'),
  fc.constant('? {c: d}\n: 2'),
  fc.integer({ min: 20, max: 5000 }).map((depth) => `deep: ${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.constant('name: &n x\nalias: *n'),
  fc.constant(''),
);

const mutant = fc.record({
  playbook: fc.nat({ max: BUNDLED.length - 1 }),
  changes: fc.array(dataMutation, { minLength: 0, maxLength: 4 }),
  shape: textShape,
  truncateAt: fc.option(fc.nat(), { nil: undefined }),
});
type Mutant = typeof mutant extends fc.Arbitrary<infer M> ? M : never;

function nested(depth: number): Json {
  let value: Json = 'x';
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { v: value };
  return value;
}

function textOf({ playbook, changes, shape, truncateAt }: Mutant): string {
  const data = structuredClone(BUNDLED[playbook]?.data ?? null);
  for (const change of changes) {
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
    else if (change.kind === 'expression') set(`\${{ ${change.text} }}`);
    else if (change.kind === 'nest') set(nested(change.depth));
    else if (!Array.isArray(parent))
      Object.defineProperty(parent, change.key, { value: 1, enumerable: true, configurable: true, writable: true });
  }
  const text = `${stringify(data, { aliasDuplicateObjects: false })}${shape === '' ? '' : `${shape}\n`}`;
  return truncateAt === undefined ? text : text.slice(0, 1 + (truncateAt % Math.max(1, text.length)));
}

let written = 0;
function write(text: string): string {
  written += 1;
  const file = join(directory, `mutant-${written}.yaml`);
  writeFileSync(file, text);
  return file;
}

function expectLocated(problems: readonly Problem[], file: string): void {
  for (const problem of problems) {
    expect(problem.file).toBe(file);
    expect(Number.isInteger(problem.line) && problem.line >= 1, JSON.stringify(problem)).toBe(true);
    expect(Number.isInteger(problem.column) && problem.column >= 1, JSON.stringify(problem)).toBe(true);
    expect(problem.message.length).toBeGreaterThan(0);
  }
}

describe('fuzzed bundled playbooks and hostile shapes', () => {
  it('every case validates in-process without throwing, located, within time and memory bounds', () => {
    const heapBefore = process.memoryUsage().heapUsed;
    let slowest = 0;
    let rejected = 0;
    fc.assert(
      fc.property(mutant, (sample) => {
        const file = write(textOf(sample));
        const started = performance.now();
        const result = loadPlaybook(file);
        slowest = Math.max(slowest, performance.now() - started);
        expectLocated(result.problems, file);
        const errors = result.problems.filter((problem) => problem.severity === 'error');
        if (errors.length > 0) rejected += 1;
        expect(result.playbook === undefined, JSON.stringify(errors.slice(0, 2))).toBe(errors.length > 0);
        for (const problem of result.problems)
          expect(problem.message).not.toMatch(/Maximum call stack|internal error|Cannot read properties/);
      }),
      { numRuns: 500, seed: 15 },
    );
    // Bounds: no case near the validate time a user would notice, no memory kept or grown wild.
    expect(slowest).toBeLessThan(5_000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(512 * 1024 * 1024);
    expect(rejected).toBeGreaterThan(50);
  }, 120_000);

  it('fleetbook validate exits 0 or 2 on a sample, with file:line:col for each problem, never "internal error"', async () => {
    const samples = fc.sample(mutant, { numRuns: 16, seed: 1515 });
    for (const sample of samples) {
      const file = write(textOf(sample));
      const result = await runCli(['validate', file]);
      expect([0, 2], result.stdout + result.stderr).toContain(result.code);
      expect(result.stderr).not.toMatch(/internal error/);
      if (result.code === 2)
        expect(result.stdout).toMatch(
          new RegExp(`${basename(file).replaceAll('.', '\\.')}:[1-9]\\d*:[1-9]\\d*  error  `),
        );
    }
  }, 120_000);

  it.each([
    ['/dev/zero', 'is not a regular file'],
    ['/dev/null', 'is not a regular file'],
  ])('validate %s exits 2 at once', async (file, message) => {
    const result = await runCli(['validate', file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(message);
  });
});
