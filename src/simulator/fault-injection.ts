import type { FastifyReply } from 'fastify';
import { SimHttpError } from './errors.js';
import type { RequestLogEntry } from './request-log.js';

/**
 * An injected fault's answer. Its retry hint (30 s for 5xx, 1 s for 429) is simulated time
 * like every other duration of the simulated platform, so at a time scale of 6000 a client
 * that honours it waits 5 ms, not 30 real seconds per fault.
 */
export function injectedStatus(status: number, timeScale: number): SimHttpError {
  const retryable = status === 429 || status >= 500;
  return new SimHttpError(
    status,
    status >= 500 ? 'SERVICE_UNAVAILABLE' : 'INJECTED_FAULT',
    `Injected fault: this request was answered ${status} by the simulator's fault settings`,
    retryable ? [{ type: 'retry info', retryAfterSeconds: (status >= 500 ? 30 : 1) / timeScale }] : undefined,
  );
}

/** A dropped connection: the socket is destroyed without an answer, and the log says when. */
export function dropConnection(reply: FastifyReply, entry: RequestLogEntry, when: 'before' | 'after'): void {
  entry.dropped = when;
  reply.hijack();
  reply.request.raw.socket.destroy();
}
