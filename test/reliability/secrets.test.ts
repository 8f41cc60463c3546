/**
 * No secret in any log line, output or journal entry. The scope is this suite's own runs,
 * chosen to take every path a secret can: `fleetbook run` with a secret input and
 * `FLEETBOOK_CLIENT_SECRET` against a simulator, JSON lines on standard output and
 * `--log-file`, a webhook whose headers and body carry the secrets and come back echoed, a
 * failed run whose error echoes the input, a dry run, `fleetbook runs show`, and the SQLite
 * store read back raw. (The other files of the suite scan their own logs and journals too.)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { secretSpellings } from '../../src/logging/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runStoreFileName } from '../../src/store/index.js';
import { FIXTURES, leaksIn, TOKEN_PATTERN } from './harness.js';
import { runCli, type CliOutcome } from '../support/cli.js';

const TOKEN = 'tok-Reliab1lity-5ecret-4417';
const HOOK_TOKEN = 'hook-Reliab1lity-5ecret-9083';
const CLIENT_SECRET = 'sim-operator-secret';
const SECRETS = [TOKEN, HOOK_TOKEN, CLIENT_SECRET];

let directory: string;
let sim: Simulator;
let webhook: Server;
let webhookUrl: string;
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'fleetbook-secrets-'));
  sim = await startSimulator({ port: 0, timeScale: 6000 });
  // The webhook echoes what it got: the secrets come back in the response the step records.
  webhook = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      const authorization = String(request.headers.authorization);
      // Echoed as given, and base64-encoded (as a server that logs its headers encoded would).
      const encoded = Buffer.from(authorization).toString('base64');
      // `/refused`: an error answer whose body carries the echo (an error body is recorded too).
      response.writeHead(request.url?.endsWith('/refused') ? 403 : 200, {
        'content-type': 'application/json',
        'x-echo-authorization': authorization,
        'x-echo': encoded,
      });
      response.end(JSON.stringify({ headers: request.headers, body, authorizationBase64: encoded }));
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  webhookUrl = `http://127.0.0.1:${(webhook.address() as { port: number }).port}/hook`;
});

afterAll(async () => {
  await sim.close();
  await new Promise((resolve) => webhook.close(resolve));
  rmSync(directory, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<CliOutcome> {
  const env = {
    FLEETBOOK_HOME: join(directory, 'home'),
    FLEETBOOK_CLIENT_ID: 'sim-operator',
    FLEETBOOK_CLIENT_SECRET: CLIENT_SECRET,
    FLEETBOOK_AUTH_URL: sim.authUrl,
    FLEETBOOK_BASE_URL: sim.baseUrl,
    FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
  };
  return runCli(args, { env });
}

/** Every row of the store, as stored. */
function storeText(): string {
  const database = new Database(join(directory, 'home', runStoreFileName), { readonly: true });
  try {
    return ['runs', 'journal', 'leases', 'schedule_state']
      .flatMap((table) => database.prepare(`SELECT * FROM ${table}`).all())
      .map((row) => JSON.stringify(row))
      .join('\n');
  } finally {
    database.close();
  }
}

it('fleetbook run, its dry run, runs show and the store: every secret used, none written anywhere', async () => {
  const playbook = join(FIXTURES, 'secrets.yaml');
  const logFile = join(directory, 'run.log');
  const inputs = ['-i', `token=${TOKEN}`, '-i', `hookToken=${HOOK_TOKEN}`, '-i', `webhookUrl=${webhookUrl}`];

  const run = await cli(['run', playbook, ...inputs, '--json', '--log-level', 'trace', '--log-file', logFile]);
  expect(run.code, run.stderr).toBe(1);
  const lines = run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const result = lines.at(-1)?.result as {
    runId: string;
    status: string;
    error: { message: string };
    steps: Array<{ path: string; status: string }>;
  };
  expect(result.status).toBe('failed');
  expect(result.steps.map((step) => [step.path, step.status])).toEqual([
    ['systems', 'succeeded'],
    ['note', 'succeeded'],
    ['hook', 'succeeded'],
    ['echoed', 'succeeded'],
    ['refuse', 'failed'],
  ]);
  // The secrets were really used: the platform saw the client, the webhook got both tokens.
  expect(sim.control.requests({ operationId: 'privateCloud.listSystems' })).toMatchObject([
    { clientId: 'sim-operator', status: 200 },
  ]);
  expect(received[0]?.headers.authorization).toBe(`Bearer ${HOOK_TOKEN}`);
  expect(received[0]?.headers['x-token']).toBe(TOKEN);
  expect(received[0]?.body).toContain(TOKEN);
  // ...and show up redacted where they would have been printed.
  expect(result.error.message).toContain('the platform refused token [REDACTED]');
  expect(run.stdout).toContain('using token [REDACTED]');

  const dryRun = await cli([
    'run',
    playbook,
    ...inputs,
    '--json',
    '--log-level',
    'trace',
    '--log-file',
    logFile,
    '--dry-run',
  ]);
  expect(dryRun.code).toBe(1);
  expect(dryRun.stdout).toMatch(/dry run: POST http:\/\/127\.0\.0\.1:\d+\/hook not sent/);
  expect(received).toHaveLength(1);

  const show = await cli(['runs', 'show', result.runId, '--json']);
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).toContain(result.runId);

  const written = {
    'run stdout': run.stdout,
    'run stderr': run.stderr,
    'dry run stdout': dryRun.stdout,
    'dry run stderr': dryRun.stderr,
    '--log-file': readFileSync(logFile, 'utf8'),
    'runs show': show.stdout,
    'SQLite store': storeText(),
  };
  expect(written['--log-file'].split('\n').filter(Boolean).length).toBeGreaterThan(10);
  expect(written['SQLite store']).toContain('step.finished');
  const leaks = Object.entries(written).flatMap(([where, text]) =>
    leaksIn(text, SECRETS).map((secret) => `${where}: ${secret}`),
  );
  expect(leaks).toEqual([]);
});

