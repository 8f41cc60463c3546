/**
 * Benchmark 10, a worker SIGKILLed mid rolling update: per trial, a fresh simulator (every write
 * held 100 ms, so a kill often lands on one in flight) and database; the run is queued, worker A
 * (`--claim-ttl 3s`) claims it and is killed at a random moment of the run (seeded), worker B
 * takes it over once the claim lapses and finishes it. Figures: trials whose run succeeded,
 * update POSTs repeated (from the simulator's request log; target 0), the take-over time from the
 * kill to B resuming (target ≤ the claim TTL + 5 s).
 * Needs the built CLI (`npm run build`). Run alone: npx tsx bench/10-worker-takeover.ts [--quick]
 */
import { join } from 'node:path';
import { startTeam, until } from '../test/postgres/team-harness.js';
import { printFigures, quick, rootDir } from './lib/harness.js';
import { startBenchCluster } from './lib/postgres.js';

const TRIALS = quick ? 3 : 10;
const CLAIM_TTL_MS = 3000;
const WRITES = [
  'privateCloud.runSoftwarePrechecks',
  'privateCloud.runSoftwareUpdate',
  'privateCloud.resumeSoftwareUpdate',
];
const playbook = join(rootDir, 'test', 'resume', 'fixtures', 'rolling-update.yaml');

/** mulberry32: the same kill moments on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = seeded(19);
const cluster = await startBenchCluster('10 worker-takeover');
const takeOvers: number[] = [];
let succeeded = 0;
let repeated = 0;
try {
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const team = await startTeam(cluster.adminUrl);
    try {
      await fetch(`${team.simulatorUrl}/_sim/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: WRITES.map((route) => ({ route, latencyMs: 100 })) }),
      });
      const queued = await team.command(['run', playbook, '--queue', '--json']);
      const runId = (JSON.parse(queued.stdout.trim()) as { runId: string }).runId;
      const first = team.fleetbook(['worker', '--claim-ttl', `${CLAIM_TTL_MS}ms`, '--poll', '50ms']);
      // A random moment of the run: after 5 to 45 journal entries (the run writes more than 60).
      const killAfter = 5 + Math.floor(random() * 40);
      await until(async () => (await team.journal(runId)).length >= killAfter, 60_000, 'the kill point');
      first.child.kill('SIGKILL');
      const killedAt = Date.now();
      await first.exited;
      const second = team.fleetbook(['worker', '--claim-ttl', `${CLAIM_TTL_MS}ms`, '--poll', '50ms']);
      await until(
        async () =>
          second.stdout().includes('"event":"run.resuming"') || (await team.run(runId))?.status === 'succeeded',
        30_000,
        'the take-over',
      );
      takeOvers.push(Date.now() - killedAt);
      await until(
        async () => ['succeeded', 'failed'].includes((await team.run(runId))?.status ?? ''),
        90_000,
        'the end of the run',
      );
      if ((await team.run(runId))?.status === 'succeeded') succeeded += 1;
      second.child.kill('SIGTERM');
      await second.exited;
      const counts = new Map<string, number>();
      for (const entry of await team.requestLog()) {
        if (
          entry.method === 'POST' &&
          WRITES.includes(entry.operationId) &&
          !(entry.status >= 400 && entry.status < 500)
        )
          counts.set(entry.path, (counts.get(entry.path) ?? 0) + 1);
      }
      repeated += [...counts.values()].filter((count) => count > 1).length;
    } finally {
      await team.close();
    }
  }
} finally {
  cluster.stop();
}
const worst = Math.max(...takeOvers);
const mean = takeOvers.reduce((sum, value) => sum + value, 0) / takeOvers.length;
printFigures(
  '10 worker-takeover',
  `${TRIALS} trials, claim TTL ${CLAIM_TTL_MS / 1000} s: ${succeeded} runs finished on the second worker, update POSTs repeated ${repeated}, ` +
    `take-over mean ${(mean / 1000).toFixed(1)} s, worst ${(worst / 1000).toFixed(1)} s`,
  [
    { label: `succeeded ${succeeded}/${TRIALS}`, pass: succeeded === TRIALS },
    { label: `repeated POSTs ${repeated} = 0`, pass: repeated === 0 },
    {
      label: `worst take-over ${(worst / 1000).toFixed(1)} s ≤ ${CLAIM_TTL_MS / 1000 + 5} s`,
      pass: worst <= CLAIM_TTL_MS + 5000,
    },
  ],
);
