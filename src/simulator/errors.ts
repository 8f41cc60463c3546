/**
 * Platform errors as the simulator answers them: the standard body
 * `{httpStatusCode, errorCode, message, debugId}`, with what the operation's description
 * adds for the status: `errorDetails` items of the published kind (devices, subscriptions,
 * consumption analytics v2) and consumption analytics' `flowContextId`.
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
  | { type: 'metadata'; source: string; metadata: Record<string, Record<string, unknown>> };

/**
 * The `errorDetails` items a description documents for one status, told apart by their
 * fields as published: `issues` (a bad request), `retryAfterSeconds` (a server error),
 * `source` + `metadata` (every other status of devices and subscriptions).
 */
export type DetailKind = 'issues' | 'retry' | 'general';

/** What an operation's description documents of its error body for one status. */
export interface ErrorBodyForm {
  /** The kind of `errorDetails` item documented; `undefined` when the body has no `errorDetails`. */
  details: DetailKind | undefined;
  /** Whether the body documents `flowContextId` (consumption analytics v2). */
  flowContextId: boolean;
}

/** A detail as answered: one of the published item shapes, or the internal one where no description applies. */
export type AnsweredDetail =
  | ErrorDetail
  | { type: string; issues: BadRequestIssue[] }
  | { type: string; retryAfterSeconds: number }
  | { type: string; source: string; metadata: Record<string, Record<string, unknown>> };

export interface ErrorBody {
  httpStatusCode: number;
  errorCode: string;
  message: string;
  debugId: string;
  flowContextId?: string;
  errorDetails?: AnsweredDetail[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads the error body form off a (dereferenced) response schema; no schema means the bare standard body. */
export function errorBodyFormOf(schema: unknown): ErrorBodyForm {
  const properties = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  const errorDetails = properties.errorDetails;
  const items = isRecord(errorDetails) && isRecord(errorDetails.items) ? errorDetails.items : undefined;
  const itemFields = items && isRecord(items.properties) ? items.properties : undefined;
  const details: DetailKind | undefined = !itemFields
    ? undefined
    : 'retryAfterSeconds' in itemFields
      ? 'retry'
      : 'metadata' in itemFields
        ? 'general'
        : 'issues';
  return { details, flowContextId: 'flowContextId' in properties };
}

/**
 * One internal detail in the published item shape of `kind`, or nothing when that shape
 * cannot say it (a retry hint in a 4xx general item is a `Retry-After` header instead).
 * The published server item's `retryAfterSeconds` is an integer: rounded like the header.
 */
function publishedDetail(detail: ErrorDetail, kind: DetailKind): AnsweredDetail[] {
  switch (kind) {
    case 'issues':
      return detail.type === 'bad request' || detail.type === 'precondition failed'
        ? [{ type: detail.type, issues: detail.issues }]
        : [];
    case 'retry':
      return detail.type === 'retry info'
        ? [{ type: detail.type, retryAfterSeconds: Math.round(detail.retryAfterSeconds) }]
        : [];
    case 'general':
      if (detail.type === 'metadata') return [detail];
      // A general item's metadata values are objects: each issue is keyed by its subject.
      if (detail.type === 'bad request' || detail.type === 'precondition failed') {
        return [
          {
            type: detail.type,
            source: 'request',
            metadata: Object.fromEntries(
              detail.issues.map((issue) => [issue.subject, { source: issue.source, description: issue.description }]),
            ),
          },
        ];
      }
      return [];
  }
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

  /**
   * The body in the documented `form`: `errorDetails` of the documented kind only (omitted
   * when none applies), `flowContextId` where documented. Without a form (routes no
   * description covers, such as the token endpoint) the details are answered as they are.
   */
  toBody(form?: ErrorBodyForm): ErrorBody {
    const kind = form?.details;
    const details: AnsweredDetail[] | undefined = !form
      ? this.details
      : kind === undefined
        ? undefined
        : (this.details ?? []).flatMap((detail) => publishedDetail(detail, kind));
    return {
      httpStatusCode: this.status,
      errorCode: this.errorCode,
      message: this.message,
      debugId: randomUUID(),
      ...(form?.flowContextId ? { flowContextId: randomUUID() } : {}),
      ...(details && details.length > 0 ? { errorDetails: details } : {}),
    };
  }

  /** The retry hint of a retry-info detail, in seconds, if any. */
  retryAfterSeconds(): number | undefined {
    const retry = this.details?.find((detail) => detail.type === 'retry info');
    return retry?.type === 'retry info' ? retry.retryAfterSeconds : undefined;
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
  throw badRequest(`The request body is not valid JSON: ${body.reason}`, [
    { source: 'field', subject: 'body', description: `not valid JSON: ${body.reason}` },
  ]);
}
