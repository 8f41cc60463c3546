/**
 * The pace a user can set and see: a profile of fleetbook.yaml sets per-group limits, and the
 * client follows the limit a server states in its ratelimit-* headers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/index.js';
import { openConnection } from '../../src/cli/connection.js';
import { createLogger, createSecretRegistry } from '../../src/logging/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { captureStream } from '../support/cli.js';

let dir: string;
let sim: Simulator | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-pace-'));
});
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const logger = () => createLogger({ level: 'silent', secrets: createSecretRegistry(), destination: captureStream() });
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function connectionEnv(simulator: Simulator): NodeJS.ProcessEnv {
  const admin = simulator.clients.find((client) => client.clientId === 'sim-admin');
  return {
    FLEETBOOK_CLIENT_ID: admin?.clientId,
    FLEETBOOK_CLIENT_SECRET: admin?.clientSecret,
    FLEETBOOK_AUTH_URL: simulator.authUrl,
    FLEETBOOK_BASE_URL: simulator.baseUrl,
    FLEETBOOK_REGIONAL_URL: simulator.regionalUrl,
    FLEETBOOK_REGION: 'us-west',
  };
}

/**
 * Starts `count` listings of systems at once; how many reached the simulator after `ms`.
 * Real time on purpose: the pace under test is requests per wall-clock minute as the platform
 * counts them, through the real client and server (the limiter's logic has virtual-time unit
 * tests in src/api/rate-limiter.test.ts).
 */
async function listingsSentWithin(call: () => Promise<unknown>, count: number, ms: number): Promise<number> {
  const calls = Array.from({ length: count }, () => call().catch(() => undefined));
  await settle(ms);
  const sent = sim?.control.requests({ operationId: 'privateCloud.listSystems' }).length ?? 0;
  void Promise.allSettled(calls);
  return sent;
}

describe('pace', () => {
  it("a profile's rateLimits.perMinute paces a group with no published limit (600 a minute otherwise)", async () => {
    sim = await startSimulator({ port: 0 });
    writeFileSync(
      join(dir, 'fleetbook.yaml'),
      'profiles:\n  slow:\n    rateLimits: { perMinute: { privateCloud: 1 } }\n',
    );
    const slow = await openConnection({
      profile: 'slow',
      cwd: dir,
      env: connectionEnv(sim),
      logger: logger(),
      secrets: createSecretRegistry(),
    });
    // One start, then one a minute: the other two wait.
    expect(
      await listingsSentWithin(
        () => slow.client.invoke('privateCloud.listSystems', { limit: 10 }, { signal: AbortSignal.timeout(2000) }),
        3,
        500,
      ),
    ).toBe(1);
  });

  it('refuses a malformed rateLimits with exit-2 usage errors naming the field', async () => {
    sim = await startSimulator({ port: 0 });
    writeFileSync(
      join(dir, 'fleetbook.yaml'),
      'profiles:\n  bad:\n    rateLimits: { perMinute: { privateCloud: 0 } }\n  typo:\n    rateLimits: { defaultPerMinut: 5 }\n',
    );
    const open = (profile: string) =>
      openConnection({
        profile,
        cwd: dir,
        env: connectionEnv(sim as Simulator),
        logger: logger(),
        secrets: createSecretRegistry(),
      });
    await expect(open('bad')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining(
        'profiles.bad.rateLimits.perMinute.privateCloud must be a whole number of requests a minute (at least 1), got 0',
      ) as string,
    });
    await expect(open('typo')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining("rateLimits has no 'defaultPerMinut'") as string,
    });
  });

  it('follows the limit the server states in ratelimit-limit over the published one', async () => {
    // The simulator states 1 a minute for privateCloud; the client would otherwise send at 600 a minute.
    sim = await startSimulator({ port: 0, rateLimits: { privateCloud: 1 } });
    const env = connectionEnv(sim);
    const client = createPlatformClient({
      credentials: { clientId: env.FLEETBOOK_CLIENT_ID ?? '', clientSecret: env.FLEETBOOK_CLIENT_SECRET ?? '' },
      authUrl: sim.authUrl,
      baseUrl: sim.baseUrl,
      regionalUrl: sim.regionalUrl,
      region: 'us-west',
      retry: { maxAttempts: 1 },
    });
    await client.invoke('privateCloud.listSystems', { limit: 10 });
    // After the first answer the client keeps to 1 a minute: nothing more is sent (no request refused with 429 either).
    expect(
      await listingsSentWithin(
        () => client.invoke('privateCloud.listSystems', { limit: 10 }, { signal: AbortSignal.timeout(2000) }),
        3,
        500,
      ),
    ).toBe(1);
  });
});
