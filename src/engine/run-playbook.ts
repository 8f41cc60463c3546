/**
 * `runPlaybook`: one run of a loaded playbook, from its inputs to its outputs, journaled in
 * the run store before each transition is acted on.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { PlatformClient } from '../api/index.js';
import { createSecretRegistry, type Logger, type SecretRegistry } from '../logging/index.js';
import type { Playbook } from '../playbook/types.js';
import { toErrorRecord } from '../steps/executors/error-record.js';
import { RunStatus, StepStatus, type ErrorRecord, type RunStore } from '../store/types.js';
import { resolveInputs } from './inputs.js';
import { Scope } from './scope.js';
import { createStepRunner, type StepSummary } from './step-runner.js';

/** How long a run's lease lasts without renewal; renewed at a third of it while the run goes on. */
const LEASE_TTL_MS = 60_000;

export interface RunOptions {
  /** Given inputs; defaults fill the rest. A missing or ill-typed input is a `UsageError`. */
  inputs?: Record<string, unknown>;
  client: PlatformClient;
  store: RunStore;
  logger: Logger;
  /**
   * Where secret input values are registered; pass the registry the logger scrubs with so
   * they never reach a log line. @default a registry of the run's own (journal and outputs only)
   */
  secrets?: SecretRegistry;
  /** Aborting stops starting new work and aborts waits and sleeps; the run ends `interrupted`. */
  signal?: AbortSignal;
  /** Reads are performed, writes are not sent (their steps end `simulated`). @default false */
  dryRun?: boolean;
  /** @default a random UUID */
  runId?: string;
  /** Milliseconds now, for durations. @default Date.now */
  now?: () => number;
  /** Jitter source of step retries. @default Math.random */
  random?: () => number;
  /** What `env` shows to expressions. @default process.env */
  env?: Record<string, string | undefined>;
  /** @default { kind: 'manual' } */
  trigger?: { kind: 'manual' | 'schedule'; scheduleId?: string };
}

export interface RunResult {
  runId: string;
  status: RunStatus;
  /** The playbook's `outputs`, rendered after a successful run. */
  outputs?: unknown;
  error?: ErrorRecord;
  /** Every step execution and loop item, in the order they started; never-started ones `notStarted`. */
  steps: StepSummary[];
  /** Paths of the steps a dry run did not send. */
  simulatedSteps: string[];
  durationMs: number;
}

export async function runPlaybook(playbook: Playbook, options: RunOptions): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const secrets = options.secrets ?? createSecretRegistry();
  const resolved = resolveInputs(playbook.inputs, options.inputs ?? {}, playbook.name);
  for (const name of resolved.secretNames) secrets.add(String(resolved.values[name]));
  const runId = options.runId ?? randomUUID();
  const dryRun = options.dryRun ?? false;
  const signal = options.signal ?? new AbortController().signal;
  const startedMs = now();
  const startedAt = new Date().toISOString();
  const { store } = options;

  await store.createRun({
    id: runId,
    playbook: playbook.name,
    playbookSource: playbook.source,
    playbookHash: playbook.hash,
    inputs: Object.fromEntries(Object.entries(resolved.values).filter(([name]) => !resolved.secretNames.includes(name))),
    secretInputNames: resolved.secretNames,
    dryRun,
    trigger: options.trigger ?? { kind: 'manual' },
    startedAt,
  });
  // The run's lease: a resume in another process must not drive the same run at once.
  const leaseKey = `run:${runId}`;
  const owner = `${hostname()}:${process.pid}:${randomUUID()}`;
  await store.acquireLease(leaseKey, owner, LEASE_TTL_MS);
  const renewal = setInterval(() => {
    store.acquireLease(leaseKey, owner, LEASE_TTL_MS).catch(() => undefined);
  }, LEASE_TTL_MS / 3);
  renewal.unref();
  try {
    return await execute(playbook, options, { runId, dryRun, signal, startedMs, startedAt, secrets, values: resolved.values, now });
  } finally {
    clearInterval(renewal);
    await store.releaseLease(leaseKey, owner);
  }
}

interface RunFacts {
  runId: string;
  dryRun: boolean;
  signal: AbortSignal;
  startedMs: number;
  startedAt: string;
  secrets: SecretRegistry;
  values: Record<string, unknown>;
  now: () => number;
}

async function execute(playbook: Playbook, options: RunOptions, facts: RunFacts): Promise<RunResult> {
  const { runId, dryRun, signal, startedMs, startedAt, secrets, now } = facts;
  const { store } = options;
  const logger = options.logger.child({ runId, playbook: playbook.name });
  logger.info({ dryRun }, `run ${runId} of ${playbook.name} started${dryRun ? ' (dry run: writes are not sent)' : ''}`);

  const runner = createStepRunner({
    client: options.client,
    logger,
    secrets,
    dryRun,
    now,
    random: options.random ?? Math.random,
    journal: (event) => store.append(runId, secrets.scrubValue(event)),
  });
  const scope = new Scope({ playbook, inputs: facts.values, run: { id: runId, playbook: playbook.name, dryRun, startedAt }, env: options.env ?? process.env });
  const ending = await runner.runSequence(playbook.steps, scope, '', signal);

  let status: RunStatus = ending === 'succeeded' ? RunStatus.succeeded : ending === 'failed' ? RunStatus.failed : RunStatus.interrupted;
  let outputs: unknown;
  let error: ErrorRecord | undefined;
  const steps = runner.summaries();
  if (status === RunStatus.succeeded && playbook.outputs) {
    try {
      outputs = secrets.scrubValue(await playbook.outputs.evaluate(scope.context()));
    } catch (caught) {
      status = RunStatus.failed;
      error = toErrorRecord(caught);
    }
  }
  if (status !== RunStatus.succeeded && !error) {
    const failed = steps.find((step) => step.status === StepStatus.failed && step.kind !== 'item' && step.error);
    error =
      status === RunStatus.interrupted
        ? { message: 'the run was interrupted; it can be resumed', code: 'INTERRUPTED' }
        : (failed?.error ?? { message: 'a step failed', code: 'STEP_FAILED' });
  }
  const simulatedSteps = steps.filter((step) => step.status === StepStatus.simulated).map((step) => step.path);
  await store.setRunStatus(runId, status, { ...(outputs === undefined ? {} : { outputs }), ...(error ? { error } : {}) });
  const durationMs = now() - startedMs;
  logger[status === RunStatus.succeeded ? 'info' : 'error'](
    { status, durationMs, ...(error ? { error } : {}), ...(dryRun ? { simulatedSteps } : {}) },
    `run ${runId} ${status}`,
  );
  return { runId, status, ...(outputs === undefined ? {} : { outputs }), ...(error ? { error } : {}), steps, simulatedSteps, durationMs };
}
