// A playbook run in a process of its own, on the compiled engine (dist/, as `fleetbook run`
// uses it), so a benchmark can take the peak RSS of Fleetbook alone: no TypeScript loader,
// no simulator, no benchmark code. Its one argument is a JSON file: { playbook, inputs,
// connection, storeFile, outputsDir, resultFile, wait?, rateLimits?, journal? }. It writes
// { status, error, outputs, durationMs, runId, peakRssBytes, heapPeakBytes, externalPeakBytes, journal? }
// to resultFile; on
// SIGTERM (the benchmark's time limit) { status: 'stopped', peakRssBytes } and exits.
import { readFileSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createPlatformClient } from '../../dist/api/index.js';
import { limitHeapGrowth, limitWasmCompilerMemory } from '../../dist/cli/heap.js';
import { runPlaybook } from '../../dist/engine/index.js';
import { createLogger } from '../../dist/logging/index.js';
import { hasErrors, loadPlaybook } from '../../dist/playbook/index.js';
import { createSqliteRunStore } from '../../dist/store/index.js';

// As bin/fleetbook.js does for `fleetbook run`.
limitHeapGrowth();
limitWasmCompilerMemory();
const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const peakRssBytes = () => process.resourceUsage().maxRSS * 1024;
process.once('SIGTERM', () => {
  writeFileSync(
    job.resultFile,
    JSON.stringify({ status: 'stopped', durationMs: 0, runId: '', peakRssBytes: peakRssBytes() }),
  );
  process.exit(143);
});

// Where the peak is: the largest heap in use and off-heap memory (buffers) seen during the run.
let heapPeak = 0;
let externalPeak = 0;
setInterval(() => {
  const usage = process.memoryUsage();
  heapPeak = Math.max(heapPeak, usage.heapUsed);
  externalPeak = Math.max(externalPeak, usage.external);
}, 200).unref();

const loaded = loadPlaybook(job.playbook);
if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(`${job.playbook} does not load`);
const playbook = job.wait
  ? {
      ...loaded.playbook,
      defaults: { ...loaded.playbook.defaults, wait: { ...loaded.playbook.defaults.wait, ...job.wait } },
    }
  : loaded.playbook;
const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
const logger = createLogger({ destination: sink, level: 'info' });
const admin = job.connection.clients.find((client) => client.clientId === 'sim-admin');
const client = createPlatformClient({
  credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
  authUrl: job.connection.authUrl,
  baseUrl: job.connection.baseUrl,
  regionalUrl: job.connection.regionalUrl,
  region: 'us-west',
  logger,
  ...(job.rateLimits ? { rateLimits: job.rateLimits } : {}),
});
const store = createSqliteRunStore({ file: job.storeFile });
const result = await runPlaybook(playbook, {
  inputs: job.inputs,
  client,
  store,
  logger,
  env: {},
  outputsDir: job.outputsDir,
});
// The peaks of the run, before the journal is read back for the benchmark.
const peak = peakRssBytes();
const journal = job.journal ? await store.journal(result.runId) : undefined;
await store.close();
writeFileSync(
  job.resultFile,
  JSON.stringify({
    status: result.status,
    error: result.error,
    outputs: result.outputs,
    durationMs: result.durationMs,
    runId: result.runId,
    peakRssBytes: peak,
    heapPeakBytes: heapPeak,
    externalPeakBytes: externalPeak,
    journal,
  }),
);
