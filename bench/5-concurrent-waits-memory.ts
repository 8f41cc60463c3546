/**
 * Benchmark 5, memory: N concurrent waits (N = 5,000): a playbook starts one add-cluster operation
 * (10 simulated minutes) on each of N systems at once and follows every one to its end, with the
 * SQLite journal on. The playbook runs in a process of its own on the compiled engine, the
 * simulator in another, so the figure is Fleetbook's: the peak RSS of the run's process (target under 300 MB), with the number of waits that were in
 * flight together (operations accepted before the first one finished).
 * Run alone: npx tsx bench/5-concurrent-waits-memory.ts [--quick]
 */
import { join } from 'node:path';
import { listFleet } from './lib/fleet.js';
import { createBenchClient, printFigures, quick, rootDir, runPlaybookInChild } from './lib/harness.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const TARGET_MB = 300;
const TIME_SCALE = quick ? 60 : 30;
/** Polls every 5 s (the suggestion is 1 s at this scale): 5,000 waits make about 1,000 polls/s. */
const MIN_POLL_MS = 5_000;
const count = quick ? 1_000 : 5_000;
const UNLIMITED = 1_000_000;

const sim = await startSimulatorProcess({
  world: { privateCloud: { systems: Math.ceil(count * 1.6), failures: [] } },
  timeScale: TIME_SCALE,
  rateLimitScale: 10_000,
});
try {
  const client = createBenchClient(sim, { rateLimits: { defaultPerMinute: UNLIMITED } });
  const systems = (await listFleet(client)).filter((system) => system.state === 'ONLINE').slice(0, count);
  if (systems.length < count) throw new Error(`only ${systems.length} online systems for ${count} waits`);
  const systemsByRegion: Record<string, string[]> = {};
  for (const system of systems) (systemsByRegion[system.region] ??= []).push(system.id);
  const rateLimits = { defaultPerMinute: UNLIMITED, perMinute: { privateCloud: UNLIMITED, dataServices: UNLIMITED } };
  const result = await runPlaybookInChild({
    playbook: join(rootDir, 'bench', 'playbooks', 'concurrent-waits.yaml'),
    inputs: { systemsByRegion },
    connection: sim,
    wait: { minPollMs: MIN_POLL_MS },
    rateLimits,
    journal: true,
  });
  const peak = result.peakRssBytes / 1e6;
  if (result.status !== 'succeeded') throw new Error(`the run ${result.status}: ${JSON.stringify(result.error)}`);
  const journal = result.journal ?? [];
  const firstFinished = journal.findIndex((entry) => entry.event.type === 'operation.finished');
  const inFlight = journal.slice(0, firstFinished).filter((entry) => entry.event.type === 'request.answered').length;

  printFigures(
    '5 concurrent-waits-memory',
    `${count} waits (${inFlight} in flight together) in ${(result.durationMs / 1000).toFixed(1)} s: peak RSS ${peak.toFixed(0)} MB (heap in use at most ${((result.heapPeakBytes ?? 0) / 1e6).toFixed(0)} MB, off-heap ${((result.externalPeakBytes ?? 0) / 1e6).toFixed(0)} MB)`,
    [{ label: `peak RSS ${peak.toFixed(0)} MB < ${TARGET_MB}`, pass: peak < TARGET_MB }],
  );
} finally {
  await sim.close();
}
