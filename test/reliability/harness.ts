/**
 * Harness of the reliability suite: a simulator on port 0 at a large time scale (faults
 * optional), a client as an API client of the simulator, a SQLite run store in a temp
 * directory (so the journal can be read back raw), every log line captured, and `run`
 * loading a playbook file through the loader exactly as `fleetbook run` does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { createPlatformClient, type PlatformClient, type PlatformClientOptions } from '../../src/api/index.js';
import { runPlaybook, type RunOptions, type RunResult } from '../../src/engine/index.js';
import { createLogger, createSecretRegistry, type SecretRegistry } from '../../src/logging/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef } from '../../src/playbook/index.js';
import {
  startSimulator,
  type RequestLogEntry,
  type Simulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import { createSqliteRunStore, type RunStore } from '../../src/store/index.js';
import { registerCapture, TOKEN_PATTERN } from '../support/leak-scan.js';

export const FIXTURES = join(import.meta.dirname, 'fixtures');

/** Simulated ms per real ms: a 45-minute update takes under half a second. */
export const TIME_SCALE = 6000;

export { TOKEN_PATTERN };

export interface ReliabilityHarness {
  sim: Simulator;
  client: PlatformClient;
  store: RunStore;
  secrets: SecretRegistry;
  /** The client's secret, registered with `secrets` as the CLI does. */
  clientSecret: string;
  /** Every log line written so far, as written. */
  logText(): string;
  lines(): Array<Record<string, unknown>>;
  /** Every row of the SQLite store (runs and journal), as stored: what a leak scan must read. */
  storeText(): string;
  /** Loads a playbook file (or bundled name) with the loader and runs it. */
  run(playbook: string, inputs?: Record<string, unknown>, options?: Partial<RunOptions>): Promise<RunResult>;
  close(): Promise<void>;
}

export interface ReliabilityHarnessOptions {
  simulator?: SimulatorOptions;
  /** @default 'sim-operator' */
  clientId?: string;
  client?: Partial<PlatformClientOptions>;
}

export async function startReliabilityHarness(options: ReliabilityHarnessOptions = {}): Promise<ReliabilityHarness> {
  // Tokens live 30 simulated days (7 real minutes): at this time scale the default 2 hours
  // pass in 1.2 real seconds, and a busy machine would see 401s no test asked for.
  const sim = await startSimulator({
    port: 0,
    timeScale: TIME_SCALE,
    validateResponses: true,
    tokenLifetimeSeconds: 30 * 24 * 3600,
    ...options.simulator,
  });
  const directory = mkdtempSync(join(tmpdir(), 'fleetbook-reliability-'));
  const file = join(directory, 'runs.sqlite');
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const clientId = options.clientId ?? 'sim-operator';
  const clientSecret = `${clientId}-secret`;
  const secrets = createSecretRegistry();
  secrets.add(clientSecret);
  const logger = createLogger({ destination, level: 'trace', secrets });
  const client = createPlatformClient({
    credentials: { clientId, clientSecret },
    authUrl: sim.authUrl,
    baseUrl: sim.baseUrl,
    regionalUrl: sim.regionalUrl,
    region: 'us-west',
    retry: { initialDelayMs: 5, maxDelayMs: 50 },
    logger,
    ...options.client,
  });
  const store = createSqliteRunStore({ file });
  const logText = (): string => chunks.join('');
  registerCapture('reliability harness log', logText);
  return {
    sim,
    client,
    store,
    secrets,
    clientSecret,
    logText,
    lines: () =>
      logText()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    storeText() {
      const database = new Database(file, { readonly: true });
      try {
        const rows = [
          ...database.prepare('SELECT * FROM runs').all(),
          ...database.prepare('SELECT * FROM journal').all(),
        ];
        return rows.map((row) => JSON.stringify(row)).join('\n');
      } finally {
        database.close();
      }
    },
    async run(playbook, inputs = {}, runOptions = {}) {
      const loaded = loadPlaybook(resolvePlaybookRef(playbook, FIXTURES));
      expect(loaded.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
      if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(`${playbook} does not load`);
      return runPlaybook(loaded.playbook, {
        inputs,
        client,
        store,
        logger,
        secrets,
        dryRun: false,
        env: {},
        // The default 5 s of settling before a reconciliation read is 8 simulated hours here: a
        // precheck found by it would have expired. One simulated minute is what the 5 s stand for.
        reconcileSettleMs: 60_000 / TIME_SCALE,
        ...runOptions,
      });
    },
    async close() {
      await store.close();
      await sim.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Each secret, and any bearer token, found in `text`: the test expects none. */
export function leaksIn(text: string, secrets: readonly string[]): string[] {
  const found = secrets.filter((secret) => text.includes(secret));
  const token = TOKEN_PATTERN.exec(text);
  return token ? [...found, `a bearer token (${token[0].slice(0, 8)}…)`] : found;
}

/** What became of the writes sent to one address (method and path), as the platform saw them. */
export interface WriteOutcomes {
  /** Applied: answered 2xx, or dropped after the handler ran (the client never heard of it). */
  applied: number;
  /** Not applied: refused (an injected 5xx, 429 or 401 is answered before the handler), or dropped before it. */
  notApplied: number;
  /** Requests that reached the address after a write there had been applied: each is a write sent twice. */
  sentAgain: string[];
}

/** The writes of a request log by address; token requests left out (they change nothing). */
export function writeOutcomes(log: readonly RequestLogEntry[]): Map<string, WriteOutcomes> {
  const byAddress = new Map<string, WriteOutcomes>();
  for (const entry of log) {
    if (entry.method === 'GET' || entry.operationId === 'auth.createToken' || entry.operationId === '') continue;
    const address = `${entry.method} ${entry.path}`;
    const outcomes = byAddress.get(address) ?? { applied: 0, notApplied: 0, sentAgain: [] };
    byAddress.set(address, outcomes);
    if (outcomes.applied > 0)
      outcomes.sentAgain.push(`${address}: ${entry.dropped ? `dropped ${entry.dropped}` : entry.status}`);
    if (entry.dropped === 'after' || (entry.dropped === undefined && entry.status >= 200 && entry.status < 300))
      outcomes.applied += 1;
    else outcomes.notApplied += 1;
  }
  return byAddress;
}
