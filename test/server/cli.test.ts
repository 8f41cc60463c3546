/**
 * The commands around the server: `fleetbook tokens` (printed once, listed without secrets,
 * revoked), `runs list|show|logs` reading a server's API (FLEETBOOK_SERVER + FLEETBOOK_TOKEN)
 * instead of the store, and `fleetbook server` as a process: it listens, answers /healthz,
 * refuses an invalid playbook folder (exit 2) and stops cleanly on SIGTERM (exit 0).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { jsonLines, runCli } from '../support/cli.js';
import { spawnCli } from '../support/spawn-cli.js';
import { startTestServer, type TestServer } from './harness.js';

const PLAYBOOK = `name: quick
description: one log line
steps:
  - id: hello
    log: "hello from the server"
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-server-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('fleetbook tokens', () => {
  it('prints a token once, lists tokens without it, revokes by name', async () => {
    const env = { FLEETBOOK_HOME: join(dir, 'tokens-home') };
    const created = await runCli(['tokens', 'create', '--role', 'operator', '--name', 'ci pipeline'], { env });
    expect(created.code).toBe(0);
    const secret = /fbk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0];
    expect(secret).toBeDefined();
    const listed = await runCli(['tokens', 'list', '-o', 'json'], { env });
    expect(jsonLines(listed.stdout)).toEqual([expect.objectContaining({ name: 'ci pipeline', role: 'operator' })]);
    expect(listed.stdout).not.toContain(secret);
    const again = await runCli(['tokens', 'create', '--role', 'viewer', '--name', 'ci pipeline'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("An API token named 'ci pipeline' exists already");
    const badRole = await runCli(['tokens', 'create', '--role', 'root', '--name', 'x'], { env });
    expect(badRole).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--role must be one of viewer, operator, admin'),
    });
    const revoked = await runCli(['tokens', 'revoke', 'ci pipeline'], { env });
    expect(revoked.code).toBe(0);
    expect(jsonLines((await runCli(['tokens', 'list', '-o', 'json'], { env })).stdout)[0]?.revokedAt).toEqual(
      expect.any(String),
    );
    expect((await runCli(['tokens', 'revoke', 'nobody'], { env })).code).toBe(2);
  });
});

describe('runs against a server', () => {
  let t: TestServer;
  let runId: string;
  beforeAll(async () => {
    t = await startTestServer({ 'quick.yaml': PLAYBOOK });
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'quick' } });
    runId = (started.body as { run: { id: string } }).run.id;
    while ((await t.store.getRun(runId))?.status === 'running') await new Promise((resolve) => setTimeout(resolve, 20));
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists, shows and reads the log of the server’s runs with a token, and no store', async () => {
    // FLEETBOOK_HOME points nowhere useful: everything comes from the server.
    const env = { FLEETBOOK_SERVER: t.url, FLEETBOOK_TOKEN: t.tokens.viewer, FLEETBOOK_HOME: join(dir, 'empty-home') };
    const list = await runCli(['runs', 'list', '-o', 'json'], { env });
    expect(list.code).toBe(0);
    expect(jsonLines(list.stdout)).toEqual([
      expect.objectContaining({ id: runId, playbook: 'quick', status: 'succeeded' }),
    ]);
    const show = await runCli(['runs', 'show', runId.slice(0, 8)], { env });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`Run ${runId}  quick  succeeded`);
    expect(show.stdout).toMatch(/hello\s+succeeded/);
    const logs = await runCli(['runs', 'logs', runId], { env });
    expect(logs.stdout).toContain('hello  log: hello from the server');
    const refused = await runCli(['runs', 'list'], { env: { ...env, FLEETBOOK_TOKEN: 'fbk_000000000000_nope' } });
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('refused FLEETBOOK_TOKEN') });
    const noToken = await runCli(['runs', 'list'], { env: { FLEETBOOK_SERVER: t.url } });
    expect(noToken).toMatchObject({ code: 2, stderr: expect.stringContaining('set FLEETBOOK_TOKEN too') });
  });
});

describe('fleetbook server (a process)', () => {
  it('listens, answers /healthz, and stops on SIGTERM with exit 0', async () => {
    const playbooks = join(dir, 'server-playbooks');
    mkdirSync(playbooks);
    writeFileSync(join(playbooks, 'quick.yaml'), PLAYBOOK);
    writeFileSync(
      join(playbooks, 'catalogs.yaml'),
      'name: catalogs\nsteps:\n  - id: list\n    call: privateCloud.listSoftwareCatalogs\n',
    );
    const home = join(dir, 'server-home');
    const created = await runCli(['tokens', 'create', '--role', 'operator', '--name', 'metrics', '-o', 'json'], {
      env: { FLEETBOOK_HOME: home },
    });
    const token = String(jsonLines(created.stdout)[0]?.token);
    // A simulator of its own, named as a real platform is (FLEETBOOK_*): the shared rate buckets are used then.
    const sim = await startSimulator({ port: 0, timeScale: 6000 });
    const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
    const server = spawnCli(['server', '--port', '0', '--playbooks', playbooks], {
      FLEETBOOK_HOME: home,
      FLEETBOOK_CLIENT_ID: admin?.clientId,
      FLEETBOOK_CLIENT_SECRET: admin?.clientSecret,
      FLEETBOOK_AUTH_URL: sim.authUrl,
      FLEETBOOK_BASE_URL: sim.baseUrl,
      FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
      FLEETBOOK_REGION: 'us-west',
    });
    onTestFinished(() => sim.close());
    await server.waitFor('"event":"server.listening"');
    const url = /"url":"(http:\/\/[^"]+)"/.exec(server.stdout())?.[1];
    const health = await fetch(`${url}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${url}/api/v1/runs`)).status).toBe(401);
    const auth = { authorization: `Bearer ${token}` };
    const started = await fetch(`${url}/api/v1/runs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ playbook: 'catalogs' }),
    });
    expect(started.status).toBe(202);
    // The platform exchange of the run (the client's log line) and the shared bucket's wait, counted by group.
    const metrics = async () => (await fetch(`${url}/metrics`, { headers: auth })).text();
    await expect
      .poll(metrics, { timeout: 20_000 })
      .toMatch(/^fleetbook_api_requests_total\{group="[^"]+",status="200"\} 1$/m);
    expect(await metrics()).toMatch(/^fleetbook_rate_limit_wait_seconds_count\{group="[^"]+"\} [1-9]/m);
    expect(await server.signal('SIGTERM')).toBe(0);
    expect(server.stdout()).toContain('"event":"server.stopped"');
  });

  it('serves a daemon’s own metrics with --metrics-port (127.0.0.1, no token), closed at its stop', async () => {
    const playbooks = join(dir, 'daemon-playbooks');
    mkdirSync(playbooks);
    writeFileSync(join(playbooks, 'quick.yaml'), PLAYBOOK);
    const daemon = spawnCli(['daemon', '--target', 'simulator', '--metrics-port', '0', '--playbooks', playbooks], {
      FLEETBOOK_HOME: join(dir, 'daemon-home'),
    });
    await daemon.waitFor('"event":"metrics.listening"');
    const url = /"event":"metrics.listening"[^\n]*"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(
      daemon.stdout(),
    )?.[1];
    expect(url).toBeDefined();
    const answer = await fetch(url ?? '');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
    const text = await answer.text();
    expect(text).toContain('# TYPE fleetbook_scheduler_events_total counter');
    expect(text).toContain('# TYPE fleetbook_step_duration_seconds histogram');
    expect(text).not.toContain('fleetbook_http_requests_total');
    expect(await daemon.signal('SIGTERM')).toBe(0);
    await expect(fetch(url ?? '')).rejects.toThrow();
    for (const command of ['worker', 'daemon'])
      expect(
        await runCli([command, '--metrics-port', 'ninety'], { env: { FLEETBOOK_HOME: join(dir, 'bad-home') } }),
      ).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('--metrics-port must be a port number'),
      });
  });

  it('refuses to start on a folder with an invalid playbook (exit 2)', async () => {
    const playbooks = join(dir, 'bad-playbooks');
    mkdirSync(playbooks);
    writeFileSync(join(playbooks, 'bad.yaml'), 'name: bad\nsteps:\n  - id: a\n    call: nope.nothing\n');
    const outcome = await runCli(['server', '--port', '0', '--playbooks', playbooks], {
      env: { FLEETBOOK_HOME: join(dir, 'bad-home') },
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('fleetbook server: not started');
    const badPort = await runCli(['server', '--port', 'eighty'], { env: { FLEETBOOK_HOME: join(dir, 'bad-home') } });
    expect(badPort).toMatchObject({ code: 2, stderr: expect.stringContaining('--port must be a port number') });
    // With the embedded store the server is the only one to drive its runs: --no-worker is refused.
    mkdirSync(join(dir, 'empty-playbooks'));
    const noWorker = await runCli(
      ['server', '--no-worker', '--port', '0', '--playbooks', join(dir, 'empty-playbooks')],
      {
        env: { FLEETBOOK_HOME: join(dir, 'bad-home') },
      },
    );
    expect(noWorker).toMatchObject({ code: 2, stderr: expect.stringContaining('--no-worker needs a shared store') });
  });
});
