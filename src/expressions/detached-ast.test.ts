import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { tryCompileTemplate } from './compile-template.js';
import { parseDetached } from './detached-ast.js';

/** Every object reachable from `value` that is not a plain object, a plain array or a RegExp, by path. */
function notPlain(value: unknown, path = '$', seen = new Set<unknown>()): string[] {
  if (typeof value === 'function') return [path];
  if (typeof value !== 'object' || value === null || value instanceof RegExp || seen.has(value)) return [];
  seen.add(value);
  const prototype = Object.getPrototypeOf(value) as unknown;
  const own = prototype === Object.prototype || prototype === Array.prototype ? [] : [path];
  return [
    ...own,
    ...Object.entries(value as Record<string, unknown>).flatMap(([key, item]) =>
      notPlain(item, `${path}.${key}`, seen),
    ),
  ];
}

const EXPRESSIONS = [
  'inputs.count + 1',
  "steps.list.outputs.body.items[status = 'OK'].{ 'id': id, 'n': $count(tags) }",
  '$map(items, function($v, $i) { $v.name & $string($i) })',
  'items.%.name',
  "$replace(name, /a+b/i, 'x')",
  '( $x := 3; $x * 2 )',
];

describe('parseDetached', () => {
  it('keeps nothing of the parser: plain objects and arrays only, as validate holds 20,000 of them', () => {
    for (const text of EXPRESSIONS) expect(notPlain(parseDetached(text)), text).toEqual([]);
  });

  it('is the tree JSONata parses, node for node', () => {
    for (const text of EXPRESSIONS)
      expect(JSON.parse(JSON.stringify(parseDetached(text))), text).toEqual(
        JSON.parse(JSON.stringify(jsonata(text).ast())),
      );
    const regex = parseDetached('$match(name, /a+b/i)') as unknown as { arguments: Array<{ value: unknown }> };
    expect(regex.arguments[1]?.value).toBeInstanceOf(RegExp);
  });

  it("throws JSONata's own error, message and position, for text that does not parse", () => {
    const caught = (parse: () => unknown): unknown => {
      try {
        parse();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const ours = caught(() => parseDetached('a + (b')) as { message?: string; position?: number; code?: string };
    const theirs = caught(() => jsonata('a + (b')) as { message?: string; position?: number; code?: string };
    expect(ours.message).toBeDefined();
    expect({ message: ours.message, position: ours.position, code: ours.code }).toEqual({
      message: theirs.message,
      position: theirs.position,
      code: theirs.code,
    });
  });
});

describe('a compiled template', () => {
  it("holds its expressions' trees in plain objects", () => {
    const { template } = tryCompileTemplate(
      { a: '${{ inputs.count + 1 }}', b: 'x ${{ items[n > 2].name }} y' },
      { pointer: '/steps/0/set' },
    );
    const shape = template?.shape();
    expect(shape?.kind).toBe('object');
    const asts =
      shape?.kind === 'object'
        ? shape.entries.flatMap(([, part]) =>
            part.kind === 'whole'
              ? [part.expression.ast]
              : part.kind === 'interpolation'
                ? part.expressions.map((expression) => expression.ast)
                : [],
          )
        : [];
    expect(asts).toHaveLength(2);
    for (const ast of asts) expect(notPlain(ast)).toEqual([]);
  });
});
