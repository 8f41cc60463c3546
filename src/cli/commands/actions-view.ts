/**
 * The readable view of `fleetbook actions <id>`: an operation's facts, what `with:` takes and
 * the shape of its answer, or a step kind's fields and its examples as the YAML they are.
 * Schemas are shown as an indented outline (`name  type  required  description`), not JSON.
 */
import type { JsonSchema, OperationDescriptor } from '../../openapi/index.js';
import type { StepDefinition } from '../../steps/index.js';

/** Nesting shown before `...`: deeper shapes are in `fleetbook actions <id> -o json`. */
const MAX_DEPTH = 4;

/** An `allOf` as the one object it describes: its parts' properties and required names together. */
function merged(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.allOf)) return schema;
  const parts = (schema.allOf as JsonSchema[]).map(merged);
  const properties = Object.assign(
    {},
    ...parts.map((part) => (part.properties as Record<string, JsonSchema> | undefined) ?? {}),
    schema.properties ?? {},
  ) as Record<string, JsonSchema>;
  const required = [
    ...parts.flatMap((part) => (Array.isArray(part.required) ? (part.required as string[]) : [])),
    ...(Array.isArray(schema.required) ? (schema.required as string[]) : []),
  ];
  const { allOf: _parts, ...rest } = schema;
  return { type: 'object', ...rest, properties, required };
}

const variantsOf = (schema: JsonSchema): JsonSchema[] | undefined => {
  const variants = schema.oneOf ?? schema.anyOf;
  return Array.isArray(variants) ? (variants as JsonSchema[]).map(merged) : undefined;
};

function typeOf(raw: JsonSchema): string {
  const schema = merged(raw);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const type = Array.isArray(schema.type)
    ? schema.type.join(' | ')
    : typeof schema.type === 'string'
      ? schema.type
      : undefined;
  const variants = variantsOf(schema);
  if (type === undefined && variants !== undefined) return [...new Set(variants.map(typeOf))].join(' | ');
  if (type === 'array' && schema.items && typeof schema.items === 'object')
    return `${typeOf(schema.items as JsonSchema)}[]`;
  const format = typeof schema.format === 'string' ? ` (${schema.format})` : '';
  return `${type ?? (schema.properties ? 'object' : 'any')}${format}`;
}

/** The properties of an object schema (or of an array's items), one line each, nested ones indented. */
export function formatSchema(raw: JsonSchema | undefined, indent = '  ', depth = 0): string {
  if (raw === undefined) return `${indent}(no body)\n`;
  const schema = merged(raw);
  const target =
    schema.type === 'array' && schema.items && typeof schema.items === 'object'
      ? merged(schema.items as JsonSchema)
      : schema;
  const variants = variantsOf(target);
  if (variants !== undefined && target.properties === undefined) {
    if (depth >= MAX_DEPTH) return `${indent}...\n`;
    // One of several shapes (a system of one family or another): each with what tells it apart.
    return variants
      .map(
        (variant, index) =>
          `${indent}${index === 0 ? 'one of:' : 'or:'}${typeof variant.description === 'string' ? ` ${variant.description.split('\n')[0]}` : ''}\n${formatSchema(variant, `${indent}  `, depth + 1)}`,
      )
      .join('');
  }
  const properties = target.properties as Record<string, JsonSchema> | undefined;
  if (properties === undefined || Object.keys(properties).length === 0)
    return depth === 0 ? `${indent}${typeOf(schema)}\n` : '';
  if (depth >= MAX_DEPTH) return `${indent}...\n`;
  const required = new Set(Array.isArray(target.required) ? (target.required as string[]) : []);
  const width = Math.max(...Object.keys(properties).map((name) => name.length));
  return Object.entries(properties)
    .map(([name, property]) => {
      const description = typeof property.description === 'string' ? `  ${property.description.split('\n')[0]}` : '';
      const line = `${indent}${name.padEnd(width)}  ${typeOf(property)}${required.has(name) ? '  required' : ''}${description}\n`;
      return line + formatSchema(property, `${indent}  `, depth + 1);
    })
    .join('');
}

/** Nesting shown as YAML before `...`: deeper shapes are in `-o json`. */
const MAX_YAML_DEPTH = 7;

/** A scalar type in one word: `string (date-time)`, `UP | DOWN`, `integer`. */
function scalarText(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => String(value)).join(' | ');
  if (schema.const !== undefined) return String(schema.const);
  return typeOf(schema);
}

function isObjectShape(schema: JsonSchema): boolean {
  return (
    (schema.properties !== undefined && Object.keys(schema.properties as object).length > 0) ||
    (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) ||
    variantsOf(schema) !== undefined
  );
}

/**
 * A schema as the YAML its value would be: `field: type` a line, nested objects indented, a
 * list of objects as `- ` items, enums as `A | B`, `# required` on the fields always there and
 * the first line of a field's description after `#` where `withDescriptions`.
 */
