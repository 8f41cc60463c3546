import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { MalformedBody } from './errors.js';

/**
 * The fastify instance every route is served on, with the platform's body parsers: forms
 * for the token endpoint, and JSON that is never refused here. A body that is not JSON goes
 * through the pipeline like any request (logged, faults, auth first, deprecation and
 * rate-limit headers) and is refused as 400 at the input check (`refuseMalformedBody`).
 */
export function createHttpApp(logger: boolean): FastifyInstance {
  const app = Fastify({
    logger,
    routerOptions: { maxParamLength: 1000 },
    bodyLimit: 10 * 1024 * 1024,
    // Closing drops every connection, a request in flight included: only idle ones are dropped
    // by default, and one busy at that moment then stayed open as keep-alive (72 s), holding the
    // close (a test's teardown) that long. A stopping simulator owes its clients no answer.
    forceCloseConnections: true,
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, formFields(body as string));
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const tolerantJsonParser = (
    request: FastifyRequest,
    body: string,
    done: (error: Error | null, parsed?: unknown) => void,
  ): void => {
    void parseJson(request, body, (error: Error | null, parsed?: unknown) => {
      if (error) return done(null, new MalformedBody(body, error));
      // The input check, the request log and the handlers walk a body recursively: a body nested
      // 10,000 deep overflowed the stack there (a 500). Refused here, as any body that is not JSON.
      if (nestsDeeperThan(parsed, MAX_BODY_DEPTH))
        return done(null, new MalformedBody('', new Error(`it nests more than ${MAX_BODY_DEPTH} levels deep`)));
      done(null, parsed);
    });
  };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, tolerantJsonParser);
  app.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'string' }, tolerantJsonParser);
  return app;
}

/** Deeper than any body the platform's operations take: their schemas nest a few levels. */
export const MAX_BODY_DEPTH = 64;

/** True when `value` holds arrays or objects nested more than `max` deep (walked without recursion). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth >= max) return true;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth: next.depth + 1 });
  }
  return false;
}

/** A form's fields; one given more than once is kept as the list of its values (the token endpoint refuses it). */
function formFields(body: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const earlier = fields[key];
    fields[key] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
  }
  return fields;
}

/** Where a listening simulator answers. */
export interface Addresses {
  /** Origin, e.g. `http://127.0.0.1:43121`. */
  url: string;
  port: number;
}

/** Starts listening (port 0 picks a free one); a wildcard host is answered at 127.0.0.1. */
export async function listen(app: FastifyInstance, host: string, requestedPort: number): Promise<Addresses> {
  await app.listen({ port: requestedPort, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : requestedPort;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${port}`, port };
}
