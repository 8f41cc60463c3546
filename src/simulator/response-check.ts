import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { OperationDescriptor } from '../openapi/index.js';
import type { SimResponse } from './context.js';
import { SimHttpError } from './errors.js';
import { describeSchemaError, pointerOf, type SchemaValidator } from './schema-validator.js';

/** A response that did not match the description (`validateResponses`). */
export interface ResponseViolation {
  operationId: string;
  method: string;
  path: string;
  status: number;
  problems: string[];
}

/**
 * How an answer differs from what the description declares for its operation: a status the
 * operation does not list (errors included: a client's error handling is written from the
 * declared statuses), a header the declared response names but the answer lacks (Location
 * on 202, the deprecation headers, Content-Disposition on downloads, the rate-limit headers
 * on 429), and a JSON body that does not match the declared schema. Empty when it matches.
 */
export function responseProblems(
  op: OperationDescriptor,
  response: SimResponse,
  validatorOf: (status: number) => ValidateFunction | null,
): string[] {
  const declared = op.responses[String(response.status)] ?? op.responses.default;
  if (!declared) return [`status ${response.status} is not in the description`];
  const problems: string[] = [];
  const sent = new Set(Object.keys(response.headers ?? {}).map((name) => name.toLowerCase()));
  for (const name of declared.headers) if (!sent.has(name.toLowerCase())) problems.push(`header ${name} is missing`);
  if (response.body !== undefined && !response.stream) {
    const validate = validatorOf(response.status);
    if (validate && !validate(response.body)) {
      problems.push(
        ...(validate.errors ?? []).map((error) => `${pointerOf(error) || '/'} ${describeSchemaError(error)}`),
      );
    }
  }
  return problems;
}

/** Checks answers against the description; a mismatch is listed in `violations` and answered 500 `SIMULATOR_RESPONSE_INVALID`. */
export type ResponseChecker = (
  op: OperationDescriptor,
  method: string,
  path: string,
  response: SimResponse,
) => SimResponse;

export function createResponseChecker(validator: SchemaValidator, violations: ResponseViolation[]): ResponseChecker {
  const validators = new Map<string, ValidateFunction | null>();
  const validatorOf = (op: OperationDescriptor, status: number): ValidateFunction | null => {
    const key = `${op.id} ${status}`;
    let validate = validators.get(key);
    if (validate === undefined) {
      const schema = (op.responses[String(status)] ?? op.responses.default)?.schema;
      validate = schema ? validator.compile(schema as object) : null;
      validators.set(key, validate);
    }
    return validate;
  };
  return (op, method, path, response) => {
    const problems = responseProblems(op, response, (answered) => validatorOf(op, answered));
    if (problems.length === 0) return response;
    violations.push({ operationId: op.id, method, path, status: response.status, problems });
    const { stream, ...answered } = response;
    stream?.destroy();
    const body = new SimHttpError(
      500,
      'SIMULATOR_RESPONSE_INVALID',
      `The simulator's ${response.status} answer to ${op.id} does not match the description: ${problems.join('; ')}`,
    ).toBody();
    // The headers stay: the answer is the same one with its status and body replaced.
    return { ...answered, status: 500, body };
  };
}
