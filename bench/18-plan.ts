/**
 * Benchmark 18, `fleetbook plan` against `fleetbook run --dry-run` (issue 42): the bundled
 * rolling update of 200 systems (3 clusters each, all clusters of a system in one request) on
 * a simulator of its own, in this process through the CLI's `main`, alternately, three times
 * each. A plan does the dry run's reads plus one read per planned write (the system each
 * precheck and update touches): the ratio says what reviewing a change costs. Target ≤ 1.2×.
 * Run alone: npx tsx bench/18-plan.ts [--quick]
 */
import { Writable } from 'node:stream';
import { main } from '../src/cli/main.js';
import type { CliIo } from '../src/cli/io.js';
import { startSimulator } from '../src/simulator/index.js';
import { createTempStore, ms, printFigures, quick } from './lib/harness.js';

const SYSTEMS = quick ? 50 : 200;
const ROUNDS = quick ? 1 : 3;
const temp = createTempStore();
const sim = await startSimulator({
  port: 0,
  timeScale: 60_000,
  world: { privateCloud: { systems: SYSTEMS, clustersPerSystem: 3, failures: [] } },
});
const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
const env = {
  FLEETBOOK_HOME: temp.dir,
  FLEETBOOK_CLIENT_ID: admin?.clientId,
  FLEETBOOK_CLIENT_SECRET: admin?.clientSecret,
  FLEETBOOK_AUTH_URL: sim.authUrl,
  FLEETBOOK_BASE_URL: sim.baseUrl,
  FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
  FLEETBOOK_REGION: 'us-west',
};
const sink = (): Writable => new Writable({ write: (_chunk, _encoding, done) => done() });
const inputs = ['-i', 'clusterByCluster=false', '-i', `maxParallelSystems=20`, '-i', 'catalogVersion=2.4.0'];

/** Wall time of one CLI command, in this process; throws on a non-zero exit. */
async function timed(args: string[]): Promise<number> {
  const io: CliIo = { stdout: sink(), stderr: sink(), env, version: 'bench' };
  const started = performance.now();
  const code = await main(args, io);
  if (code !== 0) throw new Error(`fleetbook ${args.join(' ')} exited ${code}`);
  return performance.now() - started;
}

try {
  const dry: number[] = [];
  const plan: number[] = [];
  // A warm-up of each, not counted: module loading and the simulator's first views.
  await timed(['run', 'rolling-cluster-update', '--dry-run', '--log-level', 'error', '-o', 'json', ...inputs]);
  await timed(['plan', 'rolling-cluster-update', '--log-level', 'error', ...inputs]);
  for (let round = 0; round < ROUNDS; round += 1) {
    dry.push(
      await timed(['run', 'rolling-cluster-update', '--dry-run', '--log-level', 'error', '-o', 'json', ...inputs]),
    );
    plan.push(await timed(['plan', 'rolling-cluster-update', '--log-level', 'error', ...inputs]));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const ratio = median(plan) / median(dry);
  printFigures(
    '18 plan',
    `rolling-cluster-update of ${SYSTEMS} systems × 3 clusters (one request a system): dry run median ${ms(median(dry))}, plan median ${ms(median(plan))} (${ROUNDS} each, alternately); ratio ${ratio.toFixed(2)}×`,
    [{ label: `ratio ${ratio.toFixed(2)} ≤ 1.2`, pass: ratio <= 1.2 }],
  );
} finally {
  await sim.close();
  await temp.dispose();
}
