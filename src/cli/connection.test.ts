import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, createSecretRegistry } from '../logging/index.js';
import { openConnection } from './connection.js';

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'fleetbook-connection-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const base = () => ({ logger: createLogger({ level: 'silent' }), secrets: createSecretRegistry(), cwd });

describe('openConnection', () => {
  it('reads a profile of fleetbook.yaml, the variables winning over it, and registers the client secret', async () => {
    writeFileSync(
      join(cwd, 'fleetbook.yaml'),
      'profiles:\n  lab:\n    clientId: lab-client\n    clientSecret: lab-secret-value\n    authUrl: https://auth.lab.test\n    baseUrl: https://api.lab.test\n    regionalUrl: https://{region}.lab.test\n',
    );
    const options = base();
    const connection = await openConnection({
      ...options,
      profile: 'lab',
      env: { FLEETBOOK_BASE_URL: 'https://override.test' },
    });
    expect(connection.description).toBe('https://override.test as lab-client');
    expect(connection.client.describeRequest('devices.listDevices').url).toMatch(/^https:\/\/override\.test\//);
    expect(options.secrets.scrub('the secret is lab-secret-value')).toBe('the secret is [REDACTED]');
  });

  it('names the missing variables and --target simulator', async () => {
    await expect(openConnection({ ...base(), env: { FLEETBOOK_CLIENT_ID: 'x' } })).rejects.toMatchObject({
      code: 'NO_CONNECTION',
      exitCode: 2,
      message: expect.stringMatching(
        /FLEETBOOK_CLIENT_SECRET, FLEETBOOK_AUTH_URL, FLEETBOOK_BASE_URL, FLEETBOOK_REGIONAL_URL are not set.*--target simulator/,
      ),
    });
  });

  it('refuses an unknown profile and an unknown target', async () => {
    writeFileSync(join(cwd, 'fleetbook.yaml'), 'profiles:\n  lab: { clientId: a }\n');
    await expect(openConnection({ ...base(), profile: 'prod', env: {} })).rejects.toThrow(
      /has no profile 'prod' \(profiles: lab\)/,
    );
    await expect(openConnection({ ...base(), target: 'staging', env: {} })).rejects.toThrow(
      /--target must be 'simulator'/,
    );
  });
});
