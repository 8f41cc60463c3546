// A playbook run in a process of its own, on the compiled engine (dist/, as `fleetbook run`
// uses it), so a benchmark can take the peak RSS of Fleetbook alone: no TypeScript loader,
// no simulator, no benchmark code. Its one argument is a JSON file: { playbook, inputs,
// connection, storeFile, wait?, maxPayloadBytes?, rateLimits?, journal? }. On SIGTERM it prints
// { status: 'stopped', peakRssBytes } and exits. It prints one JSON line: { status, error, outputs,
// durationMs, runId, peakRssBytes, journal? }.
import { createPlatformClient } from '../../dist/api/index.js';
import { runPlaybook } from '../../dist/engine/index.js';
import { createLogger } from '../../dist/logging/index.js';
import { hasErrors, loadPlaybook } from '../../dist/playbook/index.js';
import { createSqliteRunStore } from '../../dist/store/index.js';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const loaded = loadPlaybook(job.playbook);
if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(`${job.playbook} does not load`);
const playbook = job.wait ? { ...loaded.playbook, defaults: { ...loaded.playbook.defaults, wait: { ...loaded.playbook.defaults.wait, ...job.wait } } } : loaded.playbook;
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
const store = createSqliteRunStore({ file: job.storeFile, ...(job.maxPayloadBytes ? { maxPayloadBytes: job.maxPayloadBytes } : {}) });
// Stopped by the benchmark's time limit: the peak so far is still a figure.
process.once('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ status: 'stopped', durationMs: 0, runId: '', peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
  process.exit(143);
});
const result = await runPlaybook(playbook, { inputs: job.inputs, client, store, logger, env: {} });
const journal = job.journal ? await store.journal(result.runId) : undefined;
await store.close();
process.stdout.write(
  `${JSON.stringify({ status: result.status, error: result.error, outputs: result.outputs, durationMs: result.durationMs, runId: result.runId, peakRssBytes: process.resourceUsage().maxRSS * 1024, journal })}\n`,
);
