/**
 * `/metrics` of a process that is not a server (`fleetbook worker` and `fleetbook daemon` with
 * `--metrics-port`): the process's own figures, as Prometheus scrapes each process. A bare HTTP
 * listener, on 127.0.0.1 unless told otherwise: it answers `GET /metrics` only, needs no token
 * (it holds no run data, secrets or names beyond playbooks and schedules), and is kept off other
 * machines by its address.
 */
import { createServer } from 'node:http';
import type { ProcessMetrics } from './metrics.js';

export interface MetricsEndpoint {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsEndpoint(
  metrics: ProcessMetrics,
  options: { host: string; port: number },
): Promise<MetricsEndpoint> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only /metrics is served here\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    metrics.render().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': metrics.contentType })
          .end(request.method === 'HEAD' ? undefined : text),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        // A scraper's keep-alive sockets must not hold the process open at its stop.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
