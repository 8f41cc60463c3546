/**
 * Platform errors as the simulator answers them: the standard body
 * `{httpStatusCode, errorCode, message, debugId}`, with `errorDetails` in the areas whose
 * published description has them (devices, subscriptions, consumption analytics v2).
 */
import { randomUUID } from 'node:crypto';

export interface BadRequestIssue {
  source: 'field' | 'header' | 'query.parameter';
  subject: string;
  description: string;
}

export type ErrorDetail =
  | { type: 'bad request'; issues: BadRequestIssue[] }
  | { type: 'precondition failed'; issues: BadRequestIssue[] }
  | { type: 'retry info'; retryAfterSeconds: number }
  | { type: 'metadata'; source: string; metadata: Record<string, unknown> };

export interface ErrorBody {
  httpStatusCode: number;
  errorCode: string;
  message: string;
  debugId: string;
  errorDetails?: ErrorDetail[];
}

/** Thrown by handlers; the server turns it into the error body and status. */
export class SimHttpError extends Error {
  readonly status: number;
  readonly errorCode: string;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    errorCode: string,
    message: string,
    details?: ErrorDetail[],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SimHttpError';
    this.status = status;
    this.errorCode = errorCode;
    this.details = details;
    this.headers = headers;
  }

  /** The standard body; `errorDetails` only when `withDetails` (the areas that publish them) and there are some. */
  toBody(withDetails = true): ErrorBody {
    return {
      httpStatusCode: this.status,
      errorCode: this.errorCode,
      message: this.message,
      debugId: randomUUID(),
      ...(withDetails && this.details ? { errorDetails: this.details } : {}),
    };
  }
}

/** 400 with one issue per bad field or parameter. */
export function badRequest(message: string, issues: BadRequestIssue[] = []): SimHttpError {
  return new SimHttpError(400, 'BAD_REQUEST', message, issues.length ? [{ type: 'bad request', issues }] : undefined);
}

export function notFound(kind: string, id: string): SimHttpError {
  return new SimHttpError(404, 'NOT_FOUND', `${kind} '${id}' was not found`);
}

export function conflict(errorCode: string, message: string): SimHttpError {
  return new SimHttpError(409, errorCode, message);
}

/** 451: the platform may not do this for legal reasons (an address's country, an e-mail's domain). */
export function unavailableForLegalReasons(message: string): SimHttpError {
  return new SimHttpError(451, 'UNAVAILABLE_FOR_LEGAL_REASONS', message);
}

/** A request body the JSON parser refused, kept until the input check refuses it. */
export class MalformedBody {
  readonly reason: string;
  constructor(text: string, parserError: Error) {
    let reason = parserError.message;
    if (text.trim() !== '') {
      try {
        JSON.parse(text);
      } catch (syntax) {
        // JSON.parse says where the text goes wrong; the parser only that it does.
        reason = (syntax as Error).message;
      }
    }
    this.reason = reason;
  }
}

/** 400 for a body that is not JSON, at the point where any other bad input is refused. */
export function refuseMalformedBody(body: unknown): void {
  if (!(body instanceof MalformedBody)) return;
  throw badRequest(`The request body is not valid JSON: ${body.reason}`, [{ source: 'field', subject: 'body', description: `not valid JSON: ${body.reason}` }]);
}
