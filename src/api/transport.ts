/**
 * One HTTP exchange with undici: sends, waits for the response head within a timeout, and
 * turns transport failures into typed errors. Status handling is the caller's. The same
 * timeout bounds each wait for the next piece of the body, so a server that sends its
 * head and then stalls fails the call instead of holding it for undici's 300 s default.
 */
import { request, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { linkSignal } from '../timers/index.js';
import { createTransportError, isSafeToRetry, RequestTimeoutError, type ResponseHeaders } from './errors.js';

export interface OutgoingRequest {
  operationId: string;
  /** Whether the request changes state (decides whether its failures are retryable). */
  write: boolean;
  url: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body?: string;
  dispatcher?: Dispatcher | undefined;
  /** Time allowed until the response head arrives, and then between two pieces of the body, in ms. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface IncomingResponse {
  status: number;
  headers: ResponseHeaders;
  body: Dispatcher.ResponseData['body'];
}

/** Lower-case names, repeated headers joined with `, `. */
export function normaliseHeaders(headers: IncomingHttpHeaders): ResponseHeaders {
  const out: ResponseHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export async function sendRequest(outgoing: OutgoingRequest): Promise<IncomingResponse> {
  const linked = linkSignal(outgoing.signal, outgoing.timeoutMs);
  const signal = linked.signal;
  try {
    const response = await request(outgoing.url, {
      method: outgoing.method,
      headers: outgoing.headers,
      body: outgoing.body,
      dispatcher: outgoing.dispatcher,
      signal,
      // The signal's timer is released once the head is in; undici's idle timer takes over for
      // the body (a read of it then fails with UND_ERR_BODY_TIMEOUT, a RequestTimeoutError).
      bodyTimeout: outgoing.timeoutMs,
    });
    return { status: response.statusCode, headers: normaliseHeaders(response.headers), body: response.body };
  } catch (error) {
    if (outgoing.signal?.aborted) throw outgoing.signal.reason;
    if (linked.timedOut()) {
      throw new RequestTimeoutError(
        `${outgoing.operationId}: no answer within ${outgoing.timeoutMs} ms. ${outgoing.write ? 'The write may have been applied: check the resource before running again.' : 'The call is repeated with backoff.'}`,
        'REQUEST_TIMEOUT',
        { operationId: outgoing.operationId, retryable: isSafeToRetry({ timeout: true }, outgoing.write) },
      );
    }
    throw createTransportError(outgoing.operationId, error, outgoing.write);
  } finally {
    linked.dispose();
  }
}

/**
 * Reads a body to a string, keeping at most `maxChars` (error bodies can be whole HTML pages).
 * A body that stalls or breaks is a typed transport error of the request's operation.
 */
export async function readText(
  body: IncomingResponse['body'],
  request: Pick<OutgoingRequest, 'operationId' | 'write'>,
  maxChars = Infinity,
): Promise<string> {
  try {
    if (maxChars === Infinity) return await body.text();
    let text = '';
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (text.length < maxChars) text += chunk.toString('utf8');
    }
    return text.slice(0, maxChars);
  } catch (error) {
    throw createTransportError(request.operationId, error, request.write);
  }
}
