/**
 * Benchmark 4, rolling-update makespan: the bundled `rolling-cluster-update` playbook on N systems
 * of 3 clusters each (N = 200), cluster by cluster, 20 systems at a time, against the simulator
 * at a time scale (no pinned failures). Each cluster is a 5-minute precheck then a 45-minute
 * update (simulated), so a system's chain is 150 minutes and the lower bound of the makespan is
 * max(longest chain, Σ chains / concurrency). Figure: the wall time of the update loop (from the
 * journal; the whole run's is printed too) / that bound (target ≤ 1.05). The waits poll at the interval the simulator suggests (30 simulated s).
 * Run alone: npx tsx bench/4-rolling-update-makespan.ts [--quick]
 */
import { join } from 'node:path';
import { runPlaybook } from '../src/engine/index.js';
import { listFleet } from './lib/fleet.js';
import {
  createBenchClient,
  createQuietLogger,
  createTempStore,
  loadBenchPlaybook,
  printFigures,
  quick,
  rootDir,
  withWaitBounds,
} from './lib/harness.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const TARGET_RATIO = 1.05;
const TIME_SCALE = 1_000;
const CONCURRENCY = 20;
const CLUSTERS = 3;
const CHAIN_SIMULATED_MS = CLUSTERS * (5 + 45) * 60_000;
const count = quick ? 40 : 200;
const UNLIMITED = 1_000_000;

const sim = await startSimulatorProcess({
  world: { privateCloud: { systems: count * 12, failures: [] } },
  timeScale: TIME_SCALE,
  rateLimitScale: 1_000,
});
const temp = createTempStore();
try {
  const client = createBenchClient(sim, {
    rateLimits: { defaultPerMinute: UNLIMITED, perMinute: { privateCloud: UNLIMITED, dataServices: UNLIMITED } },
  });
  const chosen = (await listFleet(client))
    .filter(
      (system) =>
        system.state === 'ONLINE' &&
        system.updateSupported &&
        system.clusterIds.length === CLUSTERS &&
        system.offers('2.4.0'),
    )
    .slice(0, count);
  if (chosen.length < count)
    throw new Error(`only ${chosen.length} systems of ${CLUSTERS} clusters with an update path`);

  const playbook = withWaitBounds(loadBenchPlaybook(join(rootDir, 'playbooks', 'rolling-cluster-update.yaml')), {
    minPollMs: 30_000 / TIME_SCALE,
  });
  const result = await runPlaybook(playbook, {
    inputs: {
      catalogVersion: '2.4.0',
      systemIds: chosen.map((system) => system.id),
      maxParallelSystems: CONCURRENCY,
      clusterByCluster: true,
      maxResumes: 0,
    },
    client,
    store: temp.store,
    logger: createQuietLogger(),
    env: {},
    outputsDir: temp.outputsDir,
  });
  const outputs = result.outputs as { systems?: { succeeded: number; failed: number } } | undefined;
  if (result.status !== 'succeeded' || outputs?.systems?.succeeded !== count) {
    throw new Error(`the run ${result.status}: ${JSON.stringify(result.error ?? outputs?.systems)}`);
  }
  const boundSimulatedMs = Math.max(CHAIN_SIMULATED_MS, (count * CHAIN_SIMULATED_MS) / CONCURRENCY);
  const boundMs = boundSimulatedMs / TIME_SCALE;
  // The makespan of the update is the `systems` loop's, from its journal entries; the whole run
  // adds the catalog and system listing before it and the table after it.
  const journal = await temp.store.journal(result.runId);
  const loopAt = (type: string): number =>
    Date.parse(journal.find((entry) => entry.event.type === type && entry.event.path === 'systems')?.at ?? '');
  const makespanMs = loopAt('step.finished') - loopAt('step.started');
  const ratio = makespanMs / boundMs;
  printFigures(
    '4 rolling-update-makespan',
    `${count} systems × ${CLUSTERS} clusters, concurrency ${CONCURRENCY}, time scale ${TIME_SCALE}: makespan ${(makespanMs / 1000).toFixed(1)} s ` +
      `(${((makespanMs * TIME_SCALE) / 60_000).toFixed(0)} simulated min; the whole run ${(result.durationMs / 1000).toFixed(1)} s) ` +
      `against a lower bound of ${(boundMs / 1000).toFixed(1)} s (${boundSimulatedMs / 60_000} min); ratio ${ratio.toFixed(3)}`,
    [{ label: `makespan ratio ${ratio.toFixed(3)} ≤ ${TARGET_RATIO}`, pass: ratio <= TARGET_RATIO }],
  );
} finally {
  await temp.dispose();
  await sim.close();
}
