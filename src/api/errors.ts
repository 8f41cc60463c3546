/**
 * Typed errors of the API client. Every failure a platform call can end with is one of
 * these: an `ApiError` subclass chosen by HTTP status, a connection or timeout error, or a
 * usage error (unknown operation, region or input) raised before anything is sent. Each
 * says what happened and what to do; none ever carries a credential or a bearer token.
 */
import { FleetbookError, UsageError, errorMessage } from '../errors/index.js';
import { ApiErrorCode } from './error-codes.js';

/** One issue of a `bad request` or `precondition failed` detail. */
export interface ErrorIssue {
  source?: string;
  subject?: string;
  description?: string;
}

/**
 * An error response body as the platform sent it, read tolerantly: the standard
 * `{httpStatusCode, errorCode, message, debugId, errorDetails?}` (consumption analytics v2
 * adds `flowContextId`), the `errorDetail` spelling, extra fields (`status`), a non-JSON
 * text, or nothing at all.
 */
export interface ParsedErrorBody {
  /** The parsed JSON, the raw text when it is not JSON, `undefined` when empty. */
  raw: unknown;
  errorCode?: string;
  message?: string;
  debugId?: string;
  /** The platform's flow id (consumption analytics v2), when it is not already the `debugId`: support asks for both. */
  flowContextId?: string;
  /** `errorDetails` (or `errorDetail`) entries that are objects; empty when absent. */
  details: Array<Record<string, unknown>>;
  /** Issues of every `bad request` / `precondition failed` detail, flattened. */
  issues: ErrorIssue[];
  /** From a retry-info detail. */
  retryAfterSeconds?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string' && value.length > 0) return value;
  }
  return undefined;
}

/** Parses an error body of any shape; never throws. */
export function parseErrorBody(text: string): ParsedErrorBody {
  const trimmed = text.trim();
  if (trimmed.length === 0) return { raw: undefined, details: [], issues: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed) as unknown;
  } catch {
    // Proxies and gateways answer HTML or plain text; keep a bounded excerpt as the message.
    return { raw: trimmed, message: trimmed.slice(0, 300), details: [], issues: [] };
  }
  if (!isRecord(raw)) return { raw, details: [], issues: [] };
  const detailsValue = raw.errorDetails ?? raw.errorDetail;
  const detailList: unknown[] = Array.isArray(detailsValue)
    ? detailsValue
    : detailsValue === undefined
      ? []
      : [detailsValue];
  const details = detailList.filter(isRecord);
  const issues = details
    .flatMap((detail) => (Array.isArray(detail.issues) ? detail.issues.filter(isRecord) : []))
    .map((issue): ErrorIssue => ({
      source: firstString(issue, ['source']),
      subject: firstString(issue, ['subject']),
      description: firstString(issue, ['description', 'message']),
    }));
  const retryAfter = details
    .map((detail) => detail.retryAfterSeconds)
    .find((value) => typeof value === 'number' && value >= 0);
  const debugId = firstString(raw, ['debugId', 'traceId', 'flowContextId']);
  const flowContextId = firstString(raw, ['flowContextId']);
  return {
    raw,
    errorCode: firstString(raw, ['errorCode', 'code']),
    message: firstString(raw, ['message', 'errorMessage', 'error', 'detail']),
    debugId,
    ...(flowContextId !== undefined && flowContextId !== debugId ? { flowContextId } : {}),
    details,
    issues,
    ...(typeof retryAfter === 'number' ? { retryAfterSeconds: retryAfter } : {}),
  };
}

/** Response headers as the client exposes them: lower-case names, one string each. */
export type ResponseHeaders = Record<string, string>;

/**
 * The delay the server asked for, in ms: a retry-info detail's `retryAfterSeconds` first,
 * then a `Retry-After` header, then `ratelimit-reset` / `x-ratelimit-reset` (seconds until
 * the window resets; a value that looks like an epoch timestamp is read as one).
 */
