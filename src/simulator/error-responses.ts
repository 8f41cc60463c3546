import { errorMessage } from '../errors/index.js';
import type { OperationDescriptor } from '../openapi/index.js';
import type { SimResponse } from './context.js';
import { errorBodyFormOf, SimHttpError, type ErrorBodyForm } from './errors.js';

/** The error body the operation's description documents for this status; an undocumented status is judged by the 500 answer. */
export function documentedErrorForm(op: OperationDescriptor, status: number): ErrorBodyForm {
  return errorBodyFormOf((op.responses[String(status)] ?? op.responses['500'])?.schema);
}

/**
 * An error as answered, in the documented form. Where that form has no place for a
 * retry-info detail's delay, a `Retry-After` header says it (whole seconds, as HTTP writes
 * it), so clients still learn how long to wait.
 */
export function errorResponse(
  error: SimHttpError,
  form: ErrorBodyForm,
  headers: Record<string, string> = {},
): SimResponse {
  const retryAfter = error.retryAfterSeconds();
  const retryHeader: Record<string, string> =
    form.details !== 'retry' && retryAfter !== undefined ? { 'retry-after': String(Math.round(retryAfter)) } : {};
  return { status: error.status, body: error.toBody(form), headers: { ...headers, ...retryHeader, ...error.headers } };
}

/** Anything thrown as a platform error: a `SimHttpError` as it is, anything else a retryable 500. */
export function asSimHttpError(error: unknown): SimHttpError {
  return error instanceof SimHttpError ? error : serverError(error);
}

function serverError(error: unknown): SimHttpError {
  return new SimHttpError(500, 'INTERNAL_SERVER_ERROR', `Simulator error: ${errorMessage(error)}`, [
    { type: 'retry info', retryAfterSeconds: 30 },
  ]);
}

/** Fastify-level failures (unsupported content type, body too large) as platform errors; bad JSON is `MalformedBody`. */
export function frameworkError(error: { statusCode?: number; message: string }): SimHttpError {
  if (error instanceof SimHttpError) return error;
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  return status === 500
    ? serverError(error)
    : new SimHttpError(status, status === 400 ? 'BAD_REQUEST' : 'INVALID_REQUEST', error.message);
}
