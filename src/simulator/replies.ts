import type { FastifyReply } from 'fastify';
import type { SimResponse } from './context.js';

/** Writes a simulator answer: status, headers, then the streamed body, the JSON body (or its serialized text) or nothing. */
export function sendResponse(reply: FastifyReply, response: SimResponse): void {
  const { status, body, stream, headers } = response;
  reply.code(status);
  if (headers) reply.headers(headers);
  if (stream) void reply.send(stream);
  else if (response.json) void reply.type('application/json').send(response.json);
  else if (body === undefined) void reply.send();
  else void reply.type('application/json').send(body);
}
