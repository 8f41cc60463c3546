/**
 * Slow and stuck: an async operation that never finishes ends in the wait's deadline with a
 * clear error; a server that accepts connections and never answers trips the client's
 * request timeout, a bounded number of times, instead of hanging the caller.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/index.js';
import { FIXTURES, startReliabilityHarness, writeOutcomes, type ReliabilityHarness } from './harness.js';

let harness: ReliabilityHarness | undefined;
let silent: { server: Server; sockets: Set<Socket> } | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (silent) {
    for (const socket of silent.sockets) socket.destroy();
    const { server } = silent;
    await new Promise((resolve) => server.close(resolve));
  }
  silent = undefined;
});

/** A TCP server on 127.0.0.1 that accepts every connection, reads, and never answers. */
async function startSilentServer(): Promise<{ url: string; connections: () => number; requests: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let requests = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on(
      'data',
      (chunk: Buffer) => (requests += (chunk.toString('latin1').match(/^(GET|POST|PUT|PATCH|DELETE) /gm) ?? []).length),
    );
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  silent = { server, sockets };
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, connections: () => connections, requests: () => requests };
}

describe('an async operation that never finishes', () => {
  it('ends the run at the wait deadline with a clear error, the next step not started, the precheck posted once', async () => {
    const h = (harness = await startReliabilityHarness({
      simulator: { faults: { asyncOperations: [{ type: 'software-prechecks', outcome: 'never' }] } },
    }));
    const systems = await h.client.invoke('privateCloud.listSystems', { filter: "name eq 'hci-us-west-01'" });
    const systemId = (systems.body as { items: Array<{ id: string }> }).items[0]?.id;
    const startedAt = Date.now();
    const result = await h.run(join(FIXTURES, 'stuck-precheck.yaml'), { systemId });
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(
      /no terminal state after \d+ s of waiting; the operation may still be running on the platform/,
    );
    expect(result.steps.map((step) => [step.path, step.status])).toEqual([
      ['precheck', 'failed'],
      ['after', 'notStarted'],
    ]);
    const failed = result.steps[0];
    expect(failed?.error).toMatchObject({ code: 'WAIT_TIMEOUT' });
    expect([...writeOutcomes(h.sim.control.requests()).values()]).toEqual([
      { applied: 1, notApplied: 0, sentAgain: [] },
    ]);
    // It was polled, and the operation is indeed still running on the platform.
    const polls = h.sim.control.requests({ operationId: 'dataServices.getAsyncOperation' });
    expect(polls.length).toBeGreaterThan(1);
    const logged = h
      .lines()
      .find(
        (line) => line.level === 50 || (typeof line.msg === 'string' && line.msg.includes('WAIT_DEADLINE_EXCEEDED')),
      );
    expect(logged, 'no log line reports the failed wait').toBeDefined();
  });
});

describe('a server that stops answering', () => {
  const options = (url: string) => ({
    credentials: { clientId: 'sim-operator', clientSecret: 'sim-operator-secret' },
    baseUrl: url,
    regionalUrl: url,
    region: 'us-west',
    requestTimeoutMs: 150,
    retry: { maxAttempts: 3, initialDelayMs: 5, maxDelayMs: 20 },
  });

  it('a read times out after each attempt and fails with a timeout error once its attempts are spent, not a hang', async () => {
    const h = (harness = await startReliabilityHarness());
    const server = await startSilentServer();
    const client = createPlatformClient({ ...options(server.url), authUrl: h.sim.authUrl });
    const startedAt = Date.now();
    const error = await client.invoke('privateCloud.listSystems', {}).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    const elapsedMs = Date.now() - startedAt;
    expect(error instanceof Error && error.name).toBe('RequestTimeoutError');
    expect((error as Error).message).toMatch(/privateCloud\.listSystems: no answer within 150 ms/);
    expect(server.requests()).toBe(3);
    expect(elapsedMs).toBeGreaterThanOrEqual(3 * 150);
    expect(elapsedMs).toBeLessThan(3_000);
  });

  it('a write times out once and is not sent again: its outcome is unknown', async () => {
    const h = (harness = await startReliabilityHarness());
    const server = await startSilentServer();
    const client = createPlatformClient({ ...options(server.url), authUrl: h.sim.authUrl });
    const error = await client
      .invoke('privateCloud.runSoftwarePrechecks', { id: 'some-system', body: { catalogVersion: '2.4.0' } })
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(error instanceof Error && error.name).toBe('RequestTimeoutError');
    expect((error as Error).message).toMatch(/no answer within 150 ms\. The write may have been applied/);
    expect(server.requests()).toBe(1);
  });

  it('a token endpoint that stops answering fails the call with a timeout too', async () => {
    const server = await startSilentServer();
    const client = createPlatformClient({ ...options(server.url), authUrl: server.url });
    const startedAt = Date.now();
    await expect(client.invoke('privateCloud.listSystems', {})).rejects.toThrow(
      /no answer within 150 ms|timed out|timeout/i,
    );
    expect(Date.now() - startedAt).toBeLessThan(3_000);
    expect(server.requests()).toBeGreaterThanOrEqual(1);
  });
});