export function formatSchemaYaml(raw: JsonSchema, indent = '  ', withDescriptions = false, depth = 0): string {
  const schema = merged(raw);
  const variants = variantsOf(schema);
  if (variants !== undefined && schema.properties === undefined) {
    return variants
      .map((variant, index) => {
        const about = typeof variant.description === 'string' ? `: ${variant.description.split('\n')[0]}` : '';
        return `${indent}# ${index === 0 ? 'one of' : 'or'}${about}\n${formatSchemaYaml(variant, indent, withDescriptions, depth)}`;
      })
      .join('');
  }
  if (depth >= MAX_YAML_DEPTH) return `${indent}...\n`;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const lines = Object.entries(properties).map(([name, property]) => {
    const field = merged(property);
    const notes = [
      required.has(name) ? 'required' : '',
      withDescriptions && typeof field.description === 'string' ? field.description.split('\n')[0] : '',
    ].filter(Boolean);
    const comment = notes.length > 0 ? `  # ${notes.join('; ')}` : '';
    return `${indent}${name}:${valueYaml(field, comment, indent, withDescriptions, depth)}`;
  });
  const extra = schema.additionalProperties;
  if (typeof extra === 'object' && extra !== null)
    lines.push(`${indent}<name>:${valueYaml(merged(extra as JsonSchema), '', indent, withDescriptions, depth)}`);
  return lines.length > 0 ? lines.join('') : `${indent}${scalarText(schema)}\n`;
}

/** What follows `name:`: a scalar on the line, or the nested shape below it. */
function valueYaml(
  field: JsonSchema,
  comment: string,
  indent: string,
  withDescriptions: boolean,
  depth: number,
): string {
  const items =
    field.type === 'array' && typeof field.items === 'object' ? merged(field.items as JsonSchema) : undefined;
  if (items !== undefined && isObjectShape(items)) {
    const inner = formatSchemaYaml(items, `${indent}    `, withDescriptions, depth + 1);
    return `${comment}\n${indent}  - ${inner.slice(indent.length + 4)}`;
  }
  if (items !== undefined) return ` [${scalarText(items)}]${comment}\n`;
  if (isObjectShape(field)) return `${comment}\n${formatSchemaYaml(field, `${indent}  `, withDescriptions, depth + 1)}`;
  return ` ${scalarText(field)}${comment}\n`;
}

export function formatOperation(op: OperationDescriptor, input: JsonSchema, outputs?: JsonSchema): string {
  const facts = [
    op.isWrite ? 'write' : 'read',
    op.async ? `async (${op.async}): a call step waits for its operation` : '',
    op.rateLimit
      ? `rate limit group ${op.rateLimit.group}${op.rateLimit.perMinute === undefined ? '' : ` (${op.rateLimit.perMinute}/min)`}`
      : '',
    op.permission ? `needs ${op.permission.permission} (${op.permission.level})` : '',
    op.deprecated ? 'deprecated' : '',
  ].filter(Boolean);
  const success = op.responses[String(op.successStatus)];
  return [
    `${op.id}  ${op.method} ${op.path}\n`,
    `  ${op.summary}\n`,
    `  ${facts.join('; ')}\n`,
    op.regions ? `  regions: ${op.regions.join(', ')}\n` : '',
    `\nwith: (what the call step takes)\n`,
    formatSchema(input),
    `\noutputs: (steps.<id>.outputs; the answer is HTTP ${op.successStatus}${success?.contentType ? ` ${success.contentType}` : ''}${op.async ? '; `operation` with `wait`' : ''})\n`,
    outputs === undefined ? formatSchema(success?.schema) : formatSchemaYaml(outputs),
    success?.headers.length ? `  # documented headers: ${success.headers.join(', ')}\n` : '',
  ].join('');
}

export function formatKind(definition: StepDefinition, outputs?: JsonSchema): string {
  const required = new Set([definition.kind, ...(definition.required ?? [])]);
  const width = Math.max(...Object.keys(definition.fields).map((name) => name.length));
  const fields = Object.entries(definition.fields).map(([name, schema]) => {
    const description = typeof schema.description === 'string' ? `  ${schema.description.split('\n')[0]}` : '';
    return `  ${name.padEnd(width)}  ${typeOf(schema)}${required.has(name) ? '  required' : ''}${description}\n`;
  });
  const examples = definition.examples.map((example) => `\n# ${example.description}\n${example.yaml.trimEnd()}\n`);
  return [
    `${definition.kind}${definition.canWrite ? '  (can write)' : ''}\n`,
    `${definition.description.trimEnd()}\n`,
    '\nfields:\n',
    ...fields,
    outputs === undefined ? '' : `\noutputs: (steps.<id>.outputs)\n${formatSchemaYaml(outputs, '  ', true)}`,
    examples.length ? '\nexamples:' : '',
    ...examples,
    examples.length ? '' : '\n',
  ].join('');
}
