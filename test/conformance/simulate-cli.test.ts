/**
 * `fleetbook simulate` as an operator runs it: a child process of the built CLI
 * (`npm run build` first, as `npm test` does), its connection JSON on stdout, the platform
 * served to the API client, exit 0 on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = `${root}bin/fleetbook.js`;

describe('fleetbook simulate (child process)', () => {
  it('prints its connection JSON, serves the platform, exits 0 on SIGTERM', async () => {
    expect(existsSync(`${root}dist/cli/main.js`), 'dist/ is missing: run `npm run build` first').toBe(true);
    const child = spawn(process.execPath, [bin, 'simulate', '--port', '0', '--json', '--time-scale', '60', '--seed', '3'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
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
      const connection = JSON.parse(line) as { url: string; authUrl: string; baseUrl: string; regionalUrl: string; clients: Array<{ clientId: string; clientSecret: string; role: string }> };
      expect(connection.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(connection.regionalUrl).toBe(`${connection.url}/regions/{region}`);
      expect(connection.clients.map((client) => `${client.clientId}:${client.role}`)).toEqual(['sim-admin:Administrator', 'sim-operator:Operator', 'sim-observer:Observer']);
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
      child.kill('SIGTERM');
      const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      await expect(fetch(`${connection.url}/_sim/world`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
