import { withoutSecretKeys } from '../logging/index.js';
import { MalformedBody } from './errors.js';

/** One request as `/_sim/requests` shows it. */
export interface RequestLogEntry {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Empty for paths that match no operation. */
  operationId: string;
  clientId?: string;
  /** 0 when the connection was dropped before an answer. */
  status: number;
  /** Region the request named; absent for global and region-agnostic requests. */
  region?: string;
  /** Real time the request arrived. */
  time: string;
  /** Simulated time the request arrived. */
  simTime: string;
  durationMs: number;
  /**
   * The request body as the simulator parsed it (JSON, or the token endpoint's form), the
   * values of secret keys (`client_secret`, `password`, ...) replaced by `[REDACTED]`;
   * absent when the request had none.
   */
  body?: unknown;
  /** Set when fault injection dropped the connection (`before` or `after` the handler ran). */
  dropped?: 'before' | 'after';
}

/** Oldest entries go once this many are kept, so a long-running simulator stays small. */
const MAX_ENTRIES = 100_000;

export interface RequestLog {
  add(entry: RequestLogEntry): void;
  list(filter?: { operationId?: string }): RequestLogEntry[];
  clear(): void;
}

export function createRequestLog(): RequestLog {
  let entries: RequestLogEntry[] = [];
  return {
    add(entry) {
      entries.push(entry);
      // Trimming in batches keeps `add` cheap.
      if (entries.length > MAX_ENTRIES * 1.1) entries = entries.slice(-MAX_ENTRIES);
    },
    list: (filter = {}) =>
      filter.operationId ? entries.filter((e) => e.operationId === filter.operationId) : [...entries],
    clear() {
      entries = [];
    },
  };
}

/** What the log keeps of an arriving request. */
export interface ArrivingRequest {
  method: string;
  /** The request URL; its query string is not kept. */
  url: string;
  body: unknown;
}

export function withoutQuery(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? url : url.slice(0, at);
}

/**
 * Adds the entry of an arriving request (status 0 until answered), with its body as sent
 * (secret keys scrubbed) so tests can prove what was sent; a body that is not JSON is not kept.
 */
export function logArrival(
  log: RequestLog,
  request: ArrivingRequest,
  operationId: string,
  simTime: string,
): RequestLogEntry {
  const entry: RequestLogEntry = {
    method: request.method,
    path: withoutQuery(request.url),
    operationId,
    status: 0,
    time: new Date().toISOString(),
    simTime,
    durationMs: 0,
  };
  const { body } = request;
  if (body !== undefined && body !== null && !(body instanceof MalformedBody)) entry.body = withoutSecretKeys(body);
  log.add(entry);
  return entry;
}

/** Real milliseconds since `startedReal` (a `performance.now()`), to the hundredth, as the log shows durations. */
export function elapsedSince(startedReal: number): number {
  return Math.round((performance.now() - startedReal) * 100) / 100;
}
