/**
 * Benchmark 3, polling economy: N async operations (N = 500) of known simulated durations
 * (version refresh 1 min, prechecks 5 min, add-cluster 10 min) started at once by a playbook and
 * followed to their end. The simulator suggests polling every 30 simulated seconds; at a time
 * scale of 30 that is 1 real second, the client's default lower bound, so nothing is overridden.
 * Figures: polls per operation against the minimum the interval allows (a first poll, then one
 * per interval until the end: 1 + ⌈(end − first poll) / interval⌉; target ≤ 1.1×), and the lag
 * between an operation's end (its `endedAt`, mapped to real time) and the engine journaling
 * `operation.finished` (median, p95, max).
 * Run alone: npx tsx bench/3-polling-economy.ts [--quick]
 */
import { runPlaybook } from '../src/engine/index.js';
import { listFleet, simulatedToReal } from './lib/fleet.js';
import {
  createBenchClient,
  createQuietLogger,
  createTempStore,
  loadBenchPlaybook,
  printFigures,
  quick,
  withWaitBounds,
} from './lib/harness.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const TARGET_RATIO = 1.1;
// Quick: twice as fast, the waits' lower bound lowered to the suggested interval.
const TIME_SCALE = quick ? 60 : 30;
const SUGGESTED_INTERVAL_SIMULATED_MS = 30_000;
const count = quick ? 100 : 500;
const intervalMs = SUGGESTED_INTERVAL_SIMULATED_MS / TIME_SCALE;
const UNLIMITED = 1_000_000;

const sim = await startSimulatorProcess({
  world: { privateCloud: { systems: Math.ceil(count * 1.4), failures: [] } },
  timeScale: TIME_SCALE,
  rateLimitScale: 1_000,
});
const temp = createTempStore();
try {
  const client = createBenchClient(sim, {
    rateLimits: { defaultPerMinute: UNLIMITED, perMinute: { privateCloud: UNLIMITED, dataServices: UNLIMITED } },
  });
  const online = (await listFleet(client)).filter((system) => system.state === 'ONLINE');
  if (online.length < count) throw new Error(`only ${online.length} online systems for ${count} operations`);
  const operations = online.slice(0, count).map((system, i) => ({
    id: system.id,
    region: system.region,
    // Prechecks only where every cluster offers the catalog; otherwise by position.
    kind:
      system.updateSupported && system.offers('2.4.0') && i % 3 === 1
        ? 'precheck'
        : i % 3 === 2
          ? 'addCluster'
          : 'refresh',
  }));

  const toReal = await simulatedToReal(sim.url);
  const result = await runPlaybook(
    withWaitBounds(loadBenchPlaybook('polling-economy.yaml'), { minPollMs: intervalMs }),
    {
      inputs: { operations },
      client,
      store: temp.store,
      logger: createQuietLogger(),
      env: {},
      outputsDir: temp.outputsDir,
    },
  );
  if (result.status !== 'succeeded') throw new Error(`the run ${result.status}: ${JSON.stringify(result.error)}`);

  const polls = new Map<string, { count: number; firstSimulatedMs: number }>();
  for (const entry of await sim.requests('dataServices.getAsyncOperation')) {
    const id = entry.path.split('/').at(-1) ?? '';
    const seen = polls.get(id);
    if (seen) seen.count += 1;
    else polls.set(id, { count: 1, firstSimulatedMs: Date.parse(entry.simTime) });
  }
  let pollsDone = 0;
  let pollsMinimum = 0;
  const lagsMs: number[] = [];
  const durations = new Map<number, number>();
  for (const entry of await temp.store.journal(result.runId)) {
    if (entry.event.type !== 'operation.finished') continue;
    const record = entry.event.operation as { id: string; startedAt: string; endedAt: string };
    const durationMs = Date.parse(record.endedAt) - Date.parse(record.startedAt);
    durations.set(durationMs, (durations.get(durationMs) ?? 0) + 1);
    const seen = polls.get(record.id) ?? { count: 0, firstSimulatedMs: Date.parse(record.startedAt) };
    pollsDone += seen.count;
    // From the first poll on (the writes of 500 operations queue before it): one per interval until the end.
    pollsMinimum +=
      1 +
      Math.max(0, Math.ceil((Date.parse(record.endedAt) - seen.firstSimulatedMs) / SUGGESTED_INTERVAL_SIMULATED_MS));
    lagsMs.push(Date.parse(entry.at) - toReal(Date.parse(record.endedAt)));
  }
  if (lagsMs.length !== count) throw new Error(`${lagsMs.length} operations finished of ${count}`);
  lagsMs.sort((a, b) => a - b);
  const at = (q: number): number => lagsMs[Math.min(lagsMs.length - 1, Math.floor(q * lagsMs.length))]!;
  const ratio = pollsDone / pollsMinimum;
  const mix = [...durations]
    .sort(([a], [b]) => a - b)
    .map(([durationMs, n]) => `${n}×${durationMs / 60_000} min`)
    .join(', ');
  printFigures(
    '3 polling-economy',
    `${count} operations (${mix} simulated; interval ${SUGGESTED_INTERVAL_SIMULATED_MS / 1000} s simulated = ${intervalMs} ms real) in ${(result.durationMs / 1000).toFixed(1)} s: ` +
      `${(pollsDone / count).toFixed(2)} polls/op against a minimum of ${(pollsMinimum / count).toFixed(2)}, ratio ${ratio.toFixed(3)}; ` +
      `lag end → noticed median ${at(0.5).toFixed(0)} ms, p95 ${at(0.95).toFixed(0)} ms, max ${lagsMs.at(-1)!.toFixed(0)} ms (interval ${intervalMs} ms)`,
    [{ label: `polls ratio ${ratio.toFixed(3)} ≤ ${TARGET_RATIO}`, pass: ratio <= TARGET_RATIO }],
  );
} finally {
  await temp.dispose();
  await sim.close();
}
