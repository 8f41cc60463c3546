/**
 * What every benchmark shares: `--quick`, a client for a simulator, a quiet logger, a
 * SQLite run store in a temporary directory, playbook loading, peak RSS, and the one
 * figures line each benchmark ends with.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPlatformClient, type PlatformClient, type PlatformClientOptions } from '../../src/api/index.js';
import { createLogger, createSecretRegistry, type Logger, type SecretRegistry } from '../../src/logging/index.js';
import { hasErrors, loadPlaybook, type Playbook } from '../../src/playbook/index.js';
import { createSqliteRunStore, type JournalEntry, type RunStore } from '../../src/store/index.js';
import type { SimulatorProcess } from './simulator-process.js';

const execFileAsync = promisify(execFile);

/** `--quick`: a smaller workload of the same shape, for a smoke run. */
export const quick = process.argv.includes('--quick');

/** The repository root. */
export const rootDir = fileURLToPath(new URL('../../', import.meta.url));

/** A logger at the CLI's default level whose lines go nowhere (formatting still costs what it costs). */
export function createQuietLogger(secrets: SecretRegistry = createSecretRegistry()): Logger {
  const sink = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  return createLogger({ destination: sink, level: 'info', secrets });
}

/** A client of the simulator as its administrator. */
export function createBenchClient(
  sim: Pick<SimulatorProcess, 'authUrl' | 'baseUrl' | 'regionalUrl' | 'clients'>,
  options: Partial<PlatformClientOptions> = {},
): PlatformClient {
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
  if (!admin) throw new Error('the simulator has no sim-admin client');
  return createPlatformClient({
    credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
    authUrl: sim.authUrl,
    baseUrl: sim.baseUrl,
    regionalUrl: sim.regionalUrl,
    region: 'us-west',
    logger: createQuietLogger(),
    ...options,
  });
}

export interface TempStore {
  store: RunStore;
  dir: string;
  /** Where the engine writes outputs too large for the journal (`RunOptions.outputsDir`). */
  outputsDir: string;
  /** Closes the store and removes its directory. */
  dispose(): Promise<void>;
}

/** The embedded SQLite run store (WAL, what `fleetbook run` uses) in a fresh directory. */
export function createTempStore(): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-'));
  const store = createSqliteRunStore({ file: join(dir, 'runs.sqlite') });
  return {
    store,
    dir,
    outputsDir: join(dir, 'outputs'),
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A playbook of `bench/playbooks/` (or any path), loaded as `fleetbook run` loads it. */
export function loadBenchPlaybook(path: string): Playbook {
  const file = path.includes('/') ? path : join(rootDir, 'bench', 'playbooks', path);
  const loaded = loadPlaybook(file);
  if (!loaded.playbook || hasErrors(loaded.problems)) {
    throw new Error(
      `${file} does not load: ${loaded.problems.map((p) => `${p.line}:${p.column} ${p.message}`).join('; ')}`,
    );
  }
  return loaded.playbook;
}

/** A playbook whose waits poll as often as the records suggest (the simulator's suggestion shrinks with its time scale). */
export function withWaitBounds(playbook: Playbook, wait: { minPollMs: number; maxPollMs?: number }): Playbook {
  return { ...playbook, defaults: { ...playbook.defaults, wait: { ...playbook.defaults.wait, ...wait } } };
}

/** Peak resident set size of this process so far, in MB (10^6 bytes, as the targets are written). */
export function peakRssMB(): number {
  return (process.resourceUsage().maxRSS * 1024) / 1e6;
}

export interface Verdict {
  /** What is compared, e.g. `µs/step 23.1 < 50`. */
  label: string;
  pass: boolean;
}

/**
 * The one line a benchmark ends with: `[n name] figures | target: ... PASS`. Targets
 * without a verdict (informational figures) are printed as `info`.
 */
export function printFigures(name: string, figures: string, verdicts: Verdict[]): void {
  const judged =
    verdicts.length === 0
      ? 'no target (info)'
      : verdicts.map((v) => `${v.label} ${v.pass ? 'PASS' : 'MISS'}`).join('; ');
  console.log(`[${name}] ${figures} | ${judged}${quick ? ' (quick)' : ''}`);
}

/** Milliseconds, formatted. */
export const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 0)} ms`;

export interface ChildRun {
  status: string;
  error?: unknown;
  outputs?: unknown;
  durationMs: number;
  runId: string;
  peakRssBytes: number;
  /** The largest heap in use and off-heap memory seen (sampled every 200 ms; absent when stopped). */
  heapPeakBytes?: number;
  externalPeakBytes?: number;
  journal?: JournalEntry[];
}

/**
 * Runs a playbook in a process of its own on the compiled engine (`npm run build` first), for
 * figures about Fleetbook's own process (peak RSS): see `run-playbook-child.mjs`.
 * `BENCH_CHILD_NODE_OPTIONS` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof-run`) go to its `node`.
 */
export async function runPlaybookInChild(job: {
  playbook: string;
  inputs: Record<string, unknown>;
  connection: Pick<SimulatorProcess, 'authUrl' | 'baseUrl' | 'regionalUrl' | 'clients'>;
  wait?: { minPollMs?: number; maxPollMs?: number };
  rateLimits?: PlatformClientOptions['rateLimits'];
  journal?: boolean;
  /** Stops the run after this long; the result then has status `stopped` and the peak RSS so far. */
  timeLimitMs?: number;
}): Promise<ChildRun> {
  const script = fileURLToPath(new URL('./run-playbook-child.mjs', import.meta.url));
  const { connection, timeLimitMs, ...rest } = job;
  // The job and its result go through files: 5,000 inputs are beyond what a command line may carry.
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-job-'));
  const jobFile = join(dir, 'job.json');
  const resultFile = join(dir, 'result.json');
  writeFileSync(
    jobFile,
    JSON.stringify({
      ...rest,
      connection: {
        authUrl: connection.authUrl,
        baseUrl: connection.baseUrl,
        regionalUrl: connection.regionalUrl,
        clients: connection.clients,
      },
      storeFile: join(dir, 'runs.sqlite'),
      outputsDir: join(dir, 'outputs'),
      resultFile,
    }),
  );
  try {
    const nodeOptions = (process.env.BENCH_CHILD_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
    await execFileAsync(process.execPath, [...nodeOptions, script, jobFile], {
      ...(timeLimitMs ? { timeout: timeLimitMs, killSignal: 'SIGTERM' as const } : {}),
    }).catch((error: Error & { killed?: boolean }) => {
      if (!error.killed || !existsSync(resultFile)) throw error;
    });
    return JSON.parse(readFileSync(resultFile, 'utf8')) as ChildRun;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
