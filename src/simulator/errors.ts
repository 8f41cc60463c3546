/**
 * Platform errors as the simulator answers them: the standard body of the facts page,
 * `{httpStatusCode, errorCode, message, debugId, errorDetails?}`.
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

  toBody(): ErrorBody {
    return {
      httpStatusCode: this.status,
      errorCode: this.errorCode,
      message: this.message,
      debugId: randomUUID(),
      ...(this.details ? { errorDetails: this.details } : {}),
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
