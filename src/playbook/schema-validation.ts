/**
 * Checks a playbook's data against the generated JSON Schema and turns ajv's errors into
 * problems a person understands: one per mistake, the expression alternative left out.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { didYouMean } from '../errors/did-you-mean.js';
import { DURATION_PATTERN_SOURCE } from '../expressions/duration.js';
import { EXPRESSION_PATTERN, type JsonSchema } from '../steps/definitions/schema-parts.js';
import { splitPointer } from './source-document.js';

// ajv-formats is CommonJS: its module object is the plugin function.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A schema finding, before it is located in the file. */
export interface SchemaFinding {
  code: 'SCHEMA' | 'UNKNOWN_FIELD' | 'MISSING_FIELD' | 'INVALID_DURATION' | 'INPUT_WITHOUT_TYPE';
  message: string;
  pointer: string;
  /** Point at the key (unknown fields) rather than the value. */
  atKey: boolean;
}

const validators = new WeakMap<JsonSchema, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true });
    addFormats(ajv);
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/** `steps[0].with.id`: a pointer as a person reads a path. */
export function describePointer(pointer: string): string {
  const tokens = splitPointer(pointer);
  if (tokens.length === 0) return 'the playbook';
  return tokens.reduce((path, token) => (/^\d+$/.test(token) ? `${path}[${token}]` : path === '' ? token : `${path}.${token}`), '');
}

function isExpressionBranch(error: ErrorObject): boolean {
  const parent = error.parentSchema as JsonSchema | undefined;
  return parent?.pattern === EXPRESSION_PATTERN;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function knownFields(error: ErrorObject): string[] {
  const parent = error.parentSchema as JsonSchema | undefined;
  const fields = new Set<string>(Object.keys((parent?.properties as JsonSchema | undefined) ?? {}));
  // A step's fields are spread over its kind's branch (`allOf[].then.properties`).
  for (const branch of (parent?.allOf as JsonSchema[] | undefined) ?? []) {
    const kind = ((branch.if as JsonSchema | undefined)?.required as string[] | undefined)?.[0];
    if (kind !== undefined && typeof error.data === 'object' && error.data !== null && kind in error.data) {
      for (const field of Object.keys(((branch.then as JsonSchema).properties as JsonSchema | undefined) ?? {})) fields.add(field);
    }
  }
  return [...fields];
}

function toFinding(error: ErrorObject): SchemaFinding | undefined {
  const where = describePointer(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      if (missing === 'type' && /^\/inputs\/[^/]+$/.test(error.instancePath)) {
        return { code: 'INPUT_WITHOUT_TYPE', message: `input '${splitPointer(error.instancePath)[1]}' has no type: add one of string, integer, number, boolean, array, object`, pointer: error.instancePath, atKey: true };
      }
      return { code: 'MISSING_FIELD', message: `${where} is missing the required field '${missing}'`, pointer: error.instancePath, atKey: false };
    }
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const field = String(params.additionalProperty ?? params.unevaluatedProperty);
      const pointer = `${error.instancePath}/${field.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      return { code: 'UNKNOWN_FIELD', message: `unknown field '${field}' in ${where}.${didYouMean(field, knownFields(error))}`, pointer, atKey: true };
    }
    case 'type':
      return { code: 'SCHEMA', message: `${where} must be ${String(params.type).replaceAll(',', ' or ')}, not ${typeName(error.data)}`, pointer: error.instancePath, atKey: false };
    case 'enum':
      return {
        code: 'SCHEMA',
        message: `${where} must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}, not ${typeName(error.data)}`,
        pointer: error.instancePath,
        atKey: false,
      };
    case 'pattern':
      if (params.pattern === DURATION_PATTERN_SOURCE) {
        return { code: 'INVALID_DURATION', message: `${where}: '${String(error.data)}' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m`, pointer: error.instancePath, atKey: false };
      }
      return { code: 'SCHEMA', message: `${where} ${error.message ?? 'does not match its pattern'}`, pointer: error.instancePath, atKey: false };
    default:
      return { code: 'SCHEMA', message: `${where} ${error.message ?? error.keyword}`, pointer: error.instancePath, atKey: false };
  }
}

/**
 * The schema findings of `data`. Errors of the "or an expression" alternative, of `if`, and
 * of an `anyOf` whose first branch explains the mistake better are left out.
 */
export function validateAgainstSchema(schema: JsonSchema, data: unknown): SchemaFinding[] {
  const validate = compile(schema);
  if (validate(data)) return [];
  const errors = (validate.errors ?? []).filter((error) => error.keyword !== 'if' && !isExpressionBranch(error));
  const kept = errors.filter((error) => {
    if (error.keyword !== 'anyOf') return true;
    // An anyOf with a more precise error from inside it says nothing more.
    return !errors.some((other) => other !== error && other.schemaPath.startsWith(`${error.schemaPath}/`));
  });
  const all = kept.map(toFinding).filter((finding): finding is SchemaFinding => finding !== undefined);
  const seen = new Set<string>();
  const findings: SchemaFinding[] = [];
  for (const finding of all) {
    // A field whose value is wrong is not evaluated, so ajv also calls it unknown: say the first only.
    const valueIsWrong = all.some((other) => other.code !== 'UNKNOWN_FIELD' && (other.pointer === finding.pointer || other.pointer.startsWith(`${finding.pointer}/`)));
    if (finding.code === 'UNKNOWN_FIELD' && valueIsWrong) continue;
    const key = `${finding.pointer}\u0000${finding.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push(finding);
  }
  return findings;
}
