/**
 * What to write when a `call` lacks its `with` or a required field of it: the operation's
 * required fields with their types, a one-line example built from its request schema (the
 * `examples` platform.yaml gives, else a placeholder of the type), and the command that
 * describes every field. The schema check finds the gap; this says how to fill it.
 */
import { inputSchemaOf, type OperationDescriptor, type PlatformDescription } from '../openapi/index.js';
import type { JsonSchema } from '../steps/index.js';
import type { SchemaFinding } from './schema-validation.js';
import { splitPointer } from './source-document.js';

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requiredOf(schema: JsonSchema): string[] {
  return Array.isArray(schema.required) ? schema.required.map(String) : [];
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  return isSchema(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
}

/** `string`, `list of string`, `one of "CSV", "PDF"`, `object with network, compute, storage`. */
export function typeText(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  const type = schema.type === undefined ? 'any value' : [schema.type].flat().map(String).join(' or ');
  if (type === 'array') return isSchema(schema.items) ? `list of ${typeText(schema.items)}` : 'list';
  const required = requiredOf(schema);
  if (type === 'object' && required.length > 0) return `object with ${required.join(', ')}`;
  return typeof schema.format === 'string' ? `${type} (${schema.format})` : type;
}

/** A value of `schema` to show: the one the description gives, else a placeholder of its type. */
function exampleValue(schema: JsonSchema, name: string, depth: number): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = [schema.type].flat()[0];
  if (type === 'integer' || type === 'number') return typeof schema.minimum === 'number' ? schema.minimum : 1;
  if (type === 'boolean') return true;
  if (type === 'array') return isSchema(schema.items) && depth < 3 ? [exampleValue(schema.items, name, depth + 1)] : [];
  if (type === 'object') return exampleObject(schema, depth + 1);
  return `<${name}>`;
}

function exampleObject(schema: JsonSchema, depth: number): Record<string, unknown> {
  if (depth > 3) return {};
  const properties = propertiesOf(schema);
  return Object.fromEntries(
    requiredOf(schema).map((name) => [name, exampleValue(properties[name] ?? {}, name, depth)]),
  );
}

/** A value as YAML's flow style writes it on one line. */
function flow(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flow).join(', ')}]`;
  if (isSchema(value)) {
    const entries = Object.entries(value).map(
      ([key, item]) => `${/^[A-Za-z_][\w-]*$/.test(key) ? key : JSON.stringify(key)}: ${flow(item)}`,
    );
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return JSON.stringify(value);
}

/** `op requires a (string), b (integer); for example `with: { ... }`. `fleetbook actions op` describes every field.` */
export function callInputHelp(op: OperationDescriptor): string {
  const schema = inputSchemaOf(op);
  const properties = propertiesOf(schema);
  const required = requiredOf(schema);
  const fields = required.map((name) => `${name} (${typeText(properties[name] ?? {})})`).join(', ');
  const needs = required.length > 0 ? `${op.id} requires ${fields}` : `${op.id} requires no field`;
  const example = `with: ${flow(exampleObject(schema, 0))}`;
  return `${needs}; for example \`${example}\`. \`fleetbook actions ${op.id}\` describes every field`;
}

/** The operation of the `call` step at `pointer` of the document, when it names a known one. */
function operationAt(
  data: unknown,
  tokens: readonly string[],
  description: PlatformDescription,
): OperationDescriptor | undefined {
  let node = data;
  for (const token of tokens)
    node = isSchema(node) || Array.isArray(node) ? (node as Record<string, unknown>)[token] : undefined;
  return isSchema(node) && typeof node.call === 'string' ? description.byId.get(node.call) : undefined;
}

/**
 * A schema finding of a `call` step missing its `with`, or a required field at the top of its
 * `with`, with what to write added; any other finding as it is.
 */
export function withCallInputHelp(
  finding: SchemaFinding,
  data: unknown,
  description: PlatformDescription,
): SchemaFinding {
  if (finding.code !== 'MISSING_FIELD') return finding;
  const missing = /is missing the required field '([^']*)'$/.exec(finding.message)?.[1];
  if (missing === undefined) return finding;
  const tokens = splitPointer(finding.pointer);
  const step = missing === 'with' ? tokens : tokens.at(-1) === 'with' ? tokens.slice(0, -1) : undefined;
  const op = step === undefined ? undefined : operationAt(data, step, description);
  return op === undefined ? finding : { ...finding, message: `${finding.message}: ${callInputHelp(op)}` };
}
