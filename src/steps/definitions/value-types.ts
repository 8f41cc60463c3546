/**
 * The types of the values expressions read, as JSON Schemas: a step's outputs (the platform's
 * response schemas, a loop's items...), the declared inputs. `{}` is unknown: anything may be
 * read through it. The walk follows JSONata: a field of a list is the field of its items.
 */
import type { JsonSchema } from './schema-parts.js';

/** A value of which nothing is known: every path through it is accepted. */
export const UNKNOWN: JsonSchema = {};

/** What reading a field of a type gives. */
export type FieldLookup =
  | { found: true; type: JsonSchema }
  | { found: false; known: true; fields: string[]; what: string }
  | { found: false; known: false };

const unknownField: FieldLookup = { found: false, known: false };

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeNames(type: JsonSchema): string[] {
  if (typeof type.type === 'string') return [type.type];
  return Array.isArray(type.type) ? type.type.filter((name): name is string => typeof name === 'string') : [];
}

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** A list of `items` (JSONata flattens a list of lists read through a path). */
function listOf(items: JsonSchema): JsonSchema {
  return isList(items) ? items : { type: 'array', items };
}

function isList(type: JsonSchema): boolean {
  const names = typeNames(type).filter((name) => name !== 'null');
  return names.length === 1 && names[0] === 'array';
}

/** The type of one item of a list; a single value is its own item (JSONata treats it as a list of one). */
export function itemOf(type: JsonSchema): JsonSchema {
  if (!isList(type)) return type;
  return isSchema(type.items) ? type.items : UNKNOWN;
}

/** Several lookups of alternatives (`anyOf`, `oneOf`, `allOf`): found where any found it; unknown where any is. */
function combine(lookups: FieldLookup[], keyword: 'anyOf' | 'allOf'): FieldLookup {
  const found = lookups.flatMap((lookup) => (lookup.found ? [lookup.type] : []));
  if (found.length === 1 && found[0] !== undefined) return { found: true, type: found[0] };
  if (found.length > 1) return { found: true, type: { [keyword]: found } };
  if (lookups.some((lookup) => !lookup.found && !lookup.known)) return unknownField;
  const fields = [...new Set(lookups.flatMap((lookup) => (!lookup.found && lookup.known ? lookup.fields : [])))];
  return { found: false, known: true, fields, what: fields.length > 0 ? 'an object' : 'a value' };
}

/** The type of `name` read from a value of `type`, or why it cannot be there. */
export function fieldOf(type: JsonSchema, name: string): FieldLookup {
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = type[keyword];
    if (Array.isArray(branches)) {
      const { [keyword]: _branches, ...rest } = type;
      const own = Object.keys(rest).some((key) => key === 'properties' || key === 'type' || key === 'items');
      const lookups = branches.filter(isSchema).map((branch) => fieldOf(own ? { ...rest, ...branch } : branch, name));
      return combine(lookups, 'anyOf');
    }
  }
  if (Array.isArray(type.allOf)) {
    const { allOf, ...rest } = type;
    const parts = [...allOf.filter(isSchema), ...(Object.keys(rest).length > 0 ? [rest] : [])];
    return combine(
      parts.map((part) => fieldOf(part, name)).filter((lookup) => lookup.found || lookup.known),
      'allOf',
    );
  }
  // Nothing is read from null (JSONata gives no value): beside an object, only the object's fields can be there.
  if (typeNames(type).length > 0 && typeNames(type).every((one) => one === 'null'))
    return { found: false, known: true, fields: [], what: 'null' };
  const names = typeNames(type).filter((one) => one !== 'null');
  if (isList(type) || (names.length === 0 && isSchema(type.items))) {
    const inner = fieldOf(itemOf({ ...type, type: 'array' }), name);
    // A field read over a list maps it, and the lists it maps to are flattened into one (JSONata).
    return inner.found ? { found: true, type: listOf(isList(inner.type) ? itemOf(inner.type) : inner.type) } : inner;
  }
  if (names.includes('object') || isSchema(type.properties)) {
    if (names.length > 1) return unknownField;
    const properties = isSchema(type.properties) ? type.properties : undefined;
    const property = properties?.[name];
    if (properties !== undefined && Object.hasOwn(properties, name) && isSchema(property))
      return { found: true, type: property };
    if (isSchema(type.additionalProperties)) return { found: true, type: type.additionalProperties };
    // A mapping described by no fields, or open to any: nothing to check against.
    if (properties === undefined || type.additionalProperties === true || type.patternProperties !== undefined)
      return unknownField;
    return { found: false, known: true, fields: Object.keys(properties), what: 'an object' };
  }
  if (names.length > 0 && names.every((one) => SCALARS.has(one)))
    return { found: false, known: true, fields: [], what: describeType(type) };
  return unknownField;
}

