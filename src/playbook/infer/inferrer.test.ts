/**
 * Type inference over whole expressions: for each construct, a field that cannot exist is found
 * at its name (true positive), and a read inference cannot know is let through (silent).
 */
import { describe, expect, it } from 'vitest';
import { compileTemplate, extraFunctions, type Template } from '../../expressions/index.js';
import { closedObject, fieldOf, UNKNOWN, type JsonSchema } from '../../steps/index.js';
import { fieldMisses, inferTemplateType, TYPED_FUNCTIONS, type InferScope } from './index.js';

const STRING: JsonSchema = { type: 'string' };
const CATALOG = closedObject({ version: STRING, releaseDate: STRING });
const CLUSTER = closedObject({ id: STRING, name: STRING, currentSoftwareCatalog: CATALOG });
const SYSTEM = closedObject({
  id: STRING,
  name: STRING,
  region: STRING,
  hypervisorClusters: { type: 'array', items: CLUSTER },
});
const RECORDS: Record<string, JsonSchema> = {
  system: closedObject({ outputs: closedObject({ body: SYSTEM }) }),
  list: closedObject({ outputs: closedObject({ body: closedObject({ items: { type: 'array', items: SYSTEM } }) }) }),
  web: closedObject({ outputs: closedObject({ body: UNKNOWN }) }),
};

const scope: InferScope = {
  root: (name) => {
    if (name === 'steps') return { member: (id) => RECORDS[id] };
    if (name === 'inputs')
      return { member: (input) => (input === 'ids' ? { type: 'array', items: STRING } : undefined) };
    if (name === 'item') return SYSTEM;
    return undefined;
  },
  stepIds: () => Object.keys(RECORDS),
};

/** The misread names of `${{ expression }}`, each with what its message says. */
function misses(expression: string): Array<{ name: string; message: string }> {
  const value = `\${{ ${expression} }}`;
  const template = compileTemplate(value, { pointer: '/x' });
  return fieldMisses(template, scope).map((miss) => ({
    name: value.slice(miss.offsetInValue, miss.offsetInValue + miss.lengthInValue),
    message: miss.message,
  }));
}

const names = (expression: string): string[] => misses(expression).map((miss) => miss.name);
const typeOf = (value: unknown): JsonSchema => inferTemplateType(compileTemplate(value, { pointer: '/x' }), scope);