export function retryAfterMsOf(
  body: ParsedErrorBody | undefined,
  headers: ResponseHeaders,
  nowMs = Date.now(),
): number | undefined {
  if (body?.retryAfterSeconds !== undefined) return Math.round(body.retryAfterSeconds * 1000);
  // A Retry-After says when this request may be repeated; the reset headers say when the whole
  // quota is back, which can be much later (a 429 of devices or subscriptions carries both).
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter) * 1000;
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - nowMs);
  }
  const reset = headers['ratelimit-reset'] ?? headers['x-ratelimit-reset'];
  if (reset !== undefined && /^\d+(\.\d+)?$/.test(reset.trim())) {
    const seconds = Number(reset);
    // Some gateways send the reset instant (epoch seconds) instead of a delta.
    return seconds > 1e9 ? Math.max(0, seconds * 1000 - nowMs) : Math.round(seconds * 1000);
  }
  return undefined;
}

/**
 * Whether an answer reports its rate-limit quota spent: `ratelimit-remaining: 0` (one area
 * spells it `x-ratelimit-remaining`). A 429 saying so means the group's pace (with whatever
 * else shares the workspace's quota) outran the limit.
 */
/** What the server still allows now (`ratelimit-remaining`), when it says. */
export function quotaRemaining(headers: ResponseHeaders): number | undefined {
  const remaining = (headers['ratelimit-remaining'] ?? headers['x-ratelimit-remaining'])?.trim();
  return remaining !== undefined && /^\d+$/.test(remaining) ? Number(remaining) : undefined;
}

export function reportsQuotaSpent(headers: ResponseHeaders): boolean {
  const remaining = (headers['ratelimit-remaining'] ?? headers['x-ratelimit-remaining'])?.trim();
  return remaining !== undefined && /^\d+$/.test(remaining) && Number(remaining) === 0;
}

/**
 * The limit an answer states, in requests a minute: `ratelimit-limit` (or `x-ratelimit-limit`)
 * over the window `ratelimit-policy` names (`100;w=60`, seconds); a minute when it names none,
 * as the platform's published limits are per minute.
 */
export function serverLimitPerMinute(headers: ResponseHeaders): number | undefined {
  const limit = (headers['ratelimit-limit'] ?? headers['x-ratelimit-limit'])?.trim();
  if (limit === undefined || !/^\d+$/.test(limit) || Number(limit) < 1) return undefined;
  const window = /(?:^|;)\s*w=(\d+)/.exec(headers['ratelimit-policy'] ?? '')?.[1];
  const windowSeconds = window === undefined ? 60 : Number(window);
  return windowSeconds > 0 ? Math.max(1, Math.floor((Number(limit) * 60) / windowSeconds)) : undefined;
}

/** What went wrong, for the retry decision: an HTTP status or a transport failure. */
export type FailureKind = { status: number } | { connection: 'notSent' | 'maybeSent' } | { timeout: true };

/**
 * Whether a call that failed this way may be sent again. Reads (and writes the caller
 * declared idempotent) are repeated on transient failures: network, 408, 429, 5xx. Other
 * writes only where the server cannot have acted on them: a connection that never sent
 * the request, 429 and 503.
 */
export function isSafeToRetry(kind: FailureKind, write: boolean): boolean {
  if ('timeout' in kind) return !write;
  if ('connection' in kind) return !write || kind.connection === 'notSent';
  const { status } = kind;
  if (status === 429 || status === 503) return true;
  if (write) return false;
  return status === 408 || status >= 500;
}

export interface ApiErrorInit {
  operationId: string;
  status?: number;
  body?: ParsedErrorBody;
  retryable: boolean;
  retryAfterMs?: number;
  cause?: unknown;
}

/** A platform call that failed. `code` is stable; `retryable` says whether repeating the call is safe. */
export class ApiError extends FleetbookError {
  declare readonly code: ApiErrorCode;
  readonly status: number | undefined;
  readonly operationId: string;
  /** The parsed error body, when the server answered. */
  readonly body: ParsedErrorBody | undefined;
  readonly retryable: boolean;
  /** The server's retry hint, in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, code: ApiErrorCode, init: ApiErrorInit) {
    super(message, {
      code,
      cause: init.cause,
      details: {
        operationId: init.operationId,
        ...(init.status === undefined ? {} : { status: init.status }),
        ...(init.body?.errorCode ? { errorCode: init.body.errorCode } : {}),
        ...(init.body?.debugId ? { debugId: init.body.debugId } : {}),
        ...(init.body?.flowContextId ? { flowContextId: init.body.flowContextId } : {}),
      },
    });
    this.name = 'ApiError';
    this.status = init.status;
    this.operationId = init.operationId;
    this.body = init.body;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The same error, marked as not to be repeated (its own retries are spent). */
export function asFinal(error: ApiError): ApiError {
  if (!error.retryable) return error;
  const type = error.constructor as new (message: string, code: string, init: ApiErrorInit) => ApiError;
  return new type(error.message, error.code, {
    operationId: error.operationId,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.body === undefined ? {} : { body: error.body }),
    retryable: false,
    // Not repeated by this client, but the hint still tells the caller when the server
    // will take requests again (a final 429 of the token endpoint).
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    cause: error.cause,
  });
}

