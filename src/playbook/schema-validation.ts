/**
 * Checks a playbook's data against the generated JSON Schema and turns ajv's errors into
 * problems a person understands: one per mistake, the expression alternative left out.
 */
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import { didYouMean } from '../errors/index.js';
import { DURATION_PATTERN_SOURCE } from '../expressions/index.js';
import { EXPRESSION_PATTERN, type JsonSchema } from '../steps/index.js';
import { createPlaybookAjv } from './playbook-ajv.js';
import { loadPrecompiledValidator, type PlaybookValidator } from './precompiled-validator.js';
import { splitPointer } from './source-document.js';

/** A schema finding, before it is located in the file. */
export interface SchemaFinding {
  code: 'SCHEMA' | 'UNKNOWN_FIELD' | 'MISSING_FIELD' | 'INVALID_DURATION' | 'INPUT_WITHOUT_TYPE' | 'INVALID_INPUT_NAME';
  message: string;
  pointer: string;
  /** Point at the key (unknown fields) rather than the value. */
  atKey: boolean;
}

const validators = new WeakMap<JsonSchema, PlaybookValidator>();

// Schemas written in playbooks (input declarations) are compiled by one instance and removed
// from its cache at once: a daemon reloading its folder for weeks would otherwise keep them all.
let valueAjv: Ajv2020 | undefined;

