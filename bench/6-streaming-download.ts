/**
 * Benchmark 6, streaming: the bundled `consumption-report-download` playbook saves a consumption
 * CSV of about 500 MB to disk (`saveTo`), the simulator (in a process of its own) generating the
 * rows as it streams them; the playbook runs in a process of its own on the compiled engine.
 * Figures: MB/s (10^6 bytes) and the peak RSS of that process (target under 150 MB).
 * Run alone: npx tsx bench/6-streaming-download.ts [--quick]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigures, quick, rootDir, runPlaybookInChild } from './lib/harness.js';
import { startSimulatorProcess } from './lib/simulator-process.js';

const TARGET_MB = 150;
/** The simulator's rows are about 41 bytes: 12.2 million make 500 MB. */
const ROWS = quick ? 1_220_000 : 12_200_000;
const REPORTS = 5;
/** The suite must stay bounded: a download slower than 4 MB/s is stopped and reported so. */
const TIME_LIMIT_MS = quick ? 15_000 : 120_000;

const sim = await startSimulatorProcess({
  world: { consumptionAnalytics: { reports: REPORTS, reportRows: Array.from({ length: REPORTS }, () => ROWS) } },
  rateLimitScale: 1_000,
});
const directory = mkdtempSync(join(tmpdir(), 'fleetbook-bench-csv-'));
try {
  const result = await runPlaybookInChild({
    playbook: join(rootDir, 'playbooks', 'consumption-report-download.yaml'),
    inputs: { directory, region: 'us-west' },
    connection: sim,
    timeLimitMs: TIME_LIMIT_MS,
  });
  const peak = result.peakRssBytes / 1e6;
  if (result.status === 'stopped') {
    // The partial file (`.<name>.part`) says how far it got.
    const partial = readdirSync(directory).filter((name) => name.endsWith('.part'));
    const megabytes = partial.reduce((sum, name) => sum + statSync(join(directory, name)).size, 0) / 1e6;
    printFigures(
      '6 streaming-download',
      `stopped after the limit of ${TIME_LIMIT_MS / 1000} s with ${megabytes.toFixed(0)} of about ${((ROWS * 41) / 1e6).toFixed(0)} MB saved: ` +
        `${(megabytes / (TIME_LIMIT_MS / 1000)).toFixed(1)} MB/s; peak RSS ${peak.toFixed(0)} MB`,
      [
        { label: `peak RSS ${peak.toFixed(0)} MB < ${TARGET_MB}`, pass: peak < TARGET_MB },
        { label: 'finished', pass: false },
      ],
    );
  } else {
    if (result.status !== 'succeeded') throw new Error(`the run ${result.status}: ${JSON.stringify(result.error)}`);
    const { file } = result.outputs as { file: string };
    const megabytes = statSync(file).size / 1e6;
    const perSecond = megabytes / (result.durationMs / 1000);
    printFigures(
      '6 streaming-download',
      `${megabytes.toFixed(0)} MB CSV saved in ${(result.durationMs / 1000).toFixed(1)} s: ${perSecond.toFixed(0)} MB/s; peak RSS ${peak.toFixed(0)} MB`,
      [{ label: `peak RSS ${peak.toFixed(0)} MB < ${TARGET_MB}`, pass: peak < TARGET_MB }],
    );
  }
} finally {
  rmSync(directory, { recursive: true, force: true });
  await sim.close();
}
