/**
 * Stopping the server: requests in flight are let finish, but not for ever. A client that stops
 * halfway through sending its request (or a connection kept alive after an answer) is dropped
 * once the grace period is over, so a SIGTERM ends the process in seconds, not minutes.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { startTestServer } from './harness.js';

it('drops a connection still sending its request once the grace period is over', async () => {
  const t = await startTestServer({}, { closeGraceMs: 100 });
  const { hostname, port } = new URL(t.url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  // The request line and a header, never the blank line that ends the headers.
  socket.write('GET /api/v1/runs HTTP/1.1\r\nHost: fleetbook\r\n');
  const dropped = once(socket, 'close');
  const began = Date.now();
  await t.close();
  // Node would wait for the headers for 60 s before giving up on them.
  expect(Date.now() - began).toBeLessThan(5_000);
  await dropped;
});