export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
}
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
export class PreconditionFailedError extends ApiError {
  override name = 'PreconditionFailedError';
}
export class UnprocessableEntityError extends ApiError {
  override name = 'UnprocessableEntityError';
}
export class RateLimitedError extends ApiError {
  override name = 'RateLimitedError';
}
export class UnavailableForLegalReasonsError extends ApiError {
  override name = 'UnavailableForLegalReasonsError';
}
export class ServerError extends ApiError {
  override name = 'ServerError';
}
/** Any other non-success status (405, 408, 415...). Code `HTTP_<status>`. */
export class UnexpectedStatusError extends ApiError {
  override name = 'UnexpectedStatusError';
}
/** The request could not be sent or its answer not received. */
export class ConnectionError extends ApiError {
  override name = 'ConnectionError';
}
/** No answer within `requestTimeoutMs`. */
export class RequestTimeoutError extends ApiError {
  override name = 'RequestTimeoutError';
}
/** A streamed download broke after bytes had already reached the caller's stream; not repeatable. */
export class DownloadInterruptedError extends ApiError {
  override name = 'DownloadInterruptedError';
}
/** A success answer the client could not read (invalid JSON). */
export class InvalidResponseError extends ApiError {
  override name = 'InvalidResponseError';
}

type ErrorClass = new (message: string, code: ApiErrorCode, init: ApiErrorInit) => ApiError;

const byStatus: Record<number, { type: ErrorClass; code: ApiErrorCode; advice: string }> = {
  400: { type: BadRequestError, code: 'BAD_REQUEST', advice: 'Fix the input named above and run again.' },
  401: {
    type: AuthenticationError,
    code: 'UNAUTHORIZED',
    advice:
      'The token was refused even after renewal: check that the API client exists, is not revoked and belongs to this workspace.',
  },
  403: {
    type: PermissionDeniedError,
    code: 'FORBIDDEN',
    advice:
      "Give the API client's role the permission above, or check that the resource allows this action in its current state.",
  },
  404: {
    type: NotFoundError,
    code: 'NOT_FOUND',
    advice: 'Check the id and the region; finished async operations disappear after a day.',
  },
  409: {
    type: ConflictError,
    code: 'CONFLICT',
    advice:
      'Another operation holds the resource (for example a precheck or update in progress): wait for it to end, then run again.',
  },
  412: {
    type: PreconditionFailedError,
    code: 'PRECONDITION_FAILED',
    advice: 'Bring the resource into the state the operation needs, then run again.',
  },
  422: {
    type: UnprocessableEntityError,
    code: 'UNPROCESSABLE_ENTITY',
    advice: 'Fix the fields named above and run again.',
  },
  429: {
    type: RateLimitedError,
    code: 'RATE_LIMITED',
    advice: 'Lower the rate of calls or the concurrency for this operation group.',
  },
  451: {
    type: UnavailableForLegalReasonsError,
    code: 'UNAVAILABLE_FOR_LEGAL_REASONS',
    advice:
      'The platform refuses this for legal reasons (for example the country of the address); change the input or contact support.',
  },
};

export interface HttpErrorContext {
  operationId: string;
  status: number;
  bodyText: string;
  headers: ResponseHeaders;
  /** Whether the call changes state (decides `retryable`). */
  write: boolean;
  /** The permission the operation needs, named in 403 messages. */
  permission?: { permission: string; level: string };
  /** Replaces the generic advice (the token endpoint words its 400/401 itself). */
  advice?: string;
}

function describeIssues(issues: readonly ErrorIssue[]): string {
  return issues
    .map(
      (issue) =>
        [issue.source, issue.subject ? `'${issue.subject}'` : undefined].filter(Boolean).join(' ') +
        (issue.description ? `: ${issue.description}` : ''),
    )
    .filter((text) => text.length > 0)
    .join('; ');
}

