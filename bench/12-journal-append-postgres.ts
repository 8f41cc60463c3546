/**
 * Benchmark 12, journal append cost on PostgreSQL against SQLite: benchmark 1's workload (N `set`
 * steps in a `forEach`, N = 10,000) run by the engine with each store, in one process. Figures:
 * µs per journaled step on each, and their ratio. The cluster runs with `fsync=off` (a throwaway
 * one, as the tests use), so the PostgreSQL figure is the round trips', not a disk's.
 * Run alone: npx tsx bench/12-journal-append-postgres.ts [--quick]
 */
import { createPlatformClient } from '../src/api/index.js';
import { runPlaybook } from '../src/engine/index.js';
import { createPostgresRunStore } from '../src/store/postgres/index.js';
import type { RunStore } from '../src/store/types.js';
import { createQuietLogger, createTempStore, loadBenchPlaybook, ms, printFigures, quick } from './lib/harness.js';
import { createTestDatabase, startBenchCluster } from './lib/postgres.js';

const count = quick ? 2_000 : 10_000;
const playbook = loadBenchPlaybook('engine-overhead.yaml');
const logger = createQuietLogger();
const unused = 'http://127.0.0.1:9';
const client = createPlatformClient({
  credentials: { clientId: 'none', clientSecret: 'none' },
  authUrl: unused,
  baseUrl: unused,
  regionalUrl: unused,
});

async function usPerStep(
  store: RunStore,
  outputsDir: string,
): Promise<{ us: number; elapsedMs: number; entries: number }> {
  await runPlaybook(playbook, { inputs: { count: 200 }, client, store, logger, env: {}, outputsDir });
  const started = performance.now();
  const result = await runPlaybook(playbook, { inputs: { count }, client, store, logger, env: {}, outputsDir });
  const elapsedMs = performance.now() - started;
  if (result.status !== 'succeeded') throw new Error(`the run ${result.status}: ${JSON.stringify(result.error)}`);
  return { us: (elapsedMs * 1000) / count, elapsedMs, entries: (await store.journal(result.runId)).length };
}

const cluster = await startBenchCluster('12 journal-append-postgres');
const temp = createTempStore();
try {
  const sqlite = await usPerStep(temp.store, temp.outputsDir);
  const postgresStore = await createPostgresRunStore({
    url: await createTestDatabase(cluster.adminUrl, 'fleetbook_bench'),
  });
  const postgres = await usPerStep(postgresStore, temp.outputsDir).finally(() => postgresStore.close());
  printFigures(
    '12 journal-append-postgres',
    `${count} set steps in a forEach (${postgres.entries} journal entries): PostgreSQL ${postgres.us.toFixed(1)} µs/step (${ms(postgres.elapsedMs)}), ` +
      `SQLite ${sqlite.us.toFixed(1)} µs/step (${ms(sqlite.elapsedMs)}); ratio ${(postgres.us / sqlite.us).toFixed(1)}×`,
    [{ label: 'no target (info)', pass: true }],
  );
} finally {
  await temp.dispose();
  cluster.stop();
}
