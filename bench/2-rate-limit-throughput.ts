/**
 * Benchmark 2, throughput at a rate limit: N GETs (`privateCloud.getSystem`, N = 3,000) issued at
 * once through the client's executor against a simulator that allows 6,000 per minute for the
 * group; the client is told the same limit. Figures: achieved rate / allowed rate (target ≥ 0.95),
 * the 429s the simulator answered (target 0), wall time.
 * Run alone: npx tsx bench/2-rate-limit-throughput.ts [--quick]
 */
import { createBenchClient, printFigures, quick } from './lib/harness.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const PER_MINUTE = 6_000;
const TARGET_RATIO = 0.95;
const count = quick ? 600 : 3_000;

const sim = await startSimulatorProcess({
  world: { privateCloud: { systems: 100 } },
  rateLimits: { privateCloud: PER_MINUTE },
});
try {
  const client = createBenchClient(sim, { rateLimits: { perMinute: { privateCloud: PER_MINUTE } } });
  const listed = await client.invoke('privateCloud.listSystems', { limit: 100 });
  const ids = (listed.body as { items: Array<{ id: string }> }).items.map((system) => system.id);
  // The listing took one request of the group's budget: the measured ones start from a fresh window.
  await new Promise((resolve) => setTimeout(resolve, 1_000));

  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      client.call('privateCloud.getSystem', { id: ids[i % ids.length]! }).then((result) => result.status),
    ),
  );
  const elapsedMs = performance.now() - started;
  const served = statuses.filter((status) => status === 200).length;
  const tooMany = (await sim.requests('privateCloud.getSystem')).filter((entry) => entry.status === 429).length;

  const achievedPerSecond = count / (elapsedMs / 1000);
  const allowedPerSecond = PER_MINUTE / 60;
  const ratio = achievedPerSecond / allowedPerSecond;
  printFigures(
    '2 rate-limit-throughput',
    `${count} GETs (${served} answered 200) in ${(elapsedMs / 1000).toFixed(1)} s at a limit of ${PER_MINUTE}/min: ` +
      `${achievedPerSecond.toFixed(1)} req/s of ${allowedPerSecond.toFixed(0)} allowed, ratio ${ratio.toFixed(3)}; 429s ${tooMany}`,
    [
      { label: `ratio ${ratio.toFixed(3)} ≥ ${TARGET_RATIO}`, pass: ratio >= TARGET_RATIO },
      { label: `429s ${tooMany} = 0`, pass: tooMany === 0 },
    ],
  );
} finally {
  await sim.close();
}
