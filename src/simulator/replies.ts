import type { FastifyReply } from 'fastify';
import type { SimResponse } from './context.js';

/**
 * The content type of every JSON answer: what fastify makes of `application/json` for a
 * string, said in full for a Buffer (which fastify sends with the type as given).
 */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes a simulator answer: status, headers, then the streamed body, the JSON body (or its serialized text or bytes) or nothing. */
export function sendResponse(reply: FastifyReply, response: SimResponse): void {
  const { status, body, stream, headers } = response;
  reply.code(status);
  if (headers) reply.headers(headers);
  if (stream) void reply.send(stream);
  else if (response.json) void reply.type(JSON_TYPE).send(response.json);
  else if (body === undefined) void reply.send();
  else void reply.type('application/json').send(body);
}
