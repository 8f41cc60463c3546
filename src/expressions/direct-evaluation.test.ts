import fc from 'fast-check';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { guardAllocations } from './allocation-limits.js';
import { DIRECT_FUNCTIONS, directEvaluator, NEEDS_JSONATA } from './direct-evaluation.js';
import { registerExtraFunctions } from './functions.js';

/** What JSONata itself gives: its value, or the code of its error. */
async function byJsonata(text: string, context: object): Promise<{ value: unknown } | { code: unknown }> {
  try {
    return { value: await jsonata(text).evaluate(context) };
  } catch (error) {
    return { code: (error as { code?: unknown }).code };
  }
}

const compile = (text: string) => directEvaluator(jsonata(text).ast());

// Values of every JSON type, the edge numbers JSONata's coercions treat apart (fractions `&`
// rounds, integers at 10^15, zero, huge), and a missing name (undefined).
const scalar = fc.oneof(
  fc.integer({ min: -20, max: 20 }),
  fc.constantFrom(0.5, -2.25, 0.1, 1e15, -1e15, 999_999_999_999_999, 1e308, 3.000_000_000_000_000_4),
  fc.constantFrom('', 'a', 'b', 'OK', '10', '2', 'true'),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.record({ x: scalar }) },
  { weight: 1, arbitrary: fc.array(fc.record({ x: scalar }), { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
// Names of known types (numbers, strings, booleans) beside names of any value, so that the
// generated expressions reach every operator with operands it answers for as often as not.
const context = fc.record({
  n: fc.integer({ min: -20, max: 20 }),
  m: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, 1e15, 1e308, -2.25)),
  s: fc.constantFrom('', 'a', 'OK', '10'),
  t: fc.constantFrom('b', 'OK', '2'),
  p: fc.boolean(),
  q: fc.boolean(),
  a: value,
  b: value,
  o: fc.record({ x: value, y: value }),
});

const anyName = fc.constantFrom('a', 'b', 'o', 'o.x', 'o.y', 'a.x', 'missing', 'o.missing.x', 'n.x');
const anyLiteral = fc.constantFrom('0', '7', '2.5', '1e308', '"OK"', '"a"', '""', 'true', 'false', 'null');
const node = <T extends string>(...parts: Array<fc.Arbitrary<T>>) =>
  fc.tuple(...parts).map((texts) => `(${texts.join(' ')})`);
const typed = fc.letrec<{ number: string; string: string; boolean: string; any: string }>((tie) => ({
  number: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('n', 'm', '3', '0', '2.5'),
    tie('any').map((value) => `$count(${value})`),
    node(tie('number'), fc.constantFrom('+', '-', '*', '/', '%'), tie('number')),
    tie('number').map((operand) => `-${operand}`),
    node(tie('boolean'), fc.constant('?'), tie('number'), fc.constant(':'), tie('number')),
  ),
  string: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('s', 't', '"OK"', '""'),
    node(fc.oneof(tie('string'), tie('number')), fc.constant('&'), fc.oneof(tie('string'), tie('number'))),
    node(tie('boolean'), fc.constant('?'), tie('string'), fc.constant(':'), tie('string')),
  ),
  boolean: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('p', 'q', 'true', 'false'),
    node(tie('number'), fc.constantFrom('<', '<=', '>', '>=', '=', '!='), tie('number')),
    node(tie('string'), fc.constantFrom('<', '<=', '>', '>=', '=', '!='), tie('string')),
    node(tie('any'), fc.constantFrom('=', '!='), tie('any')),
    node(tie('boolean'), fc.constantFrom('and', 'or'), tie('boolean')),
    tie('any').map((value) => `$exists(${value})`),
    tie('boolean').map((value) => `$not(${value})`),
  ),
  // Anything of the forms, whatever the types: JSONata's coercions and errors are met here.
  any: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyName,
    anyLiteral,
    tie('number'),
    tie('string'),
    tie('boolean'),
    node(
      tie('any'),
      fc.constantFrom('+', '-', '*', '/', '%', '=', '!=', '<', '<=', '>', '>=', '&', 'and', 'or'),
      tie('any'),
    ),
    tie('any').map((operand) => `-(${operand})`),
    node(tie('any'), fc.constant('?'), tie('any'), fc.constant(':'), tie('any')),
    node(tie('any'), fc.constant('?'), tie('any')),
    tie('any').map((value) => `$not(${value})`),
  ),
}));

describe('directEvaluator', () => {
  it('evaluates only functions that nothing Fleetbook registers replaces', () => {
    const registered: unknown[] = [];
    const recorder = { assign: (name: unknown) => registered.push(name) } as unknown as jsonata.Expression;
    registerExtraFunctions(recorder);
    guardAllocations(recorder);
    expect(registered).toContain('pad');
    for (const name of DIRECT_FUNCTIONS) expect(registered).not.toContain(name);
  });

  it('gives JSONata’s value whenever it answers, for any expression of its forms on any values', async () => {
    let answered = 0;
    let asked = 0;
    await fc.assert(
      fc.asyncProperty(typed.any, context, async (text, values) => {
        const direct = compile(text);
        expect(direct, text).toBeDefined();
        asked += 1;
        const value = direct?.(values);
        if (value === NEEDS_JSONATA) return;
        answered += 1;
        expect(await byJsonata(text, values), `${text} on ${JSON.stringify(values)}`).toEqual({ value });
      }),
      { numRuns: 3000, seed: 22 },
    );
    // Many generated cases mix types (JSONata's to answer); the direct answers must still be a large share.
    console.log('RATIO', answered, asked);
    expect(answered / asked).toBeGreaterThan(0.35);
  });

  it('answers the forms steps are made of without JSONata', () => {
    const context = { n: 3, system: { id: 's1', region: 'eu', tags: ['a'] }, status: 'OK', big: 1e308 };
    const cases: Array<[string, unknown]> = [
      ['n * 2', 6],
      ['system.region', 'eu'],
      ['system.tags', ['a']],
      ['system.missing', undefined],
      ['"cluster-" & system.id & "-" & n', 'cluster-s1-3'],
      ['status = "OK" and n > 2', true],
      ['n % 2 = 1 ? "odd" : "even"', 'odd'],
      ['-(n + 1)', -4],
      ['n < 0 ? "negative"', undefined],
      ['$count(system.tags) > 0 and $exists(system.region)', true],
      ['$not($exists(system.missing))', true],
      ['$count(system.missing)', 0],
    ];
    for (const [text, expected] of cases) expect(compile(text)?.(context), text).toEqual(expected);
  });

  it('leaves to JSONata what it coerces, maps or refuses', () => {
    const context = { n: 3, text: '3', fraction: 0.1, list: [{ x: 1 }], big: 1e308, yes: true };
    for (const text of [
      'text * 2',
      'list.x',
      'n & fraction',
      'big * 10',
      'n / 0',
      'yes & "!"',
      'n ? 1 : 2',
      'list = 1',
      '$not(text)',
      '$count(list.x)',
    ])
      expect(compile(text)?.(context), text).toBe(NEEDS_JSONATA);
  });

  it('does not compile what it does not know', () => {
    for (const text of [
      '$x',
      '$$.a',
      'a[0]',
      'a.b[x > 1]',
      '$sum(a)',
      '$count(a, b)',
      '$count()',
      '$count[0](a)',
      'a.*',
      '**.a',
      'a in [1, 2]',
      '($x := 1; $x)',
      '[a, b]',
      'a^(>b)',
      '{"k": a}',
    ])
      expect(compile(text), text).toBeUndefined();
  });
});
