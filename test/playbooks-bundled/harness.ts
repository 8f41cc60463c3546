/**
 * Harness of the bundled-playbook tests: the engine tests' harness (a simulator on port 0 with
 * a large time scale, a client as sim-admin, a memory run store, captured JSON log lines) and
 * `run(name)` loading `playbooks/<name>.yaml` through the loader, exactly as `fleetbook run
 * <name>` does, then running it with the engine.
 */
import { expect } from 'vitest';
import type { PlatformClient } from '../../src/api/index.js';
import type { RunResult } from '../../src/engine/index.js';
import { hasErrors, loadPlaybook, resolvePlaybookRef, type Playbook } from '../../src/playbook/index.js';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import type { RunStore } from '../../src/store/index.js';
import { startHarness, type HarnessOptions } from '../engine/harness.js';

export interface BundledHarness {
  sim: Simulator;
  client: PlatformClient;
  store: RunStore;
  /** Every log line so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  run(
    name: string,
    inputs?: Record<string, unknown>,
    options?: { dryRun?: boolean; env?: Record<string, string> },
  ): Promise<RunResult>;
  /** Resumes the stored run `runId` of `playbooks/<name>.yaml` (after a gate's decision). */
  resume(name: string, runId: string): Promise<RunResult>;
  close(): Promise<void>;
}

/** `playbooks/<name>.yaml` loaded exactly as `fleetbook run <name>` loads it. */
function load(name: string): Playbook {
  const loaded = loadPlaybook(resolvePlaybookRef(name, process.cwd()));
  expect(loaded.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
  if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(`${name} does not load`);
  return loaded.playbook;
}

/** The engine tests' harness, with the simulator checking its own answers and lines at debug. */
export async function startBundledHarness(
  options: SimulatorOptions = {},
  via?: HarnessOptions['via'],
): Promise<BundledHarness> {
  const harness = await startHarness(
    { validateResponses: true, ...options },
    { logLevel: 'debug', ...(via ? { via } : {}) },
  );
  return {
    sim: harness.sim,
    client: harness.client,
    lines: harness.lines,
    store: harness.store,
    async run(name, inputs = {}, runOptions = {}) {
      return harness.run(load(name), { inputs, dryRun: runOptions.dryRun ?? false, env: runOptions.env ?? {} });
    },
    resume: (name, runId) => harness.resume(load(name), runId),
    close: harness.close,
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
