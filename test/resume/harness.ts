// Shared by the resume tests: the CLI in this process with a separately started simulator.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { openRunStore, type JournalEntry } from '../../src/store/index.js';
import { jsonLines, runCli } from '../support/cli.js';

export const fixture = (name: string): string => join(import.meta.dirname, 'fixtures', name);

export interface CliResult {
  code: number;
  lines: Array<Record<string, unknown>>;
  stderr: string;
  result?: {
    runId: string;
    status: string;
    outputs?: Record<string, unknown>;
    error?: { message: string; code?: string };
    steps: Array<{ path: string; status: string; replayed?: boolean }>;
  };
}

/** A temp FLEETBOOK_HOME and a simulator; `cli` runs the CLI against both. */
export interface Bench {
  home: string;
  sim: Simulator;
  env: Record<string, string>;
  cli(args: string[], env?: Record<string, string>): Promise<CliResult>;
  journal(runId: string): Promise<JournalEntry[]>;
  /** POSTs the simulator logged for `operationId`, by path. */
  posts(operationId: string): string[];
  close(): Promise<void>;
}

export async function createBench(options: SimulatorOptions = {}): Promise<Bench> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-resume-'));
  const home = join(dir, 'home');
  const sim = await startSimulator({ port: 0, timeScale: 6000, ...options });
  const env = {
    FLEETBOOK_HOME: home,
    FLEETBOOK_CLIENT_ID: 'sim-admin',
    FLEETBOOK_CLIENT_SECRET: 'sim-admin-secret',
    FLEETBOOK_AUTH_URL: sim.authUrl,
    FLEETBOOK_BASE_URL: sim.baseUrl,
    FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
    FLEETBOOK_REGION: 'eu-central',
    // The default 5 s before a reconciliation read are 8 simulated hours at this time scale
    // (prechecks found by it would have expired): 10 ms stand for the simulated minute.
    FLEETBOOK_RECONCILE_SETTLE: '10ms',
  };
  return {
    home,
    sim,
    env,
    async cli(args, extra = {}) {
      const { code, stdout, stderr } = await runCli([...args, '--json'], { env: { ...env, ...extra } });
      const lines = jsonLines(stdout);
      const last = lines.at(-1)?.result as CliResult['result'];
      return { code, lines, stderr, ...(last ? { result: last } : {}) };
    },
    async journal(runId) {
      const store = await openRunStore({ home });
      try {
        return await store.journal(runId);
      } finally {
        await store.close();
      }
    },
    posts: (operationId) =>
      sim.control
        .requests({ operationId })
        .filter((entry) => entry.method === 'POST')
        .map((entry) => entry.path),
    async close() {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
