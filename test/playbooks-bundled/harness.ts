/**
 * Harness of the bundled-playbook tests: a simulator on port 0 with a large time scale, a
 * client as the sim-admin API client, a memory run store, captured JSON log lines, and
 * `run(name)` loading `playbooks/<name>.yaml` through the loader, exactly as `fleetbook run
 * <name>` does, then running it with the engine.
 */
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { createPlatformClient, type PlatformClient } from '../../src/api/index.js';
import { runPlaybook, type RunResult } from '../../src/engine/index.js';
import { createLogger, createSecretRegistry } from '../../src/logging/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef } from '../../src/playbook/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { createMemoryRunStore } from '../../src/store/index.js';

export interface BundledHarness {
  sim: Simulator;
  client: PlatformClient;
  /** Every log line so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  run(name: string, inputs?: Record<string, unknown>, options?: { dryRun?: boolean; env?: Record<string, string> }): Promise<RunResult>;
  close(): Promise<void>;
}

/** Simulated ms per real ms: a 45-minute update takes under half a second. */
const TIME_SCALE = 6000;

export async function startBundledHarness(options: SimulatorOptions = {}): Promise<BundledHarness> {
  const sim = await startSimulator({ port: 0, timeScale: TIME_SCALE, validateResponses: true, ...options });
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const secrets = createSecretRegistry();
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
  if (!admin) throw new Error('the simulator has no sim-admin client');
  secrets.add(admin.clientSecret);
  const logger = createLogger({ destination, level: 'debug', secrets });
  const client = createPlatformClient({
    credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
    authUrl: sim.authUrl,
    baseUrl: sim.baseUrl,
    regionalUrl: sim.regionalUrl,
    region: 'us-west',
    retry: { initialDelayMs: 1, maxDelayMs: 5 },
    rateLimits: { defaultPerMinute: 600_000 },
    logger,
  });
  const store = createMemoryRunStore();
  return {
    sim,
    client,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    async run(name, inputs = {}, runOptions = {}) {
      const loaded = loadPlaybook(resolvePlaybookRef(name, process.cwd()));
      expect(loaded.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
      if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(`${name} does not load`);
      return runPlaybook(loaded.playbook, { inputs, client, store, logger, secrets, dryRun: runOptions.dryRun ?? false, env: runOptions.env ?? {} });
    },
    close: () => sim.close(),
  };
}

/** The failed steps of a run, for assertion messages. */
export function failures(result: RunResult): string {
  return JSON.stringify(
    result.steps.filter((step) => step.status === 'failed').map((step) => ({ path: step.path, error: step.error })),
    null,
    1,
  );
}
