/**
 * Benchmark 11, two scheduler leaders forced at once (the advisory lock bypassed): two queue
 * executors, each on its own store connection as two daemons would be, fire the same 100
 * (schedule, fire time) pairs concurrently. Figures: fires, runs queued, double fires (target 0).
 * Run alone: npx tsx bench/11-two-leaders.ts
 */
import { loadPlaybook } from '../src/playbook/index.js';
import { createFireQueuer } from '../src/scheduler/fire-queuer.js';
import type { FireRequest } from '../src/scheduler/scheduler.js';
import { createPostgresRunStore } from '../src/store/postgres/index.js';
import { createQuietLogger, printFigures, rootDir } from './lib/harness.js';
import { createTestDatabase, startBenchCluster } from './lib/postgres.js';

const FIRES = 100;
const cluster = await startBenchCluster('11 two-leaders');
try {
  const url = await createTestDatabase(cluster.adminUrl, 'fleetbook_bench');
  const playbook = loadPlaybook(`${rootDir}test/scheduler/fixtures/nightly/nightly-subscription-report.yaml`).playbook;
  const schedule = playbook?.schedules[0];
  if (!playbook || !schedule) throw new Error('the scheduler fixture did not load');
  const stores = [await createPostgresRunStore({ url }), await createPostgresRunStore({ url })];
  const logger = createQuietLogger();
  const leaders = stores.map((store) => createFireQueuer({ store, logger, env: {} }));
  const started = performance.now();
  await Promise.all(
    Array.from(
      { length: FIRES },
      (_, index) => new Date(Date.parse('2026-03-01T05:00:00Z') + index * 86_400_000),
    ).flatMap((scheduledAt) =>
      leaders.map((execute, leader) => {
        const request: FireRequest = {
          playbook,
          schedule,
          runId: `fire-${scheduledAt.getTime()}-${leader}`,
          scheduledAt,
          catchUp: false,
          resume: false,
          signal: new AbortController().signal,
        };
        return execute(request);
      }),
    ),
  );
  const elapsedMs = performance.now() - started;
  const runs = await stores[0]!.listRuns({ limit: 10 * FIRES });
  const perFire = new Map<string, number>();
  for (const run of runs) perFire.set(run.id.split('-')[1] ?? '', (perFire.get(run.id.split('-')[1] ?? '') ?? 0) + 1);
  const doubles = [...perFire.values()].filter((n) => n > 1).length;
  const missing = FIRES - perFire.size;
  for (const store of stores) await store.close();
  printFigures(
    '11 two-leaders',
    `${FIRES} fires offered by 2 leaders at once (${2 * FIRES} attempts in ${(elapsedMs / 1000).toFixed(2)} s): ${runs.length} runs queued, ${missing} fires missing, double fires ${doubles}`,
    [
      { label: `double fires ${doubles} = 0`, pass: doubles === 0 },
      { label: `missing ${missing} = 0`, pass: missing === 0 },
    ],
  );
} finally {
  cluster.stop();
}
