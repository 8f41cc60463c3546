/**
 * The request timeout against a real HTTP server whose answers send their head and then
 * stall: every body read (a JSON answer, an error body, a download) fails with the client's
 * timeout error instead of waiting for undici's 300 s default.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from './client.js';
import { RequestTimeoutError } from './errors.js';
import { testCredentials } from './testing.js';

let server: Server;
let agent: Agent;
let directory: string;
let url: string;
/** The requests the server received, as `METHOD path`. */
let received: string[];

/** Answers the token request; every other request gets its head and the start of a body, then nothing. */
function handle(request: IncomingMessage, response: ServerResponse): void {
  received.push(`${request.method} ${request.url}`);
  if (request.url === '/as/token.oauth2') {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'token-1', token_type: 'Bearer', expires_in: 7199 }));
    return;
  }
  if (request.url?.endsWith('/contents')) {
    response.writeHead(200, { 'content-type': 'text/csv' }).write('date,cost\n2026-01-01,1.5\n');
    return;
  }
  if (request.url === '/devices/v1/devices/broken') {
    response.writeHead(503, { 'content-type': 'application/json' }).write('{"httpStatusCode":503,');
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' }).write('{"id":');
}

beforeEach(async () => {
  received = [];
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = new Agent();
  directory = await mkdtemp(join(tmpdir(), 'fleetbook-stall-'));
});

/** A client of the stalling server; one attempt per call unless told otherwise. */
function clientOf(maxAttempts = 1): PlatformClient {
  return createPlatformClient({
    credentials: testCredentials,
    authUrl: url,
    baseUrl: url,
    regionalUrl: url,
    region: 'eu-central',
    dispatcher: agent,
    requestTimeoutMs: 300,
    retry: { maxAttempts, initialDelayMs: 1, maxDelayMs: 5 },
  });
}

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await agent.close();
  await rm(directory, { recursive: true, force: true });
});

// undici checks its body timer about once a second: each stalled attempt takes up to ~1.5 s.
describe('a body that stalls after the head', { timeout: 20_000 }, () => {
  it('fails a read with the timeout error, which is retried like any read timeout', async () => {
    const error = await clientOf(2)
      .devices.getDevice({ id: 'dev-1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', operationId: 'devices.getDevice', retryable: true });
    expect(received.filter((line) => line.startsWith('GET /devices/'))).toEqual([
      'GET /devices/v1/devices/dev-1',
      'GET /devices/v1/devices/dev-1',
    ]);
  });

  it('fails a write with the timeout error and does not repeat it', async () => {
    const error = await clientOf(2)
      .devices.addDevices({ body: { network: [], compute: [], storage: [] } })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', operationId: 'devices.addDevices', retryable: false });
    expect((error as Error).message).toContain('The write may have been applied');
    expect(received.filter((line) => line.startsWith('POST /devices/'))).toHaveLength(1);
  });

  it('fails on an error body that stalls', async () => {
    const error = await clientOf()
      .devices.getDevice({ id: 'broken' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', operationId: 'devices.getDevice' });
  });

  it('fails a download to a file, leaving no partial file behind', async () => {
    const target = join(directory, 'usage.csv');
    const error = await clientOf()
      .download('consumptionAnalytics.downloadReportContents', { id: 'rep-1' }, target)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      operationId: 'consumptionAnalytics.downloadReportContents',
    });
    expect(await readdir(directory)).toEqual([]);
  });
});
