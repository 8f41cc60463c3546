/**
 * Benchmark 1, engine overhead: a playbook of N `set` steps in a `forEach` (N = 10,000), run by
 * the engine with the SQLite journal on, against the same loop written in TypeScript (the
 * same JSONata expression evaluated per item, the results kept). Figures: µs per journaled
 * step, µs per TypeScript step, their ratio. Target: under 50 µs per journaled step.
 * Then, warm, the same run with and without a registered secret (every run against the platform
 * registers its client secret, and every journaled event, step result and log line is scrubbed of
 * it), alternated four times each: the ratio of their times says what scrubbing costs a step.
 * Run alone: npx tsx bench/1-engine-overhead.ts [--quick]
 */
import jsonata from 'jsonata';
import { createPlatformClient } from '../src/api/index.js';
import { runPlaybook } from '../src/engine/index.js';
import { createSecretRegistry } from '../src/logging/index.js';
import { createQuietLogger, createTempStore, loadBenchPlaybook, ms, printFigures, quick } from './lib/harness.js';

const TARGET_US_PER_STEP = 50;
const count = quick ? 2_000 : 10_000;

/** The same work without the engine: the step's expression per item, outputs kept by index. */
async function plainLoop(): Promise<number> {
  const expression = jsonata('n * 2');
  const started = performance.now();
  const outputs: Array<{ value: unknown }> = [];
  for (let n = 1; n <= count; n += 1) outputs.push({ value: await expression.evaluate({}, { n }) });
  if (outputs.length !== count) throw new Error('the plain loop lost items');
  return performance.now() - started;
}

const playbook = loadBenchPlaybook('engine-overhead.yaml');
const temp = createTempStore();
const logger = createQuietLogger();
// The playbook calls no API: the client is never used, its addresses never dialled.
const unused = 'http://127.0.0.1:9';
const client = createPlatformClient({
  credentials: { clientId: 'none', clientSecret: 'none' },
  authUrl: unused,
  baseUrl: unused,
  regionalUrl: unused,
});

// One warm-up of each (JIT, SQLite statement caches), then the measured runs.
await runPlaybook(playbook, {
  inputs: { count: 200 },
  client,
  store: temp.store,
  logger,
  env: {},
  outputsDir: temp.outputsDir,
});
await plainLoop();

const started = performance.now();
const result = await runPlaybook(playbook, {
  inputs: { count },
  client,
  store: temp.store,
  logger,
  env: {},
  outputsDir: temp.outputsDir,
});
const engineMs = performance.now() - started;
if (result.status !== 'succeeded') throw new Error(`the run ${result.status}: ${JSON.stringify(result.error)}`);
const plainMs = await plainLoop();
const journal = await temp.store.journal(result.runId);

/** Wall time of one more run, its events scrubbed of `secret` when one is given. */
async function warmRunMs(secret?: string): Promise<number> {
  const secrets = createSecretRegistry();
  if (secret) secrets.add(secret);
  const began = performance.now();
  const run = await runPlaybook(playbook, {
    inputs: { count },
    client,
    store: temp.store,
    logger: createQuietLogger(secrets),
    secrets,
    env: {},
    outputsDir: temp.outputsDir,
  });
  if (run.status !== 'succeeded') throw new Error(`the run ${run.status}: ${JSON.stringify(run.error)}`);
  return performance.now() - began;
}
const SECRET = 'bench-client-secret-0123456789abcdef';
let withoutSecretMs = 0;
let withSecretMs = 0;
// Without, with, with, without, twice: the runs still get faster as the JIT warms up.
for (const secret of [undefined, SECRET, SECRET, undefined, undefined, SECRET, SECRET, undefined]) {
  const runMs = await warmRunMs(secret);
  if (secret) withSecretMs += runMs;
  else withoutSecretMs += runMs;
}
await temp.dispose();

const usPerStep = (engineMs * 1000) / count;
const plainUsPerStep = (plainMs * 1000) / count;
printFigures(
  '1 engine-overhead',
  `${count} set steps in a forEach, SQLite journal (${journal.length} entries): ${usPerStep.toFixed(1)} µs/step (${ms(engineMs)}); ` +
    `TypeScript loop ${plainUsPerStep.toFixed(2)} µs/step (${ms(plainMs)}); ratio ${(usPerStep / plainUsPerStep).toFixed(1)}×; ` +
    `warm, with a registered secret against without: ${(withSecretMs / withoutSecretMs).toFixed(2)}× (${ms(withSecretMs / 4)} against ${ms(withoutSecretMs / 4)})`,
  [{ label: `${usPerStep.toFixed(1)} µs/step < ${TARGET_US_PER_STEP}`, pass: usPerStep < TARGET_US_PER_STEP }],
);