/** The typed error for a non-success answer. */
export function createHttpError(context: HttpErrorContext): ApiError {
  const { operationId, status, headers, write } = context;
  const body = parseErrorBody(context.bodyText);
  const known = byStatus[status];
  const type = known?.type ?? (status >= 500 ? ServerError : UnexpectedStatusError);
  const code: ApiErrorCode = known?.code ?? (status >= 500 ? ApiErrorCode.serverError : `HTTP_${status}`);
  const retryable = isSafeToRetry({ status }, write);
  let advice = context.advice ?? known?.advice;
  if (advice === undefined) {
    advice =
      status >= 500
        ? retryable
          ? 'The platform failed; the call is repeated with backoff.'
          : 'The platform failed on a write that may have been applied: check the resource before running again.'
        : 'See the platform message.';
  }
  const issues = describeIssues(body.issues);
  const permission =
    status === 403 && context.permission
      ? ` It needs permission ${context.permission.permission} (${context.permission.level}).`
      : '';
  const message =
    `${operationId} failed with HTTP ${status}${body.errorCode ? ` ${body.errorCode}` : ''}` +
    `${body.message ? `: ${body.message}` : ''}${issues ? ` (${issues})` : ''}.${permission} ${advice}` +
    `${body.debugId ? ` [debugId ${body.debugId}${body.flowContextId ? `, flowContextId ${body.flowContextId}` : ''}]` : ''}`;
  return new type(message, code, { operationId, status, body, retryable, retryAfterMs: retryAfterMsOf(body, headers) });
}

/** Error codes of node and undici that mean the request never left this machine. */
const notSentCodes = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CONNECT',
]);
const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function errorCodeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; isRecord(current) || current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (depth > 3) break;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A transport failure (no HTTP answer) as a typed error. */
export function createTransportError(operationId: string, error: unknown, write: boolean): ApiError {
  const code = errorCodeOf(error) ?? 'UNKNOWN';
  const reason = errorMessage(error);
  if (timeoutCodes.has(code)) {
    return new RequestTimeoutError(
      `${operationId}: no answer from the platform in time (${code}). ${write ? 'The write may have been applied: check the resource before running again.' : 'The call is repeated with backoff.'}`,
      'REQUEST_TIMEOUT',
      { operationId, retryable: isSafeToRetry({ timeout: true }, write), cause: error },
    );
  }
  const connection = notSentCodes.has(code) ? 'notSent' : 'maybeSent';
  const retryable = isSafeToRetry({ connection }, write);
  const what = connection === 'notSent' ? 'could not connect to the platform' : 'lost the connection to the platform';
  const advice = retryable
    ? 'The call is repeated with backoff; check the address and the network if this persists.'
    : 'The write may have been applied: check the resource before running again.';
  return new ConnectionError(`${operationId}: ${what} (${code}: ${reason}). ${advice}`, 'CONNECTION_FAILED', {
    operationId,
    retryable,
    cause: error,
  });
}

/** An operation id that is not in the platform description. */
export class UnknownOperationError extends UsageError {
  constructor(message: string) {
    super(message, 'UNKNOWN_OPERATION');
    this.name = 'UnknownOperationError';
  }
}

/** A region the operation's area does not serve. */
export class UnknownRegionError extends UsageError {
  constructor(message: string) {
    super(message, 'UNKNOWN_REGION');
    this.name = 'UnknownRegionError';
  }
}

/** Input the operation cannot take (missing path parameter, unknown name, body where none is accepted). */
export class InvalidInputError extends UsageError {
  constructor(message: string) {
    super(message, 'INVALID_INPUT');
    this.name = 'InvalidInputError';
  }
}

/** Client configuration that cannot work (missing URL, bad retry policy...). */
export class InvalidClientOptionsError extends UsageError {
  constructor(message: string) {
    super(message, 'INVALID_CLIENT_OPTIONS');
    this.name = 'InvalidClientOptionsError';
  }
}

/** An async operation's Location the client cannot follow. */
export class UnfollowableOperationError extends UsageError {
  constructor(message: string) {
    super(message, 'UNFOLLOWABLE_OPERATION');
    this.name = 'UnfollowableOperationError';
  }
}

/** An OData filter the builder refuses to write (bad property path, wrong literal type). */
export class InvalidFilterError extends UsageError {
  constructor(message: string) {
    super(message, 'INVALID_FILTER');
    this.name = 'InvalidFilterError';
  }
}
