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
});
