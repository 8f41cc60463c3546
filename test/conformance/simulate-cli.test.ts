/**
 * `fleetbook simulate` as an operator runs it: a child process of the built CLI
 * (`npm run build` first, as `npm test` does), its connection JSON or text on stdout, the
 * platform served to the API client with the world and faults files given, exit 0 on
 * SIGTERM and SIGINT, exit 2 with a located message for a bad file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = `${root}bin/fleetbook.js`;
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-simulate-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const tokenOf = async (url: string, clientId: string, clientSecret: string) => {
  const response = await fetch(`${url}/as/token.oauth2`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; expires_in: number };
};

describe('fleetbook simulate (child process)', () => {
  it('prints its connection JSON, serves the platform, exits 0 on SIGTERM', async () => {
    expect(existsSync(`${root}dist/cli/main.js`), 'dist/ is missing: run `npm run build` first').toBe(true);
    const child = spawn(
      process.execPath,
      [bin, 'simulate', '--port', '0', '--json', '--time-scale', '60', '--seed', '3', '--check-responses'],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buffered = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          buffered += chunk;
          const end = buffered.indexOf('\n');
          if (end >= 0) resolve(buffered.slice(0, end));
        });
        child.once('exit', (code) => reject(new Error(`simulate exited ${code} before printing: ${stderr}`)));
      });
      const connection = JSON.parse(line) as {
        url: string;
        authUrl: string;
        baseUrl: string;
        regionalUrl: string;
        region: string;
        clients: Array<{ clientId: string; clientSecret: string; role: string }>;
      };
      expect(connection.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(connection.regionalUrl).toBe(`${connection.url}/regions/{region}`);
      expect(connection.region).toBe('us-west');
      expect(connection.clients.map((client) => `${client.clientId}:${client.role}`)).toEqual([
        'sim-admin:Administrator',
        'sim-operator:Operator',
        'sim-observer:Observer',
      ]);
      const admin = connection.clients[0]!;
      const client = createPlatformClient({
        credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
        authUrl: connection.authUrl,
        baseUrl: connection.baseUrl,
        regionalUrl: connection.regionalUrl,
        region: 'eu-west',
      });
      expect((await client.privateCloud.listSystems()).body.total).toBeGreaterThan(0);
      expect((await client.users.listUsers()).body.total).toBe(25);
      const world = (await (await fetch(`${connection.url}/_sim/world`)).json()) as { seed: number; timeScale: number };
      expect(world).toMatchObject({ seed: 3, timeScale: 60 });
      // --check-responses: every answer above was checked against the description, and matched.
      expect(await (await fetch(`${connection.url}/_sim/violations`)).json()).toEqual({ checking: true, items: [] });
      child.kill('SIGTERM');
      const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      await expect(fetch(`${connection.url}/_sim/world`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('plain text with a world file (clients, token lifetime, rate limits) and a faults file; exits 0 on SIGINT', async () => {
    const world = file('world.yaml', [
      'seed: 7',
      'clients:',
      '  - { clientId: auditor, clientSecret: auditor-pass, role: Observer }',
      'tokenLifetimeSeconds: 90',
      "rateLimits: { 'users.list': 2 }",
    ]);
    const faults = file('faults.yaml', ['rules:', '  - { route: workspaces.listTenants, status: 503, count: 1 }']);
    const child = spawn(process.execPath, [bin, 'simulate', '--port', '0', '--world', world, '--faults', faults], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    try {
      const text = await new Promise<string>((resolve, reject) => {
        let buffered = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          buffered += chunk;
          if (buffered.includes('Press Ctrl-C to stop.\n')) resolve(buffered);
        });
        child.once('exit', (code) => reject(new Error(`simulate exited ${code} before printing: ${stderr}`)));
      });
      const url = /^Simulator listening on (http:\/\/127\.0\.0\.1:\d+) \(seed 7, time scale 1\)$/m.exec(text)?.[1];
      expect(url, text).toBeDefined();
      const lines = text.split('\n');
      expect(lines).toContain(`  export FLEETBOOK_AUTH_URL=${url}`);
      expect(lines).toContain(`  export FLEETBOOK_REGIONAL_URL='${url}/regions/{region}'`);
      // Without it, regional calls that name no region have no address (a team's workers included).
      expect(lines).toContain(`  export FLEETBOOK_REGION=us-west`);
      expect(lines).toContain(`  export FLEETBOOK_CLIENT_ID=sim-admin`);
      expect(lines.filter((line) => line.includes('secret: ')).map((line) => line.trim().split(/\s+/))).toEqual([
        ['sim-admin', 'Administrator', 'secret:', 'sim-admin-secret'],
        ['sim-operator', 'Operator', 'secret:', 'sim-operator-secret'],
        ['sim-observer', 'Observer', 'secret:', 'sim-observer-secret'],
        ['auditor', 'Observer', 'secret:', 'auditor-pass'],
      ]);

      // The world file's client, token lifetime and rate limit.
      const token = await tokenOf(url!, 'auditor', 'auditor-pass');
      expect(token.expires_in).toBe(90);
      const get = (path: string) =>
        fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token.access_token}` } });
      expect((await get('/identity/v1/users')).status).toBe(200);
      expect((await get('/identity/v1/users')).status).toBe(200);
      const limited = await get('/identity/v1/users');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('ratelimit-limit')).toBe('2');
      // The faults file's rule, once.
      expect((await get('/workspaces/v1/msp-tenants')).status).toBe(503);
      expect((await get('/workspaces/v1/msp-tenants')).status).toBe(200);

      child.kill('SIGINT');
      const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      await expect(fetch(`${url}/_sim/world`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses a bad world or faults file before listening: exit 2, every problem located, no stack trace', () => {
    const world = file('bad-world.yaml', ['tokenLifetimeSeconds: 0', "rateLimits: { 'users.lists': 2 }"]);
    const badWorld = spawnSync(process.execPath, [bin, 'simulate', '--port', '0', '--world', world], {
      cwd: root,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(badWorld.status).toBe(2);
    expect(badWorld.stdout).toBe('');
    expect(badWorld.stderr).toContain(`${world}:1:23 (/tokenLifetimeSeconds): must be >= 1`);
    expect(badWorld.stderr).toContain(`${world}:2:13 (/rateLimits): key 'users.lists' must be one of`);
    expect(badWorld.stderr).not.toMatch(/^\s+at /m);
    const faults = file('bad-faults.yaml', ['revokeTokens: { afterRequests: soon }']);
    const badFaults = spawnSync(process.execPath, [bin, 'simulate', '--port', '0', '--faults', faults], {
      cwd: root,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(badFaults.status).toBe(2);
    expect(badFaults.stderr).toContain(`${faults}:1:32 (/revokeTokens/afterRequests): must be integer`);
    expect(badFaults.stderr).not.toMatch(/^\s+at /m);
  });
});
