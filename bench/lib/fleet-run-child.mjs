// Benchmark 15's run of a playbook in a process of its own, on the compiled engine (dist/, as
// `fleetbook run` and `fleetbook resume` use it), so its peak RSS is Fleetbook's alone. Its one
// argument is a JSON file: { mode: 'run' | 'resume', playbook, runId, inputs?, connection,
// store: { file } | { url }, outputsDir, resultFile, wait?, rateLimits?, stopAfterReplay? }.
// It writes { status, durationMs, runId, peakRssBytes, peakRssBeforeViewBytes?, cpuMs, replayMs? }
// to resultFile: peakRssBeforeViewBytes is the peak before the run, ended, keeps its journal view.
//
// `resume` measures the replay: from the call of `resumeRun` (the store open, the playbook
// loaded) to the first journal entry the resumed run appends, i.e. the first new thing it does
// once the journal is read, the plan made and the finished steps replayed. With
// `stopAfterReplay` the process then exits (the benchmark only wants the replay figure).
import { readFileSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createPlatformClient } from '../../dist/api/index.js';
import { limitHeapGrowth, limitWasmCompilerMemory } from '../../dist/cli/heap.js';
import { resumeRun, runPlaybook } from '../../dist/engine/index.js';
import { createLogger } from '../../dist/logging/index.js';
import { hasErrors, loadPlaybook } from '../../dist/playbook/index.js';
import { createPostgresRunStore, createSqliteRunStore } from '../../dist/store/index.js';

// `BENCH_CHILD_ALLOCATIONS=<file>`: a sampling profile of every allocation the run makes, the
// collected ones included (what the garbage collector spends its time on), written to <file>
// as a .heapprofile (Chrome DevTools' Memory tab reads it).
const allocationsFile = process.env.BENCH_CHILD_ALLOCATIONS;
let inspector;
if (allocationsFile) {
  const { Session } = await import('node:inspector/promises');
  inspector = new Session();
  inspector.connect();
  await inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 64 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

// As bin/fleetbook.js does for `fleetbook run`.
limitHeapGrowth();
limitWasmCompilerMemory();
const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const peakRssBytes = () => process.resourceUsage().maxRSS * 1024;

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
const store = job.store.url
  ? await createPostgresRunStore({ url: job.store.url })
  : createSqliteRunStore({ file: job.store.file });

/** The process's CPU time (user + system) since it started, in ms: the engine's cost, whatever the machine's load. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const writeResult = (result) =>
  writeFileSync(job.resultFile, JSON.stringify({ ...result, peakRssBytes: peakRssBytes(), cpuMs: cpuMs() }));
const writeAllocations = async () => {
  if (!inspector) return;
  const { profile } = await inspector.post('HeapProfiler.stopSampling');
  writeFileSync(allocationsFile, JSON.stringify(profile));
};

const started = performance.now();
if (job.mode === 'run') {
  // The engine reads the kept view only as the ended run keeps its journal view.
  let peakRssBeforeViewBytes;
  const journalView = store.journalView.bind(store);
  store.journalView = (runId) => {
    peakRssBeforeViewBytes ??= peakRssBytes();
    return journalView(runId);
  };
  const result = await runPlaybook(playbook, {
    runId: job.runId,
    inputs: job.inputs,
    client,
    store,
    logger,
    env: {},
    outputsDir: job.outputsDir,
  });
  writeResult({
    status: result.status,
    error: result.error,
    durationMs: result.durationMs,
    runId: result.runId,
    ...(peakRssBeforeViewBytes === undefined ? {} : { peakRssBeforeViewBytes }),
  });
  await writeAllocations();
} else {
  // The first append of the resumed run ends the replay.
  let replayMs;
  const append = store.append.bind(store);
  store.append = (runId, event, options) => {
    if (replayMs === undefined) {
      replayMs = performance.now() - started;
      if (job.stopAfterReplay) {
        writeResult({ status: 'replayed', durationMs: replayMs, runId, replayMs });
        process.exit(0);
      }
    }
    return append(runId, event, options);
  };
  const result = await resumeRun(playbook, {
    runId: job.runId,
    client,
    store,
    logger,
    env: {},
    outputsDir: job.outputsDir,
  });
  writeResult({
    status: result.status,
    error: result.error,
    durationMs: result.durationMs,
    runId: result.runId,
    replayMs,
  });
}
await store.close();
