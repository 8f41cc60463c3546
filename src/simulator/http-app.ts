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
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const tolerantJsonParser = (
    request: FastifyRequest,
    body: string,
    done: (error: Error | null, parsed?: unknown) => void,
  ): void => {
    void parseJson(request, body, (error: Error | null, parsed?: unknown) =>
      done(null, error ? new MalformedBody(body, error) : parsed),
    );
  };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, tolerantJsonParser);
  app.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'string' }, tolerantJsonParser);
  return app;
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