/** The build's validator of the schema when it wrote one, else one compiled now (about 0.4 s for the playbook schema). */
function compile(schema: JsonSchema): PlaybookValidator {
  let validate = validators.get(schema);
  if (!validate) {
    validate = loadPrecompiledValidator(schema) ?? createPlaybookAjv().compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/** `steps[0].with.id`: a pointer as a person reads a path. */
export function describePointer(pointer: string): string {
  const tokens = splitPointer(pointer);
  if (tokens.length === 0) return 'the playbook';
  return tokens.reduce(
    (path, token) => (/^\d+$/.test(token) ? `${path}[${token}]` : path === '' ? token : `${path}.${token}`),
    '',
  );
}

function isExpressionBranch(error: ErrorObject): boolean {
  const parent = error.parentSchema as JsonSchema | undefined;
  return parent?.pattern === EXPRESSION_PATTERN;
}

/** The value as a message shows it; `hideValue` (secret inputs) names its type only. */
function typeName(value: unknown, hideValue = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return hideValue ? `a ${typeof value}` : `${typeof value} ${JSON.stringify(value)}`;
}

/** A string holding `${{`: written where the schema takes no expression. */
function isExpressionText(value: unknown): boolean {
  return typeof value === 'string' && value.includes('${{');
}

/** Why an expression is refused where the schema takes none. */
const NO_EXPRESSION = 'expressions are not allowed here: the value is checked and fixed when the playbook loads';

/** The JSON Schema types `value` has (an integer is also a number). */
function jsonTypesOf(value: unknown): string[] {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number'];
  return [typeof value];
}

/** The types a branch of an anyOf/oneOf takes; undefined when it does not say (a `$ref`, a nested anyOf...). */
function branchTypes(branch: JsonSchema): string[] | undefined {
  if (branch.type !== undefined) return [branch.type].flat() as string[];
  if ('const' in branch) return jsonTypesOf(branch.const);
  if (Array.isArray(branch.enum)) return branch.enum.flatMap(jsonTypesOf);
  return undefined;
}

/** `one of "a", "b"`, `integer`, `boolean or object`: what a branch takes, for a message. */
function describeBranch(branch: JsonSchema): string {
  if (Array.isArray(branch.enum)) return `one of ${branch.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  if ('const' in branch) return JSON.stringify(branch.const);
  return ([branch.type].flat() as string[]).join(' or ');
}

interface Alternatives {
  /** Prefixes of the schema paths of the branches whose type does not fit the value. */
  unfit: string[];
  /** What the branches take, when none fits the value's type and every one says its type. */
  expected?: string;
}

/**
 * The branches of a failed anyOf/oneOf sorted by the value's type: when some branch takes
 * a value of this type, the others' errors ("must be boolean" for a mapping) say nothing
 * useful; when none does, one message naming every alternative says it all. The
 * expression alternative is left out: its errors are never shown.
 */
function alternativesOf(error: ErrorObject): Alternatives {
  const passing = (error.params as { passingSchemas?: unknown }).passingSchemas;
  if (
    (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') ||
    (passing !== undefined && passing !== null) ||
    !Array.isArray(error.schema)
  )
    return { unfit: [] };
  const branches = (error.schema as JsonSchema[])
    .map((branch, index) => ({ branch, index }))
    .filter(({ branch }) => branch.pattern !== EXPRESSION_PATTERN);
  const types = jsonTypesOf(error.data);
  if (branches.length === 0) return { unfit: [] };
  const fits = branches.map(({ branch }) => branchTypes(branch)?.some((type) => types.includes(type)));
  if (fits.some((fit) => fit !== false)) {
    return {
      unfit: branches
        .filter((_, position) => fits[position] === false)
        .map(({ index }) => `${error.schemaPath}/${index}/`),
    };
  }
  return {
    unfit: [`${error.schemaPath}/`],
    expected: branches.map(({ branch }) => describeBranch(branch)).join(' or '),
  };
}

/** True when `inner` was raised while checking the value `outer` failed on, inside `outer`'s schema. */
function isWithin(inner: ErrorObject, outer: ErrorObject, schemaPrefix: string): boolean {
  // Schema paths restart at each `$ref`, so the value's path must agree too.
  const samePlace =
    inner.instancePath === outer.instancePath || inner.instancePath.startsWith(`${outer.instancePath}/`);
  return inner !== outer && samePlace && inner.schemaPath.startsWith(schemaPrefix);
}

function knownFields(error: ErrorObject): string[] {
  const parent = error.parentSchema as JsonSchema | undefined;
  const fields = new Set<string>(Object.keys((parent?.properties as JsonSchema | undefined) ?? {}));
  // A step's fields are spread over its kind's branch (`allOf[].then.properties`).
  for (const branch of (parent?.allOf as JsonSchema[] | undefined) ?? []) {
    const kind = ((branch.if as JsonSchema | undefined)?.required as string[] | undefined)?.[0];
    if (kind !== undefined && typeof error.data === 'object' && error.data !== null && kind in error.data) {
      for (const field of Object.keys(((branch.then as JsonSchema).properties as JsonSchema | undefined) ?? {}))
        fields.add(field);
    }
  }
  return [...fields];
}

interface FindingOptions {
  /** Name the type of a wrong value, not the value (secret inputs). */
  hideValues: boolean;
  /** Places that take an expression: a wrong one there is not refused for being an expression. */
  takesExpression: ReadonlySet<string>;
}

/** One ajv error as its finding is written: where, what was given, whether an expression was refused. */
interface ErrorView {
  error: ErrorObject;
  params: Record<string, unknown>;
  where: string;
  given: string;
  /** An expression where none is taken: said so rather than quoted as a wrong string. */
  refusesExpression: boolean;
  hideValues: boolean;
}

/** A finding at the value (not its key). */
function atValue(view: ErrorView, message: string, code: SchemaFinding['code'] = 'SCHEMA'): SchemaFinding {
  return { code, message, pointer: view.error.instancePath, atKey: false };
}

/** `expected` where an expression was given and none is taken. */
function refused(view: ErrorView, expected: string, code: SchemaFinding['code'] = 'SCHEMA'): SchemaFinding {
  return atValue(view, `${view.where} must be ${expected}; ${NO_EXPRESSION}`, code);
}

function toFinding(error: ErrorObject, options: FindingOptions): SchemaFinding | undefined {
  const view: ErrorView = {
    error,
    params: error.params as Record<string, unknown>,
    where: describePointer(error.instancePath),
    given: typeName(error.data, options.hideValues),
    refusesExpression: isExpressionText(error.data) && !options.takesExpression.has(error.instancePath),
    hideValues: options.hideValues,
  };
  const { where, params, given } = view;
  switch (error.keyword) {
    case 'required':
      return missingFieldFinding(view);
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return unknownFieldFinding(view);
    case 'type': {
      const expected = String(params.type).replaceAll(',', ' or ');
      if (view.refusesExpression) return refused(view, expected);
      return atValue(view, `${where} must be ${expected}, not ${given}`);
    }
    case 'enum':
      return enumFinding(view);
    case 'anyOf':
    case 'oneOf': {
      const { expected } = alternativesOf(error);
      if (expected === undefined) return atValue(view, `${where} ${error.message ?? error.keyword}`);
      if (view.refusesExpression) return refused(view, expected);
      return atValue(view, `${where} must be ${expected}, not ${given}`);
    }
    case 'pattern':
      return patternFinding(view);
    case 'maxItems':
      return atValue(
        view,
        `${where} takes at most ${String(params.limit)} items, and this list has ${Array.isArray(error.data) ? error.data.length : 'more'}`,
      );
    default:
      return atValue(view, `${where} ${error.message ?? error.keyword}`);
  }
}

function missingFieldFinding(view: ErrorView): SchemaFinding {
  const { error } = view;
  const missing = String(view.params.missingProperty);
  if (missing === 'type' && /^\/inputs\/[^/]+$/.test(error.instancePath)) {
    return {
      code: 'INPUT_WITHOUT_TYPE',
      message: `input '${splitPointer(error.instancePath)[1]}' has no type: add one of string, integer, number, boolean, array, object`,
      pointer: error.instancePath,
      atKey: true,
    };
  }
  return atValue(view, `${view.where} is missing the required field '${missing}'`, 'MISSING_FIELD');
}

function unknownFieldFinding(view: ErrorView): SchemaFinding | undefined {
  const { error, params } = view;
  const field = String(params.additionalProperty ?? params.unevaluatedProperty);
  const pointer = `${error.instancePath}/${field.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  const known = knownFields(error);
  // A field of the step's kind is "unevaluated" only because a sibling of it is wrong (reported).
  if (known.includes(field)) return undefined;
  return {
    code: 'UNKNOWN_FIELD',
    message: `unknown field '${field}' in ${view.where}.${didYouMean(field, known)}`,
    pointer,
    atKey: true,
  };
}

function enumFinding(view: ErrorView): SchemaFinding {
  const { error } = view;
  const allowed = view.params.allowedValues as unknown[];
  const expected = `one of ${allowed.map((value) => JSON.stringify(value)).join(', ')}`;
  if (view.refusesExpression) return refused(view, expected);
  const guess =
    typeof error.data === 'string' && !view.hideValues
      ? didYouMean(
          error.data,
          allowed.filter((value): value is string => typeof value === 'string'),
        )
      : '';
  return atValue(view, `${view.where} must be ${expected}, not ${view.given}.${guess}`.replace(/\.$/, ''));
}

/** An input's name that is no identifier, located at the name. */
function inputNameFinding(error: ErrorObject, name: string): SchemaFinding {
  return {
    code: 'INVALID_INPUT_NAME',
    message: `input name '${name}' is not an identifier: use letters, digits and _, not starting with a digit (expressions name it as inputs.<name>)`,
    pointer: `${error.instancePath}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`,
    atKey: true,
  };
}

/** A duration's pattern gets its own code and example; an input name its own; any other pattern ajv's message. */
function patternFinding(view: ErrorView): SchemaFinding {
  const { error, where } = view;
  if (error.propertyName !== undefined) return inputNameFinding(error, error.propertyName);
  if (view.params.pattern !== DURATION_PATTERN_SOURCE)
    return atValue(view, `${where} ${error.message ?? 'does not match its pattern'}`);
  if (view.refusesExpression)
    return refused(view, 'a duration such as 500ms, 30s, 5m, 2h or 1h30m', 'INVALID_DURATION');
  return atValue(
    view,
    `${where}: '${String(error.data)}' is not a duration such as 500ms, 30s, 5m, 2h or 1h30m`,
    'INVALID_DURATION',
  );
}

/**
 * Findings of ajv's errors: errors of the "or an expression" alternative and of `if` left
 * out; of an anyOf/oneOf, those of the branches whose type does not fit the value, or one
 * message naming every alternative when none fits; an anyOf with a more precise error
 * from inside it left out; one finding per place and message.
 */
function findingsOf(raw: readonly ErrorObject[], hideValues: boolean): SchemaFinding[] {
  const takesExpression = new Set(raw.filter(isExpressionBranch).map((error) => error.instancePath));
  // ajv follows a bad key's own error with a generic `propertyNames` one: the first says it all.
  let errors = raw.filter(
    (error) => error.keyword !== 'if' && error.keyword !== 'propertyNames' && !isExpressionBranch(error),
  );
  for (const error of errors) {
    for (const prefix of alternativesOf(error).unfit)
      errors = errors.filter((other) => !isWithin(other, error, prefix));
  }
  const kept = errors.filter((error) => {
    if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') return true;
    // An anyOf with a more precise error from inside it says nothing more.
    return !errors.some((other) => isWithin(other, error, `${error.schemaPath}/`));
  });
  const all = kept
    .map((error) => toFinding(error, { hideValues, takesExpression }))
    .filter((finding): finding is SchemaFinding => finding !== undefined);
  const seen = new Set<string>();
  const findings: SchemaFinding[] = [];
  for (const finding of all) {
    // A field whose value is wrong is not evaluated, so ajv also calls it unknown: say the first only.
    const valueIsWrong = all.some(
      (other) =>
        other.code !== 'UNKNOWN_FIELD' &&
        (other.pointer === finding.pointer || other.pointer.startsWith(`${finding.pointer}/`)),
    );
    if (finding.code === 'UNKNOWN_FIELD' && valueIsWrong) continue;
    const key = `${finding.pointer}\u0000${finding.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    findings.push(finding);
  }
  return findings;
}

/** The schema findings of `data` against the playbook schema. */
export function validateAgainstSchema(schema: JsonSchema, data: unknown): SchemaFinding[] {
  const validate = compile(schema);
  if (validate(data)) return [];
  return findingsOf(validate.errors ?? [], false);
}

/** Checks a value against a schema written in a playbook; findings are located under `pointer`. */
export type ValueValidator = (value: unknown, pointer: string, options?: { hideValues?: boolean }) => SchemaFinding[];

/**
 * A validator for a schema written in the playbook, such as an input's declaration, giving
 * the same findings as the playbook schema does. Throws ajv's error when `schema` is not a
 * valid JSON Schema.
 */
export function compileValueSchema(schema: JsonSchema): ValueValidator {
  valueAjv ??= createPlaybookAjv();
  const validate = valueAjv.compile(schema);
  valueAjv.removeSchema(schema);
  return (value, pointer, options = {}) => {
    if (validate(value)) return [];
    const located = (validate.errors ?? []).map((error) => ({
      ...error,
      instancePath: `${pointer}${error.instancePath}`,
    }));
    return findingsOf(located, options.hideValues ?? false);
  };
}
