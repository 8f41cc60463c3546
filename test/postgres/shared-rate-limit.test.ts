// The global rate limiter: two clients (as two processes would have them, each with its own store
// connection) share one budget per (connection, group) through the store; on PostgreSQL and on
// SQLite (several processes on one machine). Asserted from the simulator's request log, as lower
// bounds on the spread of the requests (a loaded machine only spreads them more).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '../../src/api/index.js';
import { storeRateBudget } from '../../src/cli/connection.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import { createSqliteRunStore } from '../../src/store/sqlite/index.js';
import type { RunStore } from '../../src/store/types.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();
const OPERATION = 'privateCloud.listSystems';
const PER_MINUTE = 600;
const PER_CLIENT = 30;

let simulator: Simulator;
let dir: string;
beforeAll(async () => {
  simulator = await startSimulator({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-shared-rate-'));
});
afterAll(async () => {
  await simulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

function client(store: RunStore | undefined): PlatformClient {
  const probe = createPlatformClient({
    credentials: { clientId: 'sim-admin', clientSecret: 'sim-admin-secret' },
    authUrl: simulator.authUrl,
    baseUrl: simulator.baseUrl,
    regionalUrl: simulator.regionalUrl,
  });
  const operation = probe.catalogue.byId.get(OPERATION);
  const group = operation?.rateLimit?.group ?? operation?.area ?? '';
  return createPlatformClient({
    credentials: { clientId: 'sim-admin', clientSecret: 'sim-admin-secret' },
    authUrl: simulator.authUrl,
    baseUrl: simulator.baseUrl,
    regionalUrl: simulator.regionalUrl,
    region: 'us-west',
    rateLimits: { perMinute: { [group]: PER_MINUTE } },
    ...(store ? { sharedRateBudget: storeRateBudget(store, `sim-admin@${simulator.baseUrl}`) } : {}),
  });
}

/** Both clients send PER_CLIENT requests at once; the span (ms) of the request log's arrivals. */
async function spanOf(stores: [RunStore | undefined, RunStore | undefined]): Promise<number> {
  const before = simulator.control.requests({ operationId: OPERATION }).length;
  await Promise.all(
    stores
      .map((store) => client(store))
      .flatMap((each) => Array.from({ length: PER_CLIENT }, () => each.invoke(OPERATION, {}))),
  );
  const times = simulator.control
    .requests({ operationId: OPERATION })
    .slice(before)
    .map((entry) => Date.parse(entry.time));
  expect(times).toHaveLength(2 * PER_CLIENT);
  return Math.max(...times) - Math.min(...times);
}

// 60 requests at 10 a second with a burst of 10 need 5 s when the budget is shared; each client
// alone would be done in 2 s (30 requests, its own burst of 10).
const sharedSpanMs = ((2 * PER_CLIENT - PER_MINUTE / 60) * 60_000) / PER_MINUTE;

describe('one rate budget for several processes', () => {
  it('without a shared store each client spends the whole budget (the comparison)', async () => {
    expect(await spanOf([undefined, undefined])).toBeLessThan(sharedSpanMs * 0.9);
  });

  it('on SQLite: two stores on one file (two processes on one machine) share it', async () => {
    const file = join(dir, 'runs.sqlite');
    const stores: [RunStore, RunStore] = [createSqliteRunStore({ file }), createSqliteRunStore({ file })];
    try {
      expect(await spanOf(stores)).toBeGreaterThanOrEqual(sharedSpanMs * 0.9);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it.skipIf(!adminUrl)(
    'on PostgreSQL: two connections (two machines) share it, and a pushed bucket holds both off',
    async () => {
      const url = await createTestDatabase(adminUrl ?? '');
      const stores: [RunStore, RunStore] = [
        await createPostgresRunStore({ url }),
        await createPostgresRunStore({ url }),
      ];
      try {
        expect(await spanOf(stores)).toBeGreaterThanOrEqual(sharedSpanMs * 0.9);
        // A 429 or a spent quota seen by one process: the other waits too.
        const budget = storeRateBudget(stores[0], 'conn');
        await budget.push('reporting', 20_000, PER_MINUTE, 10);
        const waitMs = await storeRateBudget(stores[1], 'conn').take('reporting', PER_MINUTE, 10);
        expect(waitMs).toBeGreaterThan(15_000);
      } finally {
        for (const store of stores) await store.close();
      }
    },
  );
});