describe('type inference over whole expressions', () => {
  it('paths: a misread field, at its name, with the field meant', () => {
    expect(misses('steps.system.outputs.body.nmae')).toEqual([
      {
        name: 'nmae',
        message: expect.stringContaining(
          "`steps.system.outputs.body` has no field 'nmae': its fields are id, name, region, hypervisorClusters. Did you mean `steps.system.outputs.body.name`?",
        ),
      },
    ]);
    expect(names('steps.system.outputs.body.hypervisorClusters.currentSoftwareCatalog.version')).toEqual([]);
    expect(names('steps.web.outputs.body.anything.at.all')).toEqual([]);
    // A step or an input of nothing is the reference rules' to report, not inference's.
    expect(names('steps.nothing.outputs.x & inputs.nope.y')).toEqual([]);
  });

  it('predicates: the context is an item', () => {
    expect(names("steps.system.outputs.body.hypervisorClusters[hypervisorClusterId = 'c1'].name")).toEqual([
      'hypervisorClusterId',
    ]);
    expect(names("steps.system.outputs.body.hypervisorClusters[id = 'c1'][0].currentSoftwareCatalog.version")).toEqual(
      [],
    );
    expect(names('steps.list.outputs.body.items[$count(hypervisorClusters[name = $$.item.nme]) > 0]')).toEqual(['nme']);
    expect(names('steps.web.outputs.body.items[whatever = 1].more')).toEqual([]);
  });

  it('object constructors: `.{...}` reads each item; the object has exactly its keys', () => {
    const read = misses('steps.list.outputs.body.items.{ "id": id, "clusters": hypervisorClusterIds }');
    expect(read.map((miss) => miss.name)).toEqual(['hypervisorClusterIds']);
    expect(read[0]?.message).toContain('Did you mean `hypervisorClusters`?');
    expect(names('{ "v": steps.system.outputs.body.hypervisorClusters.currentSoftwareCatalog.versoin }')).toEqual([
      'versoin',
    ]);
    expect(names('({ "a": 1, "b": item.name }).c')).toEqual(['c']);
    expect(names('({ "a": 1, "b": item.name }).b')).toEqual([]);
    // A computed key: the object's fields are unknown.
    expect(names('({ item.name: 1 }).anything')).toEqual([]);
  });

  it('grouping `path{ key: value }` reads the items grouped', () => {
    expect(names('steps.list.outputs.body.items{ region: $count(nmae) }')).toEqual(['nmae']);
    expect(names('(steps.list.outputs.body.items{ region: $count(name) }).anything')).toEqual([]);
  });

  it('lambdas and the higher-order built-ins bind their parameters to the items', () => {
    expect(names('$map(steps.list.outputs.body.items, function($s) { $s.regoin })')).toEqual(['regoin']);
    expect(names('$filter(steps.list.outputs.body.items, function($s, $i) { $s.name = "a" and $i > 0 })')).toEqual([]);
    expect(names('$sort(steps.list.outputs.body.items, function($a, $b) { $a.nme > $b.name })')).toEqual(['nme']);
    expect(names('$single(steps.list.outputs.body.items, function($s) { $s.id = "x" }).regino')).toEqual(['regino']);
    expect(names('$reduce(steps.list.outputs.body.items, function($acc, $s) { $acc.anything & $s.nam })')).toEqual([
      'nam',
    ]);
    expect(names('$each(steps.system.outputs.body, function($v, $k) { $v.anything })')).toEqual([]);
    expect(names('($f := function($s) { $s.hypervisorClusters.nmae }; $f(steps.system.outputs.body))')).toEqual([
      'nmae',
    ]);
    // A parameter of a lambda passed to a function not typed is of unknown type.
    expect(names('$zip(steps.list.outputs.body.items, function($s) { $s.anything })')).toEqual([]);
  });

  it('`:=` binds a variable for the rest of its block', () => {
    expect(names('($c := steps.system.outputs.body.hypervisorClusters; $c.nmae)')).toEqual(['nmae']);
    expect(misses('($c := steps.system.outputs.body.hypervisorClusters; $c.nmae)')[0]?.message).toContain(
      "`$c` has no field 'nmae'",
    );
    // Outside its block the variable is not bound: unknown.
    expect(names('(($c := steps.system.outputs.body); 1) & $c.nmae')).toEqual([]);
  });

  it('`$$`, `$`, `@`, `#`; `%` is not followed', () => {
    expect(names('steps.list.outputs.body.items[name = $$.item.nmae]')).toEqual(['nmae']);
    expect(names('steps.list.outputs.body.items.$lowercase($.nmae)')).toEqual(['nmae']);
    expect(names('steps.list.outputs.body.items@$s.hypervisorClusters')).toEqual(['hypervisorClusters']);
    // After `@` the next step reads from the same context: `items` from `outputs`, not from `body`.
    expect(names('steps.list.outputs.body@$b.items')).toEqual(['items']);
    expect(names('steps.list.outputs.body@$b.body.items[$b.nmae].id')).toEqual(['nmae']);
    expect(names('steps.web.outputs.body@$b.body.items[$b.anything].id')).toEqual([]);
    expect(names('steps.list.outputs.body.items@$s.($s.regoin)')).toEqual(['regoin']);
    expect(names('steps.list.outputs.body.items#$i[$i > 0].nmae')).toEqual(['nmae']);
    expect(names('steps.list.outputs.body.items.hypervisorClusters.%.anything')).toEqual([]);
  });

  it('conditionals join their branches', () => {
    const either = '(item.id = "x" ? steps.system.outputs.body : steps.system.outputs.body.hypervisorClusters)';
    expect(names(`${either}.region`)).toEqual([]);
    expect(names(`${either}.currentSoftwareCatalog`)).toEqual([]);
    expect(names(`${either}.neither`)).toEqual(['neither']);
  });

  it('built-ins return their types; what is not modelled is silent', () => {
    expect(names('$count(steps.list.outputs.body.items).anything')).toEqual(['anything']);
    expect(names('$distinct(steps.list.outputs.body.items).nmae')).toEqual(['nmae']);
    expect(names('$whereIn(steps.list.outputs.body.items, "id", inputs.ids).regoin')).toEqual(['regoin']);
    expect(names('$without(steps.list.outputs.body.items, []).regoin')).toEqual(['regoin']);
    expect(names('$lookup(steps.system.outputs.body, item.name).anything')).toEqual([]);
    expect(names('$eval("x").anything')).toEqual([]);
    expect(names('$merge([steps.system.outputs.body, {"x": 1}]).x')).toEqual([]);
    expect(names('steps.system.outputs.body.*.anything')).toEqual([]);
    expect(names('steps.system.outputs.body.**.anything')).toEqual([]);
  });

  it('types $lookup with a key written as a string as the field it reads; a computed or open key is silent', () => {
    expect(names('$lookup(steps.system.outputs.body, "hypervisorClusters").nmae')).toEqual(['nmae']);
    expect(
      names("steps.system.outputs.body ~> $lookup('hypervisorClusters') ~> $map(function($c) { $c.nmae })"),
    ).toEqual(['nmae']);
    expect(names('$lookup(steps.list.outputs.body.items, "hypervisorClusters").nmae')).toEqual(['nmae']);
    expect(names('$lookup(steps.system.outputs.body, "hypervisorClusters").id')).toEqual([]);
    expect(names('$lookup(steps.system.outputs.body, "hypervisor" & "Clusters").nmae')).toEqual([]);
    expect(names('$lookup(steps.system.outputs.body, "nosuch").nmae')).toEqual([]);
    expect(names('$lookup(steps.web.outputs.body, "anything").nmae')).toEqual([]);
  });

  it("types Fleetbook's own functions", () => {
    for (const fn of extraFunctions) expect(TYPED_FUNCTIONS).toContain(fn.name);
  });

  it('infers the type of a template value', () => {
    const type = typeOf({
      systems: '${{ steps.list.outputs.body.items.{ "id": id, "clusters": [hypervisorClusters.id] } }}',
      count: '${{ $count(inputs.ids) }}',
      text: 'at ${{ item.name }}',
      literal: [1, 2],
    });
    const field = (from: JsonSchema, name: string): JsonSchema | undefined => {
      const lookup = fieldOf(from, name);
      return lookup.found ? lookup.type : undefined;
    };
    const systems = field(type, 'systems') ?? {};
    expect(field(systems, 'id')).toBeDefined();
    expect(fieldOf(systems, 'name')).toMatchObject({ found: false, known: true, fields: ['id', 'clusters'] });
    expect(field(type, 'count')).toEqual({ type: 'integer' });
    expect(field(type, 'text')).toEqual(STRING);
    // A path over a list flattens the lists it maps to: every system's clusters, one list of them.
    expect(typeOf('${{ steps.list.outputs.body.items.hypervisorClusters }}')).toEqual({
      type: 'array',
      items: CLUSTER,
    });
    expect(typeOf('${{ steps.list.outputs.body.items.(hypervisorClusters) }}')).toEqual({
      type: 'array',
      items: CLUSTER,
    });
    // An index picks one item: `items[0].id` is one id, not a list of them.
    expect(typeOf('${{ steps.list.outputs.body.items[0].id }}')).toEqual(STRING);
    expect(typeOf('${{ $eval("1") }}')).toEqual(UNKNOWN);
    expect(typeOf('${{ $$ }}')).toEqual(UNKNOWN);
  });

  it('an expression nested deeper than the stack allows is of unknown type, with no miss and no crash', () => {
    let ast: Record<string, unknown> = { type: 'path', steps: [{ type: 'name', value: 'nope', position: 4 }] };
    for (let depth = 0; depth < 200_000; depth += 1) ast = { type: 'block', expressions: [ast] };
    const expression = { text: 'nope', offset: 0, ast: ast as never };
    const template = {
      isStatic: false,
      shape: () => ({ kind: 'whole', pointer: '/x', expression }),
    } as unknown as Template;
    expect(inferTemplateType(template, scope)).toEqual(UNKNOWN);
    expect(fieldMisses(template, scope)).toEqual([]);
  });
});