it('the scan itself finds a planted secret and a bearer token (it can fail)', () => {
  expect(leaksIn(`{"msg":"x ${TOKEN}"}`, SECRETS)).toEqual([TOKEN]);
  expect(leaksIn(`authorization: Bearer sim_${'ab'.repeat(24)}`, SECRETS)).toHaveLength(1);
  expect(TOKEN_PATTERN.test('sim_short')).toBe(false);
});

/** Every file under `folder` (the store, its WAL, spilled outputs), byte for byte as text. */
function filesUnder(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile())
      files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name)).toString('latin1');
  }
  return files;
}

it('values derived from a secret (encoded, cased, cut, split, passed on) and an echo in base64 are written nowhere, in any registered form', async () => {
  const token = 'tok-Derived1-5ecretValue-7731';
  const playbook = join(FIXTURES, 'derived-secrets.yaml');
  const logFile = join(directory, 'derived.log');
  const home = join(directory, 'derived-home');
  const env = {
    FLEETBOOK_HOME: home,
    FLEETBOOK_CLIENT_ID: 'sim-operator',
    FLEETBOOK_CLIENT_SECRET: CLIENT_SECRET,
    FLEETBOOK_AUTH_URL: sim.authUrl,
    FLEETBOOK_BASE_URL: sim.baseUrl,
    FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
  };
  const run = await runCli(
    [
      'run',
      playbook,
      '-i',
      `token=${token}`,
      '-i',
      `webhookUrl=${webhookUrl}`,
      '-i',
      `refusedUrl=${webhookUrl}/refused`,
      '--json',
      '--log-level',
      'trace',
      '--log-file',
      logFile,
    ],
    { env },
  );
  expect(run.code, run.stderr).toBe(1);
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as {
    result: { runId: string; steps: Array<{ path: string; status: string }>; error: { message: string } };
  };
  expect(result.result.steps.map((step) => [step.path, step.status])).toEqual([
    ['derived', 'succeeded'],
    ['passedOn', 'succeeded'],
    ['note', 'succeeded'],
    ['hook', 'succeeded'],
    ['refusedHook', 'failed'],
    ['refuse', 'failed'],
  ]);
  // The webhook got the token and answered it back encoded.
  expect(received.at(-1)?.headers.authorization).toBe(`Bearer ${token}`);
  expect(run.stdout).toContain('b64 [REDACTED], upper [REDACTED], cut [REDACTED]');
  const show = await runCli(['runs', 'show', result.result.runId, '--json'], { env });
  expect(show.code, show.stderr).toBe(0);

  const derived = [
    Buffer.from(token).toString('base64'),
    token.toUpperCase(),
    token.toLowerCase(),
    token.slice(3),
    ...token.split('-').filter((part) => part.length >= 6),
    Buffer.from(`Bearer ${token}`).toString('base64'),
  ];
  const forms = [...new Set([...secretSpellings(token), ...derived.flatMap((value) => secretSpellings(value))])];
  const written = {
    'run stdout': run.stdout,
    'run stderr': run.stderr,
    '--log-file': readFileSync(logFile, 'utf8'),
    'runs show': show.stdout,
    ...filesUnder(home),
  };
  // The webhook's answers (a 200 and a 403 error body), echo included, were recorded scrubbed: the scan covers them.
  expect(written['runs show']).toContain('authorizationBase64');
  expect(Object.keys(written).some((name) => name.endsWith(runStoreFileName))).toBe(true);
  const leaks = Object.entries(written).flatMap(([where, text]) =>
    forms.filter((form) => text.includes(form)).map((form) => `${where}: ${form}`),
  );
  expect(leaks).toEqual([]);
});

it('a secret spelled one character an expression and joined with spaces is redacted whole: stdout, log file, journal, outputs', async () => {
  const token = 'Zq7xWv3K';
  const spaced = token.split('').join(' ');
  const logFile = join(directory, 'split.log');
  const home = join(directory, 'split-home');
  const env = {
    FLEETBOOK_HOME: home,
    FLEETBOOK_CLIENT_ID: 'sim-operator',
    FLEETBOOK_CLIENT_SECRET: CLIENT_SECRET,
    FLEETBOOK_AUTH_URL: sim.authUrl,
    FLEETBOOK_BASE_URL: sim.baseUrl,
    FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
  };
  const args = ['run', join(FIXTURES, 'split-secret.yaml'), '-i', `token=${token}`, '--json', '--log-level', 'trace'];
  const run = await runCli([...args, '--log-file', logFile], { env });
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const result = lines.at(-1) as { result: { runId: string; outputs: Record<string, unknown> } };
  expect(result.result.outputs).toEqual({ spaced: '[REDACTED]', fromStep: '[REDACTED]' });
  expect(run.stdout).toContain('spelled [REDACTED]');
  expect(run.stdout).toContain('again [REDACTED]');
  const show = await runCli(['runs', 'show', result.result.runId, '--json'], { env });
  expect(show.code, show.stderr).toBe(0);
  const written = {
    'run stdout': run.stdout,
    'run stderr': run.stderr,
    '--log-file': readFileSync(logFile, 'utf8'),
    'runs show': show.stdout,
    ...filesUnder(home),
  };
  expect(Object.keys(written).some((name) => name.endsWith(runStoreFileName))).toBe(true);
  const leaks = Object.entries(written).flatMap(([where, text]) =>
    [token, spaced].filter((form) => text.includes(form)).map((form) => `${where}: ${form}`),
  );
  expect(leaks).toEqual([]);
});
