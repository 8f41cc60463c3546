import { describe, expect, it } from 'vitest';
import { compileTemplate } from './compile-template.js';
import { ExpressionError } from './expression-error.js';
import type { ExpressionContext } from '../model/index.js';

const run = { id: 'r1', playbook: 'p', dryRun: false, startedAt: '2024-01-01T00:00:00Z' };

const where = { pointer: '/steps/0/with/text', stepId: 'build' };

async function failure(expression: string, context: Record<string, unknown> = {}): Promise<ExpressionError> {
  const error = await compileTemplate(`\${{ ${expression} }}`, where)
    .evaluate({ inputs: {}, steps: {}, run, env: {}, ...context } as ExpressionContext)
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  expect(error).toBeInstanceOf(ExpressionError);
  return error as ExpressionError;
}

describe('allocation limits', () => {
  it.each([
    ["$length($pad('x', 200000000))", '$pad'],
    ["$pad('x', -100000000)", '$pad'],
    ["$join([1..3].$pad('x', 12000000), '')", '$join'],
    ["$join(['a', 'b', 'c'], $pad('', 20000000))", '$join'],
    ["$replace($pad('', 1000000, 'x'), 'x', $pad('', 1000, 'y'))", '$replace'],
    ["[1..10].$pad('x', 30000000)", 'text built by this expression'],
    ['[1..100000000]', '1e7'],
    ['[1..2000000]', 'sequence length'],
    [
      "$string(($a := [$pad('x', 1000000)]; $b := [$a, $a, $a, $a]; $c := [$b, $b, $b, $b]; $d := [$c, $c, $c, $c]; [$d, $d, $d, $d]))",
      'limit',
    ],
    ["($s := $pad('x', 20000000); $s & $s)", 'limit'],
    ["$split($pad('', 3000000, 'ab'), '')", 'items'],
  ])('%s fails the step with EXPRESSION_LIMIT, located', async (expression, mentions) => {
    const error = await failure(expression);
    expect(error.code).toBe('EXPRESSION_LIMIT');
    expect(error.message).toContain("at /steps/0/with/text of step 'build'");
    expect(error.message).toContain(mentions);
  });

  it('leaves ordinary values alone, large lists from the context included', async () => {
    const items = Array.from({ length: 50_000 }, (_, index) => ({ id: `s${index}`, name: 'x'.repeat(100) }));
    const template = compileTemplate(
      "${{ $count(inputs.items[$contains(id, '9')].$uppercase(name)) & ':' & $pad('a', 5, '-') & $string({'a': [1..3]}) }}",
      where,
    );
    const withNine = items.filter((item) => item.id.includes('9')).length;
    expect(await template.evaluate({ inputs: { items }, steps: {}, run, env: {} })).toBe(
      `${withNine}:a----{"a":[1,2,3]}`,
    );
  });

  it('measures a context value that links back to itself without going round', async () => {
    const group: Record<string, unknown> = { id: 'g1' };
    group.self = group;
    const template = compileTemplate('${{ [inputs.group, inputs.group].id }}', where);
    expect(await template.evaluate({ inputs: { group }, steps: {}, run, env: {} })).toEqual(['g1', 'g1']);
  });

  it.each([
    ["$pad('foo', 5)", 'foo  '],
    ["$pad('foo', -5, '#')", '##foo'],
    ["$pad('foo', 8, 'ab')", 'fooababa'],
    ["$pad('\u00e9\ud83d\ude00', 5, '\ud83d\udc4d')", '\u00e9\ud83d\ude00\ud83d\udc4d\ud83d\udc4d\ud83d\udc4d'],
    ["$pad('foobar', 3)", 'foobar'],
    ["$pad('x', 4.7, '')", 'x   '],
  ])('%s pads as JSONata does', async (expression, expected) => {
    const template = compileTemplate(`\${{ ${expression} }}`, where);
    expect(await template.evaluate({ inputs: {}, steps: {}, run, env: {} })).toBe(JSON.parse(`"${expected}"`));
  });
});
