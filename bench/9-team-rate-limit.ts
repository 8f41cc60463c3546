/**
 * Benchmark 9, one rate budget for a team: runs of N reads of the privateCloud group queued in a
 * PostgreSQL store and driven by 4 workers (separate `fleetbook worker` processes) against a
 * simulator allowing 600 requests a minute for the group, then the same with 1 worker. Each
 * worker's client alone would pace at 600 a minute; they share one bucket through the store.
 * Figures per setup: requests served, achieved / allowed (allowed = the burst of 10 + 10/s over
 * the span of the requests; target ≥ 0.95 for 4 workers), 429s (target 0).
 * Needs the built CLI (`npm run build`). Run alone: npx tsx bench/9-team-rate-limit.ts [--quick]
 */
import { join } from 'node:path';
import { startTeam } from '../test/postgres/team-harness.js';
import { printFigures, quick, rootDir } from './lib/harness.js';
import { startBenchCluster } from './lib/postgres.js';

const PER_MINUTE = 600;
const BURST = Math.ceil(PER_MINUTE / 60);
const RUNS = 6;
const PER_RUN = quick ? 25 : 50;
const playbook = join(rootDir, 'bench', 'playbooks', 'team-gets.yaml');
const world = join(rootDir, 'bench', 'playbooks', 'team-world.yaml');

interface Outcome {
  workers: number;
  served: number;
  tooMany: number;
  spanS: number;
  ratio: number;
  /** The same past the first second (the start-up burst: reservations made before the first token arrived land together). */
  steadyRatio: number;
}

async function measure(adminUrl: string, workers: number): Promise<Outcome> {
  // A fresh simulator and database: both buckets start full.
  const team = await startTeam(adminUrl, { simulatorArgs: ['--world', world] });
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const queued = await team.command(['run', playbook, '--queue', '-i', `count=${PER_RUN}`]);
      if (queued.code !== 0) throw new Error(`queueing failed: ${queued.stderr}`);
    }
    const started = Array.from({ length: workers }, () =>
      team.fleetbook(['worker', '--exit-when-idle', '--concurrency', '2', '--poll', '100ms']),
    );
    const ends = await Promise.all(started.map((worker) => worker.exited));
    if (ends.some((end) => end.code !== 0))
      throw new Error(`a worker failed: ${started.map((worker) => worker.stderr()).join('\n')}`);
    const log = (await team.requestLog()).filter((entry) => entry.operationId === 'privateCloud.listSystems');
    const served = log.filter((entry) => entry.status === 200);
    const tooMany = log.filter((entry) => entry.status === 429).length;
    const times = served.map((entry) => Date.parse(entry.time));
    const spanS = (Math.max(...times) - Math.min(...times)) / 1000;
    const first = Math.min(...times);
    const steady = times.filter((time) => time >= first + 1000).length;
    return {
      workers,
      served: served.length,
      tooMany,
      spanS,
      ratio: served.length / (BURST + (PER_MINUTE / 60) * spanS),
      steadyRatio: steady / ((PER_MINUTE / 60) * (spanS - 1)),
    };
  } finally {
    await team.close();
  }
}

const cluster = await startBenchCluster('9 team-rate-limit');
try {
  const four = await measure(cluster.adminUrl, 4);
  const one = await measure(cluster.adminUrl, 1);
  const describe = (outcome: Outcome) =>
    `${outcome.workers} worker${outcome.workers === 1 ? '' : 's'}: ${outcome.served} served in ${outcome.spanS.toFixed(1)} s, achieved/allowed ${outcome.ratio.toFixed(3)} (after the first second ${outcome.steadyRatio.toFixed(3)}), 429s ${outcome.tooMany}`;
  printFigures(
    '9 team-rate-limit',
    `${RUNS} runs of ${PER_RUN} reads at a limit of ${PER_MINUTE}/min; ${describe(four)}; ${describe(one)}`,
    [
      { label: `4 workers ratio ${four.steadyRatio.toFixed(3)} ≥ 0.95`, pass: four.steadyRatio >= 0.95 },
      { label: `4 workers 429s ${four.tooMany} = 0`, pass: four.tooMany === 0 },
    ],
  );
} finally {
  cluster.stop();
}
