/**
 * Expressions cannot reach the process: no `require`, `process`, `globalThis`, no escape
 * through `constructor` chains or `$eval`, and no prototype pollution through `set` or
 * expression results. Each attempt fails with an ExpressionError or yields nothing harmful,
 * and `Object.prototype` is untouched afterwards.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isExpressionError, tryCompileTemplate, type ExpressionContext } from '../../src/expressions/index.js';
import { loadPlaybook } from '../../src/playbook/index.js';
import { startReliabilityHarness, type ReliabilityHarness } from './harness.js';

const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
const functionPrototypeBefore = Object.getOwnPropertyNames(Function.prototype).sort();
const directory = mkdtempSync(join(tmpdir(), 'fleetbook-sandbox-'));
let harness: ReliabilityHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
  expect(Object.getOwnPropertyNames(Function.prototype).sort()).toEqual(functionPrototypeBefore);
});

/** Nothing was added to the prototypes every object and function share. */
function expectPrototypesUntouched(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
  expect(Object.getOwnPropertyNames(Function.prototype).sort()).toEqual(functionPrototypeBefore);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

const context: ExpressionContext = {
  inputs: { name: 'x', list: [1, 2] },
  steps: {},
  run: { id: 'run-1', playbook: 'sandbox', dryRun: false, startedAt: '2024-01-01T00:00:00Z' },
  env: {},
};

/** What an expression came to: a value (plain JSON), or the ExpressionError it failed with. */
async function outcome(expression: string): Promise<{ value?: unknown; error?: string }> {
  const { template, errors } = tryCompileTemplate(`\${{ ${expression} }}`, { pointer: '/steps/0/set/v' });
  if (!template) {
    expect(errors.every(isExpressionError)).toBe(true);
    return { error: errors[0]?.code };
  }
  try {
    return { value: await template.evaluate(context) };
  } catch (error) {
    expect(isExpressionError(error), String(error)).toBe(true);
    return { error: (error as { code: string }).code };
  }
}

const PROCESS_ESCAPES = [
  "require('child_process')",
  "$require('fs')",
  'process',
  '$process.env',
  'process.mainModule',
  'globalThis',
  '$globalThis.process',
  'global',
  'this',
  'constructor',
  '$string.constructor',
  "$string.constructor('return process')()",
  "inputs.name.constructor.constructor('return process')()",
  "(function($x){ $x.constructor })('a')",
  "$eval('process')",
  '$eval(\'$string.constructor("return process")()\')',
  '$eval("require(\'fs\')")',
  'inputs.__proto__',
  "$lookup(inputs, '__proto__')",
  "$lookup(inputs, 'constructor')",
  '$keys(inputs.__proto__)',
  '$now.constructor',
  "$lookup($, 'constructor')",
];

describe('expressions cannot reach the process', () => {
  it.each(PROCESS_ESCAPES)('%s fails cleanly or yields no value', async (expression) => {
    const result = await outcome(expression);
    if (result.error === undefined) expect(result.value).toBeUndefined();
    else expect(result.error).toMatch(/^EXPRESSION_(PARSE|EVALUATION)$/);
    expectPrototypesUntouched();
  });

  it('a function value never leaves the expression layer', async () => {
    expect(await outcome('$string')).toEqual({ error: 'EXPRESSION_EVALUATION' });
    expect(await outcome('{"f": function($x){ $x }}')).toEqual({ error: 'EXPRESSION_EVALUATION' });
  });
});

describe('no prototype pollution', () => {
  it.each([
    "{'__proto__': {'polluted': true}}",
    "{'constructor': {'prototype': {'polluted': true}}}",
    "$merge([{}, {'__proto__': {'polluted': true}}])",
    "$spread({'__proto__': {'polluted': true}})",
    "[{'prototype': {'polluted': true}}]",
  ])('the expression %s is refused', async (expression) => {
    expect(await outcome(expression)).toEqual({ error: 'EXPRESSION_EVALUATION' });
    expectPrototypesUntouched();
  });

  it.each([
    ['__proto__', '__proto__: { polluted: true }'],
    ['quoted __proto__ with an expression', '"__proto__": { polluted: "${{ 1 = 1 }}" }'],
    ['constructor.prototype', 'constructor: { prototype: { polluted: true } }'],
  ])(
    '`set` with a %s key is refused at load, located (it was dropped silently): nothing runs, no prototype is reached',
    (_label, entry) => {
      const file = join(directory, `set-${_label.replaceAll(/\W/g, '-')}.yaml`);
      writeFileSync(file, `name: set-keys\nsteps:\n  - id: bad\n    set:\n      ${entry}\n`);
      const loaded = loadPlaybook(file);
      expect(loaded.playbook).toBeUndefined();
      expect(loaded.problems[0]).toMatchObject({ code: 'RESERVED_KEY', line: 5, column: 7 });
      expect(loaded.problems.map((problem) => problem.code)).toEqual(loaded.problems.map(() => 'RESERVED_KEY'));
      expectPrototypesUntouched();
    },
  );
});

describe('no expression takes the process down', () => {
  it('a run whose expression would build 200 million characters fails its step with a located EXPRESSION_LIMIT; the process and the next run go on', async () => {
    const file = join(directory, 'allocate.yaml');
    writeFileSync(
      file,
      "name: allocate\nsteps:\n  - id: huge\n    set:\n      n: ${{ $length($pad('x', 200000000)) }}\n  - id: never\n    log: not reached\n",
    );
    const h = (harness = await startReliabilityHarness());
    const result = await h.run(file);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'EXPRESSION_LIMIT' });
    expect(result.error?.message).toContain("at /steps/0/set/n of step 'huge'");
    const next = join(directory, 'next.yaml');
    writeFileSync(next, 'name: next\nsteps:\n  - id: fine\n    set:\n      n: ${{ $length($pad("x", 1000)) }}\n');
    expect((await h.run(next)).status).toBe('succeeded');
  });
});