/** A short name of a type for messages: `an integer`, `a list of objects`, `an object`. */
export function describeType(type: JsonSchema): string {
  const names = typeNames(type).filter((one) => one !== 'null');
  if (isList(type)) {
    const items = isSchema(type.items) ? describeType(type.items).replace(/^an? /, '') : 'values';
    return `a list of ${items.endsWith('s') ? items : `${items}s`}`;
  }
  const [first] = names;
  if (names.length === 1 && first !== undefined) return `${/^[aeiou]/.test(first) ? 'an' : 'a'} ${first}`;
  if (isSchema(type.properties)) return 'an object';
  return 'a value';
}

/** The type of a literal value as written in a playbook. */
export function typeOfLiteral(value: unknown): JsonSchema {
  if (value === null) return { type: 'null' };
  if (Array.isArray(value)) return { type: 'array', items: value.length > 0 ? typeOfLiteral(value[0]) : UNKNOWN };
  if (typeof value === 'object')
    return closedObject(
      Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, typeOfLiteral(item)]),
      ),
    );
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number' };
  if (typeof value === 'string' || typeof value === 'boolean') return { type: typeof value };
  return UNKNOWN;
}

/** An object of exactly these fields. */
export function closedObject(properties: Record<string, JsonSchema>, required?: readonly string[]): JsonSchema {
  return {
    type: 'object',
    properties,
    ...(required === undefined ? {} : { required: [...required] }),
    additionalProperties: false,
  };
}

/** A field's type with what it means, for `fleetbook actions <kind>` and the language reference. */
export function described(type: JsonSchema, description: string): JsonSchema {
  return { ...type, description };
}

/** The statuses a step (or a loop item) ends with. */
export const STEP_STATUS_TYPE: JsonSchema = {
  enum: ['running', 'succeeded', 'failed', 'skipped', 'simulated', 'notStarted', 'interrupted'],
};

/** `steps.<id>.error`: why a step failed (kept by a rescued step). */
export const ERROR_RECORD_TYPE: JsonSchema = closedObject({
  message: { type: 'string' },
  code: { type: 'string' },
  httpStatus: { type: 'integer' },
  operationId: { type: 'string' },
  details: UNKNOWN,
});

/** `steps.<id>`: a step's status, outputs and error. */
export function stepRecordType(outputs: JsonSchema): JsonSchema {
  return closedObject({ status: STEP_STATUS_TYPE, outputs, error: ERROR_RECORD_TYPE });
}

/** What a write not sent in a dry run has instead of its answer (`{ simulated: true, request }`). */
export const SIMULATED_FIELDS: Record<string, JsonSchema> = {
  simulated: described({ type: 'boolean' }, 'Present, true, in a dry run: the write was not sent.'),
  request: described({ type: 'object' }, 'In a dry run: the request that would have been sent.'),
};

/** An answer of an HTTP exchange: status, headers by lower-case name, body (and, for a write, what a dry run gives). */
export function httpAnswerType(body: JsonSchema, write = false): JsonSchema {
  return closedObject({
    status: described({ type: 'integer' }, 'The HTTP status.'),
    headers: described(
      { type: 'object', additionalProperties: { type: 'string' } },
      'Response headers by lower-case name.',
    ),
    body,
    ...(write ? SIMULATED_FIELDS : {}),
  });
}
