/**
 * Property test of the typed-reference check against the platform's response schemas, with an
 * oracle of its own that reads the resolved schemas directly (not the checker's walk): every
 * path generated from an operation's answer is accepted; a path with one segment changed is
 * refused, at that segment, unless the change lands on another path the schema allows. The same
 * reads are also written inside whole expressions (a filter, `.{...}`, `$map` and `$filter` with a
 * lambda, a block binding a variable, a conditional): type inference must follow each.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlatformDescription } from '../../src/openapi/index.js';
import { loadPlaybook } from '../../src/playbook/index.js';

type Schema = Record<string, unknown>;
const description = loadPlatformDescription();
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-typed-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schemas a value of `schema` may be read through: its allOf/anyOf/oneOf members, flattened; a list's items. */
function members(schema: Schema): Schema[] {
  const parts = ['allOf', 'anyOf', 'oneOf'].flatMap((keyword) =>
    Array.isArray(schema[keyword]) ? (schema[keyword] as unknown[]).filter(isSchema) : [],
  );
  const own = isSchema(schema.items) && (schema.type === 'array' || schema.type === undefined) ? [schema.items] : [];
  const nested = [...parts, ...own].flatMap(members);
  return [schema, ...nested];
}

/** The fields a value of `schema` has, or 'open' when it may have any (no listed fields, or additional ones allowed). */
function fieldsOf(schema: Schema): Map<string, Schema> | 'open' {
  const fields = new Map<string, Schema>();
  let typed = false;
  for (const member of members(schema)) {
    if (isSchema(member.properties)) {
      typed = true;
      for (const [name, type] of Object.entries(member.properties))
        if (isSchema(type) && !fields.has(name)) fields.set(name, type);
    }
    if (member.additionalProperties === true || isSchema(member.additionalProperties)) return 'open';
    if (member.type === 'object' && !isSchema(member.properties)) return 'open';
  }
  const scalar = ['string', 'integer', 'number', 'boolean'].includes(String(schema.type));
  return typed || scalar ? fields : 'open';
}

/** A call step's answer: what `steps.<id>.outputs` may hold for this operation (no paginate, no saveTo, no wait). */
function outputsOf(operationId: string): Schema {
  const op = description.byId.get(operationId);
  const body = op?.responses[String(op.successStatus)]?.schema ?? {};
  return {
    type: 'object',
    properties: {
      status: { type: 'integer' },
      headers: { type: 'object', additionalProperties: true },
      body,
      // A write not sent in a dry run answers `{ simulated, request }`.
      ...(op?.isWrite ? { simulated: { type: 'boolean' }, request: { type: 'object' } } : {}),
    },
  };
}

/** The oracle: whether a path read from `schema` can exist, and the first segment that cannot. */
function firstImpossible(schema: Schema, path: readonly string[]): number | undefined {
  let at: Schema = schema;
  for (const [index, name] of path.entries()) {
    const fields = fieldsOf(at);
    if (fields === 'open') return undefined;
    const next = fields.get(name);
    if (next === undefined) return index;
    at = next;
  }
  return undefined;
}

/** A path read from `schema`, chosen by `choices`: a field at each level, while the value has listed fields. */
function pathFrom(schema: Schema, choices: readonly number[]): string[] {
  const path: string[] = [];
  let at = schema;
  for (const choice of choices) {
    const fields = fieldsOf(at);
    if (fields === 'open' || fields.size === 0) break;
    const names = [...fields.keys()];
    const name = names[choice % names.length] as string;
    path.push(name);
    at = fields.get(name) as Schema;
  }
  return path;
}

const operations = description.operations
  .filter((op) => isSchema(op.responses[String(op.successStatus)]?.schema))
  .map((op) => op.id);

const JSONATA_WORDS = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);
const quoted = (name: string): string =>
  /^[A-Za-z_]\w*$/.test(name) && !JSONATA_WORDS.has(name) ? name : `\`${name}\``;

let counter = 0;
/** The problems of a playbook whose second step reads `steps.answer.outputs.<path>`, or `expression`. */
function check(
  operationId: string,
  path: readonly string[],
  expression = ['steps', 'answer', 'outputs', ...path].map(quoted).join('.'),
): Array<{ code: string; column: number }> {
  const text = `name: typed-path-property
steps:
  - id: answer
    call: ${operationId}
  - log: "\${{ ${expression} }}"
`;
  const file = join(dir, `case-${(counter += 1)}.yaml`);
  writeFileSync(file, text);
  // The call's `with` is not the subject: only what the expression reads is.
  return loadPlaybook(file)
    .problems.filter((problem) => problem.code === 'UNKNOWN_PATH_FIELD')
    .map((problem) => ({ code: problem.code, column: problem.column }));
}

