/**
 * What a leaf step executor works with. Executors receive rendered values (no templates):
 * the engine renders, journals the step, applies `if`, retries, timeouts, rescue and
 * always; an executor performs one attempt.
 */
import type { PlatformClient } from '../../api/index.js';
import type { Logger, SecretRegistry } from '../../logging/index.js';
import type { JournalEvent, StepPath } from '../../store/index.js';
import type { Clock } from '../../timers/index.js';

export interface ExecutorRuntime {
  client: PlatformClient;
  /** Aborts on run cancellation and on the step's timeout. */
  signal: AbortSignal;
  /** Carries `runId`, `playbook`, `stepId`, `attempt`. */
  logger: Logger;
  secrets: SecretRegistry;
  dryRun: boolean;
  /** The step's place in the run, e.g. `systems[3].update`. */
  path: StepPath;
  /** Attempt of the step, from 1. */
  attempt: number;
  /** The run's time: durations, poll intervals, sleeps. */
  clock: Clock;
  /** Appends to the run's journal; resolves once durable. Called before acting on the transition. */
  journal(event: JournalEvent): Promise<void>;
}

/** What one attempt of a leaf step produced. */
export interface LeafResult {
  outputs: unknown;
  /** `simulated`: a write a dry run did not send. @default 'succeeded' */
  status?: 'succeeded' | 'simulated';
}
