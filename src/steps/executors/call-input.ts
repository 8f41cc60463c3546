/**
 * Checks a `call` step's rendered `with` against the operation's input schema (path and
 * query parameters by name, plus `body`) before anything is sent, so a value that an
 * expression turned into the wrong shape fails with the field named, not as a 400.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { inputSchemaOf, type OperationDescriptor } from '../../openapi/index.js';
import { StepError, StepFailureKind } from './step-error.js';

// ajv-formats is CommonJS: its module object is the plugin function.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();

/** A validator for a JSON Schema (2020-12, with formats): one ajv instance for every check of a run. */
export function compileSchema(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/** Throws a `StepError` (`INVALID_CALL_INPUT`) listing every problem of `input`. */
export function checkCallInput(operation: OperationDescriptor, input: Record<string, unknown>): void {
  let validate = validators.get(operation.id);
  if (!validate) validators.set(operation.id, (validate = compileSchema(inputSchemaOf(operation))));
  // Absent optional values are written as `undefined` by templates; they are not sent.
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  if (validate(defined)) return;
  const problems = (validate.errors ?? []).map((error) => {
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    const at = `${error.instancePath}${params.missingProperty ? `/${params.missingProperty}` : ''}` || '/';
    const what = params.additionalProperty
      ? `unknown input '${params.additionalProperty}'`
      : (error.message ?? error.keyword);
    return `${at.replace(/^\//, '').replaceAll('/', '.') || '(input)'}: ${what}`;
  });
  throw new StepError(`${operation.id}: the rendered input is not valid: ${problems.join('; ')}.`, {
    kind: StepFailureKind.invalidInput,
    code: 'INVALID_CALL_INPUT',
    operationId: operation.id,
    details: { problems },
  });
}
