/**
 * Whether a value of a known type certainly fails a request schema: the problems every value of
 * that type has (a required field its object never has, a field the schema refuses that it
 * always has, a type or an enum none of its values fits, a list longer than allowed). Sound or
 * silent: where the type or the schema leaves room (an unknown type, an open object, a schema
 * with alternatives or references), it says nothing.
 */
import type { JsonSchema } from '../steps/index.js';
import { BUILT_AT } from './value-type.js';

/** One certain problem, at a path under the checked value (`.body.storage[]`). */
export interface FitProblem {
  /** `.field` and `[]` steps from the checked value. */
  at: string;
  message: string;
  /** Offset in the string value of the constructor that builds the object in error, when one does. */
  builtAt?: number;
}

/** Keywords whose meaning this check does not follow: a schema holding one is not judged. */
const UNFOLLOWED = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'if', 'dependentRequired', 'dependentSchemas'];

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The JSON types a value of `type` may have, or undefined when it does not say. */
function typesOf(type: JsonSchema): string[] | undefined {
  if (type.type !== undefined) return [type.type].flat().map(String);
  if ('const' in type) return [jsonTypeOf(type.const)];
  if (Array.isArray(type.enum) && type.enum.length > 0) return [...new Set(type.enum.map(jsonTypeOf))];
  return undefined;
}

function fits(given: string, wanted: readonly string[]): boolean {
  if (wanted.includes(given)) return true;
  // An integer is a number; a number may be an integer.
  return (given === 'integer' && wanted.includes('number')) || (given === 'number' && wanted.includes('integer'));
}

/** The values a value of `type` may take, when the type lists them. */
function valuesOf(type: JsonSchema): unknown[] | undefined {
  if ('const' in type) return [type.const];
  return Array.isArray(type.enum) ? type.enum : undefined;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The certain problems of a value of `type` against `schema`, appended to `out`. */
export function fitProblems(
  type: JsonSchema,
  schema: JsonSchema,
  at = '',
  out: FitProblem[] = [],
  builtAt?: number,
): FitProblem[] {
  const here = typeof type[BUILT_AT] === 'number' ? (type[BUILT_AT] as number) : builtAt;
  if (Array.isArray(type.anyOf)) return alternatives(type.anyOf.filter(isSchema), schema, at, out, here);
  if (UNFOLLOWED.some((keyword) => keyword in type || keyword in schema)) return out;
  const given = typesOf(type);
  const wanted = schema.type === undefined ? undefined : [schema.type].flat().map(String);
  const place = { at, ...(here === undefined ? {} : { builtAt: here }) };
  if (given !== undefined && wanted !== undefined && !given.some((one) => fits(one, wanted))) {
    const shown = 'const' in type ? `${given.join(' or ')} ${JSON.stringify(type.const)}` : given.join(' or ');
    out.push({ ...place, message: `must be ${wanted.join(' or ')}, and this value is ${shown}` });
    return out;
  }
  const values = valuesOf(type);
  if (values !== undefined && Array.isArray(schema.enum)) {
    const allowed = schema.enum;
    if (!values.some((value) => allowed.some((one) => same(one, value))))
      out.push({
        ...place,
        message: `must be one of ${allowed.map((one) => JSON.stringify(one)).join(', ')}, and this value is ${values.map((one) => JSON.stringify(one)).join(' or ')}`,
      });
  }
  if (given?.includes('object')) objectProblems(type, schema, at, out, here);
  if (given?.includes('array')) arrayProblems(type, schema, at, out, here);
  return out;
}

/** A type that is one of several: a problem is certain only when every alternative has one; the alternative of the schema's type says it. */
function alternatives(
  branches: JsonSchema[],
  schema: JsonSchema,
  at: string,
  out: FitProblem[],
  builtAt?: number,
): FitProblem[] {
  if (branches.length === 0) return out;
  const each = branches.map((branch) => fitProblems(branch, schema, at, [], builtAt));
  if (each.some((problems) => problems.length === 0)) return out;
  const wanted = schema.type === undefined ? [] : [schema.type].flat().map(String);
  const index = branches.findIndex((branch) => typesOf(branch)?.some((one) => fits(one, wanted)) ?? false);
  out.push(...(each[Math.max(index, 0)] ?? []));
  return out;
}

function objectProblems(type: JsonSchema, schema: JsonSchema, at: string, out: FitProblem[], builtAt?: number): void {
  const has = isSchema(type.properties) ? type.properties : {};
  const takes = isSchema(schema.properties) ? schema.properties : {};
  const place = { at, ...(builtAt === undefined ? {} : { builtAt }) };
  // Only an object closed to other fields certainly lacks one it does not list.
  if (type.additionalProperties === false) {
    const missing = (Array.isArray(schema.required) ? schema.required.map(String) : []).filter(
      (name) => !(name in has),
    );
    const written = Object.keys(has);
    for (const name of missing)
      out.push({
        ...place,
        message: `is missing the required field '${name}'${written.length > 0 ? ` (it has ${written.join(', ')})` : ' (it has no fields)'}`,
      });
  }
  const always = new Set(Array.isArray(type.required) ? type.required.map(String) : []);
  for (const [name, fieldType] of Object.entries(has)) {
    if (!isSchema(fieldType)) continue;
    const fieldSchema =
      takes[name] ?? (isSchema(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (isSchema(fieldSchema)) fitProblems(fieldType, fieldSchema, `${at}.${name}`, out, builtAt);
    else if (schema.additionalProperties === false && schema.patternProperties === undefined && always.has(name))
      out.push({
        ...place,
        message: `has the field '${name}', which is not one of ${Object.keys(takes).join(', ') || 'its fields (it takes none)'}`,
      });
  }
}

function arrayProblems(type: JsonSchema, schema: JsonSchema, at: string, out: FitProblem[], builtAt?: number): void {
  if (typeof type.minItems === 'number' && typeof schema.maxItems === 'number' && type.minItems > schema.maxItems)
    out.push({ at, message: `takes at most ${schema.maxItems} items, and this list has at least ${type.minItems}` });
  if (isSchema(type.items) && isSchema(schema.items)) fitProblems(type.items, schema.items, `${at}[]`, out, builtAt);
}
