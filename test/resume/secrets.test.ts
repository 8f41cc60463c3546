// Secret inputs on resume: never stored, so a secret given at the start must be given again.
import { createServer, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { askHidden } from '../../src/cli/commands/resume-action.js';
import { createBench, fixture, type Bench } from './harness.js';

let bench: Bench | undefined;
let server: Server | undefined;
let tokens: string[] = [];
let hookUrl = '';
beforeEach(async () => {
  tokens = [];
  server = createServer((request, response) => {
    tokens.push(String(request.headers['x-token']));
    response.end('ok');
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
});
afterEach(async () => {
  await bench?.close();
  bench = undefined;
  await new Promise((resolve) => server?.close(resolve));
});

/** A run of the fixture whose first step fails once, so it is left to resume. */
async function failedRun(inputs: string[]): Promise<string> {
  bench = await createBench();
  bench.sim.control.faults.set({ rules: [{ route: 'privateCloud.listSystems', status: 400, count: 1 }] });
  const first = await bench.cli(['run', fixture('secret-token.yaml'), '-i', `hookUrl=${hookUrl}`, ...inputs]);
  expect(first.code).toBe(1);
  return first.result!.runId;
}

describe('secret inputs on resume', () => {
  it('a secret given at the start is not replaced by its default: SECRET_INPUT_MISSING (exit 2) until FLEETBOOK_INPUT_<NAME> gives it', async () => {
    const runId = await failedRun(['-i', 'token=real-token-123']);
    const refused = await bench!.cli(['resume', runId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `run ${runId} was started with the secret input 'token' given, and secrets are never stored: set FLEETBOOK_INPUT_TOKEN to resume`,
    );
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(tokens).toEqual([]);
    expect(bench!.sim.control.requests({ operationId: 'privateCloud.listSystems' })).toHaveLength(1);

    const resumed = await bench!.cli(['resume', runId], { FLEETBOOK_INPUT_TOKEN: 'real-token-123' });
    expect(resumed.code).toBe(0);
    expect(tokens).toEqual(['real-token-123']);
    // Only the fact that it was given is kept, never the value.
    expect(JSON.stringify(await bench!.journal(runId))).not.toContain('real-token-123');
  });

  it('a secret that took its default at the start takes it again', async () => {
    const runId = await failedRun([]);
    const resumed = await bench!.cli(['resume', runId]);
    expect(resumed.code).toBe(0);
    expect(tokens).toEqual(['default-token']);
  });

  it('the terminal prompt reads the secret without echoing it', async () => {
    const input = new PassThrough();
    let shown = '';
    const output = { write: (chunk: string) => ((shown += chunk), true) };
    const answer = askHidden("secret input 'token' (not stored, not shown): ", output, input);
    input.write('s3cret-typed\r');
    expect(await answer).toBe('s3cret-typed');
    expect(shown).toBe("secret input 'token' (not stored, not shown): \n");
  });
});
