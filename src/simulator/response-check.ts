import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { OperationDescriptor } from '../openapi/index.js';
import type { SimResponse } from './context.js';
import { describeSchemaError, pointerOf } from './schema-validator.js';

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
      problems.push(...(validate.errors ?? []).map((error) => `${pointerOf(error) || '/'} ${describeSchemaError(error)}`));
    }
  }
  return problems;
}
