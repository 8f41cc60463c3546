import type { ValidateFunction } from 'ajv/dist/2020.js';
import { inputSchemaOf, type OperationDescriptor } from '../openapi/index.js';
import type { BadRequestIssue } from './errors.js';
import { badRequest, refuseMalformedBody, SimHttpError } from './errors.js';
import { describeSchemaError, pointerOf, type SchemaValidator } from './schema-validator.js';

/** The parts of an operation's description input validation reads. */
export interface ValidatedOperation {
  queryParams: ReadonlyArray<{ name: string; schema?: unknown }>;
  /** Documented statuses: an operation documenting 422 and not 400 refuses bad input with 422. */
  responses?: Readonly<Record<string, unknown>>;
}

function typeOf(schema: unknown): string | undefined {
  const type = (schema as { type?: unknown } | undefined)?.type;
  if (typeof type === 'string') return type;
  return Array.isArray(type) ? type.find((t): t is string => typeof t === 'string' && t !== 'null') : undefined;
}

/**
 * A number as JSON (and the published description) writes one: decimal digits, an optional
 * fraction and exponent. `Number()` would also read `0x10`, `0b11`, `1_0`-free padding such as
 * ` 16 ` or `Infinity`, none of which the platform takes.
 */
const DECIMAL_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** A query string value as the type the schema asks for; anything unparsable is left for ajv to report. */
function coerce(value: string, schema: unknown): unknown {
  switch (typeOf(schema)) {
    case 'integer':
    case 'number':
      return DECIMAL_NUMBER.test(value) && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
}

/**
 * The object `inputSchemaOf` describes: path parameters, declared query parameters
 * (coerced to their schema types; repeated keys are arrays) and `body`. Undeclared query
 * parameters are ignored, as the platform does.
 */
export function inputOf(
  op: ValidatedOperation,
  params: Record<string, string>,
  query: Record<string, string | string[]>,
  body: unknown,
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...params };
  for (const param of op.queryParams) {
    const raw = query[param.name];
    if (raw === undefined) continue;
    if (typeOf(param.schema) === 'array') {
      const items = (param.schema as { items?: unknown }).items;
      input[param.name] = (Array.isArray(raw) ? raw : [raw]).map((value) => coerce(value, items));
    } else {
      input[param.name] = Array.isArray(raw)
        ? raw.map((value) => coerce(value, param.schema))
        : coerce(raw, param.schema);
    }
  }
  if (body !== undefined) input.body = body;
  return input;
}

/** Throws the platform's 400 naming each bad field (`field`) or query parameter (`query.parameter`). */
export function checkInput(op: ValidatedOperation, validate: ValidateFunction, input: unknown): void {
  if (validate(input)) return;
  const queryNames = new Set(op.queryParams.map((param) => param.name));
  const seen = new Set<string>();
  const issues: BadRequestIssue[] = [];
  for (const error of validate.errors ?? []) {
    const [head = '', ...rest] = pointerOf(error).split('/').slice(1);
    const issue: BadRequestIssue =
      head === 'body'
        ? { source: 'field', subject: rest.join('.') || 'body', description: describeSchemaError(error) }
        : {
            source: queryNames.has(head) ? 'query.parameter' : 'field',
            subject: [head, ...rest].join('.'),
            description: describeSchemaError(error),
          };
    const key = `${issue.source} ${issue.subject} ${issue.description}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  const named = issues.map((issue) => `${issue.subject} ${issue.description}`).join('; ');
  const refused = badRequest(`The request is invalid: ${named}`, issues);
  // The workspaces and users areas publish 422, not 400, for a request their schema refuses.
  if (op.responses && !('400' in op.responses) && '422' in op.responses) {
    throw new SimHttpError(422, 'UNPROCESSABLE_ENTITY', refused.message, refused.details);
  }
  throw refused;
}

/** Refuses a request whose input the operation does not take (pipeline step 6). */
export type InputCheck = (
  op: OperationDescriptor,
  params: Record<string, string>,
  query: Record<string, string | string[]>,
  body: unknown,
) => void;

/**
 * Refuses a body that is not JSON, then checks the input against the operation's schema
 * (compiled on the operation's first request, then kept).
 */
export function createInputCheck(validator: SchemaValidator): InputCheck {
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (op: OperationDescriptor): ValidateFunction => {
    let validate = validators.get(op.id);
    if (!validate) validators.set(op.id, (validate = validator.compile(inputSchemaOf(op))));
    return validate;
  };
  return (op, params, query, body) => {
    refuseMalformedBody(body);
    checkInput(op, validatorOf(op), inputOf(op, params, query, body));
  };
}
