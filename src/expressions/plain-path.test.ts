import fc from 'fast-check';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { plainPathAst } from './plain-path.js';

const word = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('system', 'id', 'steps', 'outputs', '_x1', 'y_2', 'a', 'B9') },
  // Words JSONata reads as something else, and names it would read differently.
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'and',
      'or',
      'in',
      'true',
      'false',
      'null',
      'function',
      'not',
      '9a',
      'a-b',
      '$a',
      '`a b`',
    ),
  },
);
const space = fc.constantFrom('', '', ' ', '\t', '\n', '\r\n', '\v', '\u00a0', '\u2028');
const text = fc
  .tuple(space, fc.array(word, { minLength: 1, maxLength: 5 }), fc.constantFrom('.', '.', '.', ' . ', '..'), space)
  .map(([before, names, dot, after]) => `${before}${names.join(dot)}${after}`);

describe('plainPathAst', () => {
  it('is JSONata’s own tree wherever it gives one', () => {
    let given = 0;
    fc.assert(
      fc.property(text, (expression) => {
        const ast = plainPathAst(expression);
        if (ast === undefined) return;
        given += 1;
        expect(ast, JSON.stringify(expression)).toEqual(jsonata(expression).ast());
      }),
      { numRuns: 2000, seed: 22 },
    );
    expect(given).toBeGreaterThan(400);
  });

  it('leaves to JSONata what is not a path of plain names', () => {
    for (const expression of ['a.and', 'true', 'a . b', 'a\u00a0', '$a', 'a[0]', 'a.b()', '`a b`', 'a..b', ''])
      expect(plainPathAst(expression), JSON.stringify(expression)).toBeUndefined();
    expect(plainPathAst(' steps.target.outputs.version ')).toEqual(jsonata(' steps.target.outputs.version ').ast());
  });
});
