// A webhook whose answer was lost is not sent again on resume without the operator's word.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createBench, fixture, type Bench } from './harness.js';

let bench: Bench | undefined;
let server: Server | undefined;
afterEach(async () => {
  await bench?.close();
  bench = undefined;
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A webhook receiver that takes the first request and drops the connection without answering. */
async function startHook(): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  server = createServer((request, response) => {
    received.push(request.method ?? '');
    request.resume();
    request.on('end', () => (received.length === 1 ? request.socket.destroy() : response.end('ok')));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hook`, received };
}

describe('fleetbook resume after a webhook of unknown outcome', () => {
  it('stops before a POST webhook (exit 2, OUTCOME_UNKNOWN) and sends it again only with --confirm-unknown', async () => {
    bench = await createBench();
    const hook = await startHook();
    const first = await bench.cli(['run', fixture('webhook.yaml'), '-i', `hookUrl=${hook.url}`]);
    expect(first.code).toBe(1);
    const runId = first.result!.runId;
    expect((await bench.journal(runId)).find((entry) => entry.event.type === 'request.failed')?.event).toMatchObject({
      path: 'notify',
      outcomeUnknown: true,
    });
    expect(hook.received).toEqual(['POST']);

    const refused = await bench.cli(['resume', runId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'cannot be reconciled: notify (POST webhook: a webhook leaves nothing the platform can show',
    );
    expect(refused.stderr).toContain('--confirm-unknown');
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(hook.received).toEqual(['POST']);
    expect(bench.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(0);

    const confirmed = await bench.cli(['resume', runId, '--confirm-unknown']);
    expect(confirmed.code).toBe(0);
    expect(hook.received).toEqual(['POST', 'POST']);
  });

  it('sends a GET webhook again without asking: reading twice changes nothing', async () => {
    bench = await createBench();
    const hook = await startHook();
    const first = await bench.cli(['run', fixture('webhook.yaml'), '-i', `hookUrl=${hook.url}`, '-i', 'method=GET']);
    expect(first.code).toBe(1);
    const resumed = await bench.cli(['resume', first.result!.runId]);
    expect(resumed.code).toBe(0);
    expect(hook.received).toEqual(['GET', 'GET']);
  });
});
