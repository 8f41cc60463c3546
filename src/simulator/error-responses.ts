import { errorMessage } from '../errors/index.js';
import type { OperationDescriptor } from '../openapi/index.js';
import type { SimResponse } from './context.js';
import { SimHttpError } from './errors.js';

/**
 * Whether the operation's description documents `errorDetails` in its error body for this
 * status (only some areas publish them); an undocumented status is judged by the 500 answer.
 */
export function documentsErrorDetails(op: OperationDescriptor, status: number): boolean {
  const schema = (op.responses[String(status)] ?? op.responses['500'])?.schema;
  const properties = schema?.properties;
  return typeof properties === 'object' && properties !== null && 'errorDetails' in properties;
}

/**
 * An error as answered: the body with its details where the area publishes them. Where it
 * does not, a retry-info detail's delay is said by a `Retry-After` header instead (whole
 * seconds, as HTTP writes it), so clients still learn how long to wait.
 */
export function errorResponse(error: SimHttpError, withDetails: boolean, headers: Record<string, string> = {}): SimResponse {
  const retryAfter = error.details?.find((d) => d.type === 'retry info');
  const retryHeader: Record<string, string> = !withDetails && retryAfter ? { 'retry-after': String(Math.round(retryAfter.retryAfterSeconds)) } : {};
  return { status: error.status, body: error.toBody(withDetails), headers: { ...headers, ...retryHeader, ...error.headers } };
}

/** Anything thrown as a platform error: a `SimHttpError` as it is, anything else a retryable 500. */
export function asSimHttpError(error: unknown): SimHttpError {
  return error instanceof SimHttpError ? error : serverError(error);
}

function serverError(error: unknown): SimHttpError {
  return new SimHttpError(500, 'INTERNAL_SERVER_ERROR', `Simulator error: ${errorMessage(error)}`, [{ type: 'retry info', retryAfterSeconds: 30 }]);
}

/** Fastify-level failures (unsupported content type, body too large) as platform errors; bad JSON is `MalformedBody`. */
export function frameworkError(error: { statusCode?: number; message: string }): SimHttpError {
  if (error instanceof SimHttpError) return error;
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  return status === 500 ? serverError(error) : new SimHttpError(status, status === 400 ? 'BAD_REQUEST' : 'INVALID_REQUEST', error.message);
}
