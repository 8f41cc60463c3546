import { describe, expect, it, vi } from 'vitest';
import { compileTemplate, tryCompileTemplate } from './compile-template.js';
import { ExpressionError } from './expression-error.js';
import type { ExpressionContext } from '../model/index.js';

const where = { pointer: '/steps/0/with', stepId: 'precheck' };

function context(extra: Record<string, unknown> = {}): ExpressionContext {
  return {
    inputs: { catalogVersion: '2.4.0', count: 3, tags: ['a'] },
    steps: {
      catalog: { status: 'succeeded', outputs: { body: { items: [{ id: 'c1', systems: [{ id: 's1' }] }] } } },
    },
    run: { id: 'r1', playbook: 'p', dryRun: false, startedAt: '2024-01-01T00:00:00Z' },
    env: { HOME: '/home/x' },
    ...extra,
  };
}

describe('compileTemplate', () => {
  it('looks a plain dotted path up as JSONata would evaluate it, whatever the values on the way', async () => {
    const tricky = context({
      system: {
        id: 's1',
        clusterIds: ['c1'],
        none: [],
        nested: [[1, 2], [3]],
        holes: [null, 1],
        zero: 0,
        text: '',
        nil: null,
      },
      list: [{ x: 1 }, { x: 2 }, { y: 3 }],
      inherited: Object.create({ hidden: 1 }) as object,
    });
    const paths = [
      'system',
      'system.id',
      'system.clusterIds',
      'system.none',
      'system.nested',
      'system.holes',
      'system.zero',
      'system.text',
      'system.nil',
      'system.nil.x',
      'system.zero.x',
      'system.text.length',
      'system.missing',
      'missing',
      'missing.x',
      'list',
      'list.x',
      'list.y',
      'inherited.hidden',
      'inputs.tags',
      'steps.catalog.outputs.body.items.id',
      'steps.catalog.outputs.body.items.systems.id',
      'run.dryRun',
      'env.HOME',
    ];
    for (const path of paths) {
      // `(path)` is the same expression, evaluated by JSONata node by node.
      const looked = await compileTemplate(`\${{ ${path} }}`, where).evaluate(tricky);
      const evaluated = await compileTemplate(`\${{ (${path}) }}`, where).evaluate(tricky);
      expect({ path, value: looked }).toEqual({ path, value: evaluated });
    }
    // JSONata's words are not names: `true` is the value.
    expect(await compileTemplate('${{ true }}', where).evaluate(tricky)).toBe(true);
  });

  it('returns static values untouched', async () => {
    const source = { a: 1, b: ['x', { c: true }] };
    const template = compileTemplate(source, where);
    expect(template.isStatic).toBe(true);
    expect(template.stepReferences).toEqual([]);
    expect(await template.evaluate(context())).toBe(source);
  });

  it('keeps the type of a string that is exactly one expression', async () => {
    expect(await compileTemplate('${{ inputs.count }}', where).evaluate(context())).toBe(3);
    expect(await compileTemplate('  ${{ inputs.count > 2 }} ', where).evaluate(context())).toBe(true);
    expect(await compileTemplate('${{ {"a": {"b": inputs.count}} }}', where).evaluate(context())).toEqual({
      a: { b: 3 },
    });
  });

  it('interpolates several expressions or text around one into a string', async () => {
    const template = compileTemplate(
      "version eq '${{ inputs.catalogVersion }}' (${{ inputs.count }}) ${{ inputs.tags[] }} ${{ nothing }}.",
      where,
    );
    expect(await template.evaluate(context())).toBe(`version eq '2.4.0' (3) ["a"] .`);
  });

  it('renders objects and arrays all the way down, dropping undefined keys and nulling undefined items', async () => {
    const template = compileTemplate(
      { id: '${{ system.id }}', missing: '${{ nothing }}', list: ['${{ nothing }}', 1] },
      where,
    );
    expect(template.isStatic).toBe(false);
    expect(await template.evaluate(context({ system: { id: 's9' } }))).toEqual({ id: 's9', list: [null, 1] });
  });

  it('gives the same values when every expression is answered directly and when one needs JSONata midway', async () => {
    const template = compileTemplate(
      {
        doubled: '${{ inputs.count * 2 }}',
        label: 'v${{ inputs.catalogVersion }} of ${{ run.playbook }}',
        ids: ['${{ steps.catalog.outputs.body.items.id }}', '${{ inputs.count > 2 and $exists(run.id) }}'],
      },
      where,
    );
    const single = { status: 'succeeded', outputs: { body: { items: { id: 'c7' } } } };
    expect(await template.evaluate(context({ steps: { catalog: single } }))).toEqual({
      doubled: 6,
      label: 'v2.4.0 of p',
      ids: ['c7', true],
    });
    // `items` is an array here: JSONata maps the path over it (and collapses the one result).
    expect(await template.evaluate(context())).toEqual({ doubled: 6, label: 'v2.4.0 of p', ids: ['c1', true] });
    const failing = compileTemplate({ fine: '${{ inputs.count }}', n: '${{ -inputs.tags }}' }, where);
    await expect(failing.evaluate(context())).rejects.toMatchObject({
      code: 'EXPRESSION_EVALUATION',
      pointer: '/steps/0/with/n',
    });
  });

  it('returns plain arrays: `[]` keeps a one-element array, without JSONata sequence flags', async () => {
    const kept = await compileTemplate('${{ steps.catalog.outputs.body.items.systems.id[] }}', where).evaluate(
      context(),
    );
    expect(kept).toEqual(['s1']);
    expect(Object.keys(kept as object)).toEqual(['0']);
    expect(Object.getPrototypeOf(kept)).toBe(Array.prototype);
    const collapsed = await compileTemplate('${{ steps.catalog.outputs.body.items.systems.id }}', where).evaluate(
      context(),
    );
    expect(collapsed).toBe('s1');
    const built = await compileTemplate('${{ {"a": [1, 2].($ * 2)} }}', where).evaluate(context());
    expect(built).toEqual({ a: [2, 4] });
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
  });

  it('finds step and root references', () => {
    const template = compileTemplate(
      {
        a: '${{ steps.catalog.outputs.body.items[id = $$.inputs.x].id }}',
        b: '${{ $count($$.steps.other.outputs) + loop.index }}',
        c: '${{ system.id & items[name = "q"].value }}',
      },
      where,
    );
    expect([...template.stepReferences].sort()).toEqual(['catalog', 'other']);
    expect([...template.rootReferences].sort()).toEqual(['inputs', 'items', 'loop', 'steps', 'system']);
  });

  it('offers $whereIn and $without: records by a field in a list of values, and a list less another', async () => {
    const records = [
      { id: 'a', name: 'alpha' },
      { id: 'b', name: 'beta' },
      { id: 'c', name: 'gamma' },
    ];
    const evaluate = (text: string) => compileTemplate(text, where).evaluate(context({ records }));
    expect(await evaluate("${{ $whereIn(records, 'id', ['c', 'a', 'x']) }}")).toEqual([records[0], records[2]]);
    expect(await evaluate("${{ $whereIn(records, ['id', 'name'], ['beta', 'c']) }}")).toEqual([records[1], records[2]]);
    expect(await evaluate("${{ $whereIn(records, 'id', []) }}")).toEqual([]);
    expect(await evaluate("${{ $whereIn(nothing, 'id', ['a']) }}")).toEqual([]);
    expect(await evaluate("${{ $without(['a', 'b', 'c', 'b'], ['b']) }}")).toEqual(['a', 'c']);
    expect(await evaluate("${{ $without('a', records.id) }}")).toEqual([]);
    expect(await evaluate("${{ $without(['a', 'z'], nothing) }}")).toEqual(['a', 'z']);
    // 10,000 of 60,000 records: set lookups, a few parts of work whatever the sizes.
    const many = Array.from({ length: 60_000 }, (_, index) => ({ id: `s${index}`, name: `n${index}` }));
    const named = Array.from({ length: 10_000 }, (_, index) => `n${index * 6}`);
    const picked = await compileTemplate("${{ $count($whereIn(many, ['id', 'name'], named)) }}", where).evaluate(
      context({ many, named }),
    );
    expect(picked).toBe(10_000);
  });

  it('offers $chunk for batching writes', async () => {
    expect(await compileTemplate('${{ $chunk([1,2,3,4,5], 2) }}', where).evaluate(context())).toEqual([
      [1, 2],
      [3, 4],
      [5],
    ]);
    expect(await compileTemplate('${{ $chunk([], 5) }}', where).evaluate(context())).toEqual([]);
    await expect(compileTemplate('${{ $chunk([1], 0) }}', where).evaluate(context())).rejects.toThrow(/whole number/);
  });

  it('reads quotes inside a regex literal as part of the regex, and / after an operand as division', async () => {
    expect(await compileTemplate(`\${{ $replace('a"b"c', /"[^"]*"/, '') }}`, where).evaluate(context())).toBe('ac');
    expect(await compileTemplate('${{ 10 / 4 }} and ${{ "x" }}', where).evaluate(context())).toBe('2.5 and x');
  });

  it('offers $duration', async () => {
    expect(await compileTemplate('${{ $duration("1h30m") }}', where).evaluate(context())).toBe(5_400_000);
    await expect(compileTemplate('${{ $duration("soon") }}', where).evaluate(context())).rejects.toThrow(
      /not a duration/,
    );
    // Date arithmetic over more than a timer can wait stays possible.
    expect(await compileTemplate('${{ $duration("90d") }}', where).evaluate(context())).toBe(7_776_000_000);
  });

  it('names the field, the step and the position when an expression does not parse', () => {
    const { errors } = tryCompileTemplate(
      { a: 'x ${{ inputs. }}', b: '${{ ) }}', c: '${{ inputs.x', d: '${{ }}' },
      where,
    );
    expect(errors.map((error) => [error.code, error.pointer])).toEqual([
      ['EXPRESSION_PARSE', '/steps/0/with/a'],
      ['EXPRESSION_PARSE', '/steps/0/with/b'],
      ['EXPRESSION_PARSE', '/steps/0/with/c'],
      ['EXPRESSION_PARSE', '/steps/0/with/d'],
    ]);
    expect(errors[1]?.message).toBe(
      `Expression \${{ ) }} at /steps/0/with/b of step 'precheck' does not parse (position 2 of the expression): The symbol ")" cannot be used as a unary operator`,
    );
    expect(errors[1]?.offsetInValue).toBe(4);
    expect(errors[2]?.reason).toBe("'${{' has no closing '}}'");
    expect(() => compileTemplate('${{ ) }}', where)).toThrow(ExpressionError);
  });

  it('reports evaluation errors with code EXPRESSION_EVALUATION', async () => {
    const template = compileTemplate({ n: '${{ inputs.catalogVersion + 1 }}' }, where);
    const error = await template.evaluate(context()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ExpressionError);
    expect(error).toMatchObject({
      code: 'EXPRESSION_EVALUATION',
      pointer: '/steps/0/with/n',
      stepId: 'precheck',
      jsonataCode: 'T2001',
    });
  });

  it('refuses prototype-polluting keys and functions in produced values', async () => {
    for (const expression of [
      '${{ {"__proto__": {"polluted": true}} }}',
      '${{ {"a": {"constructor": 1}} }}',
      '${{ function($x) { $x } }}',
    ]) {
      await expect(compileTemplate(expression, where).evaluate(context())).rejects.toMatchObject({
        code: 'EXPRESSION_EVALUATION',
      });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('gives no way to the process or to prototypes of the context', async () => {
    const results = await Promise.all(
      ['inputs.constructor', 'inputs.constructor.constructor', '$string(inputs.__proto__)', 'env.constructor'].map(
        (expression) => compileTemplate(`\${{ ${expression} }}`, where).evaluate(context()),
      ),
    );
    expect(results).toEqual([undefined, undefined, undefined, undefined]);
    await expect(compileTemplate('${{ $process }}', where).evaluate(context())).resolves.toBeUndefined();
    await expect(compileTemplate('${{ $require("fs") }}', where).evaluate(context())).rejects.toMatchObject({
      code: 'EXPRESSION_EVALUATION',
    });
  });

  // 3,000,000 parts: about 2 s of one core, several on a busy one.
  it('stops a runaway expression by the parts it evaluated, located', { timeout: 30_000 }, async () => {
    // A call in tail position runs in a loop: its depth never grows, only its work.
    const template = compileTemplate('${{ ($f := function($n) { $f($n + 1) }; $f(0)) }}', where);
    const error = await template.evaluate(context()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'EXPRESSION_LIMIT', pointer: '/steps/0/with', stepId: 'precheck' });
    expect((error as Error).message).toContain('evaluated more than 3,000,000 parts');
  });

  it('does not fail an evaluation for the wall time it took (a loaded machine interleaves others)', async () => {
    const template = compileTemplate('${{ $sum([1..2000].($ * 2)) }}', where);
    // Every reading of the clock a minute later than the last: any wall-clock limit would pass.
    let now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (now += 60_000));
    try {
      expect(await template.evaluate(context())).toBe(4_002_000);
    } finally {
      clock.mockRestore();
    }
  });

  it('can be evaluated concurrently with different contexts', async () => {
    const template = compileTemplate('${{ item * 2 }}', where);
    const results = await Promise.all([1, 2, 3, 4].map((item) => template.evaluate(context({ item }))));
    expect(results).toEqual([2, 4, 6, 8]);
  });
});
