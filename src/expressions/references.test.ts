import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { findReferences } from './references.js';

function refs(expression: string): { roots: string[]; steps: string[] } {
  const found = findReferences(jsonata(expression).ast());
  return { roots: [...found.roots].sort(), steps: [...found.steps].sort() };
}

describe('findReferences', () => {
  it.each([
    ['steps.a.outputs.body', ['steps'], ['a']],
    ['$$.steps.b.status', ['steps'], ['b']],
    ['$.steps.c.status', ['steps'], ['c']],
    ['items[id = $$.inputs.x].name', ['inputs', 'items'], []],
    ['items[id = steps.nope]', ['items'], []],
    ['$count(steps.d.outputs) + loop.index', ['loop', 'steps'], ['d']],
    ['{"k": steps.e.outputs, "l": system.id}', ['steps', 'system'], ['e']],
    ['inputs.flag ? steps.f.outputs : steps.g.outputs', ['inputs', 'steps'], ['f', 'g']],
    ['$map(inputs.list, function($v) { $v & env.HOME })', ['env', 'inputs'], []],
    ['items^(name).id', ['items'], []],
    ['items{name: value}', ['items'], []],
    ['(steps.h; run.id)', ['run', 'steps'], ['h']],
    ['$x := 1', [], []],
  ])('%s reads %j and steps %j', (expression, roots, steps) => {
    expect(refs(expression)).toEqual({ roots, steps });
  });

  it('says where each top-level name and the name under it are written, back-quoted names included', () => {
    const text = ' steps.first.outputs & inputs.`my name` & $$.run.id & items[name = "x"] & loop';
    const { occurrences } = findReferences(jsonata(text).ast(), text);
    const at = (offset: number | undefined, length: number) =>
      offset === undefined ? undefined : text.slice(offset, offset + length);
    expect(
      occurrences.map((found) => [
        found.root,
        at(found.rootOffset, found.root.length),
        found.member,
        at(found.memberOffset, (found.member ?? '').length + 2),
      ]),
    ).toEqual([
      ['steps', 'steps', 'first', 'first.o'],
      ['inputs', 'inputs', 'my name', '`my name`'],
      ['run', 'run', 'id', 'id &'],
      ['items', 'items', undefined, undefined],
      ['loop', 'loop', undefined, undefined],
    ]);
  });
});