/** Column of segment `index` of the path in the `log:` line written by `check`. */
function columnOf(path: readonly string[], index: number): number {
  const before = ['steps', 'answer', 'outputs', ...path.slice(0, index)].map(quoted).join('.');
  return '  - log: "${{ '.length + before.length + 2;
}

/**
 * The read of `path` written inside a construct: the path up to `split` read as a list or value,
 * the rest read from its items (or from it) the way the construct reads them. Gives the
 * expression and where each segment of the path is written in it.
 */
type Construct = (head: string, rest: string) => string;
const CONSTRUCTS: Record<string, Construct> = {
  filter: (head, rest) => `${head}[${rest} = 'x']`,
  objectOfEach: (head, rest) => `${head}.{ 'v': ${rest} }`,
  map: (head, rest) => `$map(${head}, function($x) { $x.${rest} })`,
  filterFunction: (head, rest) => `$filter(${head}, function($x) { $exists($x.${rest}) })`,
  block: (head, rest) => `($v := ${head}; $v.${rest})`,
  conditional: (head, rest) => `run.dryRun ? null : ${head}.${rest}`,
};

/** The expression reading `path` through `construct` (split after `split` segments), and the offset of each segment. */
function written(path: readonly string[], split: number, construct: Construct): { text: string; offsets: number[] } {
  const headNames = ['steps', 'answer', 'outputs', ...path.slice(0, split)].map(quoted);
  const restNames = path.slice(split).map(quoted);
  const head = headNames.join('.');
  // Where the head and the rest are written: the construct made around marks first.
  const headAt = construct('\u0001', '\u0000').indexOf('\u0001');
  const restAt = construct(head, '\u0000').indexOf('\u0000');
  const text = construct(head, restNames.join('.'));
  const offsets: number[] = [];
  let at = 0;
  for (const name of headNames.slice(3)) {
    at = head.indexOf(`.${name}`, at) + 1;
    offsets.push(headAt + at);
  }
  at = restAt;
  for (const name of restNames) {
    offsets.push(at);
    at += name.length + 1;
  }
  return { text, offsets };
}

const mutation = fc.oneof(
  fc.constant((name: string) => `${name}s`),
  fc.constant((name: string) => name.slice(0, -1)),
  fc.constant((name: string) =>
    name.length > 1 ? `${name.slice(1, 2)}${name.slice(0, 1)}${name.slice(2)}` : `x${name}`,
  ),
  fc.stringMatching(/^[a-z][A-Za-z]{0,8}$/).map((other) => () => other),
);

describe('typed paths read from the response schemas', () => {
  it('every path generated from an answer is accepted', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...operations),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        (operationId, choices) => {
          const path = pathFrom(outputsOf(operationId), choices);
          expect(firstImpossible(outputsOf(operationId), path)).toBeUndefined();
          expect(check(operationId, path)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('one changed segment is refused at that segment, unless it is another valid path', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...operations),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        mutation,
        (operationId, choices, which, mutate) => {
          const schema = outputsOf(operationId);
          const path = pathFrom(schema, choices);
          fc.pre(path.length > 0);
          const index = which % path.length;
          const changed = [...path];
          changed[index] = mutate(path[index] as string);
          fc.pre(changed[index] !== '' && changed[index] !== path[index]);
          const impossible = firstImpossible(schema, changed);
          const problems = check(operationId, changed);
          if (impossible === undefined) expect(problems).toEqual([]);
          else expect(problems).toEqual([{ code: 'UNKNOWN_PATH_FIELD', column: columnOf(changed, impossible) }]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('every path generated from an answer is accepted inside filters, constructors, lambdas, blocks and conditionals', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...operations),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.constantFrom(...Object.keys(CONSTRUCTS)),
        (operationId, choices, where, construct) => {
          const path = pathFrom(outputsOf(operationId), choices);
          fc.pre(path.length > 0);
          const { text } = written(path, where % path.length, CONSTRUCTS[construct] as Construct);
          expect(check(operationId, path, text)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('one changed segment inside a construct is refused at that segment, unless it is another valid path', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...operations),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(...Object.keys(CONSTRUCTS)),
        mutation,
        (operationId, choices, which, where, construct, mutate) => {
          const schema = outputsOf(operationId);
          const path = pathFrom(schema, choices);
          fc.pre(path.length > 0);
          const index = which % path.length;
          const changed = [...path];
          changed[index] = mutate(path[index] as string);
          fc.pre(changed[index] !== '' && changed[index] !== path[index]);
          const { text, offsets } = written(changed, where % path.length, CONSTRUCTS[construct] as Construct);
          const impossible = firstImpossible(schema, changed);
          const problems = check(operationId, changed, text);
          if (impossible === undefined) expect(problems, text).toEqual([]);
          else
            expect(problems, text).toEqual([
              { code: 'UNKNOWN_PATH_FIELD', column: '  - log: "${{ '.length + (offsets[impossible] ?? 0) + 1 },
            ]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
