import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its module object is the plugin function.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** The longest e-mail address there can be (RFC 5321: a 256-octet path less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

export interface SchemaValidator {
  compile(schema: object): ValidateFunction;
}

/** One ajv instance (JSON Schema 2020-12 with formats) for every schema the simulator checks. */
export function createSchemaValidator(): SchemaValidator {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
  addFormats(ajv);
  // An address is at most 254 characters (RFC 5321); the description's `format: email` means
  // one, so an 8 MB "address" is refused like any malformed one, without a maxLength on every field.
  const email = ajv.formats.email as RegExp;
  ajv.addFormat('email', {
    type: 'string',
    validate: (text: string) => text.length <= MAX_EMAIL_LENGTH && email.test(text),
  });
  return { compile: (schema) => ajv.compile(schema) };
}

/** The JSON pointer an ajv error is about (the missing property for `required`). */
export function pointerOf(error: ErrorObject): string {
  const missing =
    error.keyword === 'required' ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  return missing === undefined ? error.instancePath : `${error.instancePath}/${missing}`;
}

/** A short human message for an ajv error: the allowed values of an enum, the extra property. */
export function describeSchemaError(error: ErrorObject): string {
  const params = error.params as { allowedValues?: unknown[]; additionalProperty?: string };
  if (error.keyword === 'enum' && params.allowedValues) {
    const allowed = `must be one of ${params.allowedValues.map(String).join(', ')}`;
    // A `propertyNames` enum: the value checked is a key of the object, so name it.
    return error.propertyName === undefined ? allowed : `key '${error.propertyName}' ${allowed}`;
  }
  if (error.keyword === 'additionalProperties' && params.additionalProperty)
    return `unknown property '${params.additionalProperty}'`;
  if (error.keyword === 'required') return 'is required';
  return error.message ?? error.keyword;
}
