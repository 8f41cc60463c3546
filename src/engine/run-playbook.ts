/**
 * `runPlaybook`: one run of a loaded playbook, from its inputs to its outputs, journaled in
 * the run store before each transition is acted on.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { createSecretRegistry, type SecretRegistry } from '../logging/index.js';
import { hasTimeRules, timeRulesOf, type Playbook } from '../playbook/index.js';
import { startGateOf, type StartGate } from '../windows/index.js';
import { createPlanSession, StepErrorCode } from '../steps/index.js';
import {
  StepStatus,
  type AppendOptions,
  type ApprovalDecision,
  type CancelRequest,
  type JournalEvent,
  type ErrorRecord,
  type RunQueue,
  type RunRecord,
  type RunStore,
} from '../store/index.js';
import { resolveInputs } from './inputs.js';
import { bindInputSettings } from './input-settings.js';
import { mayCarryLargeValue, spillLargeEventValues, spillLargeInputs, type SpillOptions } from './large-values.js';
import { DEFAULT_RECONCILE_SETTLE_MS } from './reconciliation.js';
import { createResumePlan, type ResumePlan } from './resume-plan.js';
import type { RetrySource } from './retry-failed.js';
import { exposedEnvironment, Scope } from './scope.js';
import { createTaintTracker } from './taint.js';
import { createRunWaits, type RunWaitsState } from './run-waits.js';
import { createStepRunner, type StepSummary } from './step-runner.js';
import { systemClock } from '../timers/index.js';
import {
  type RunOptions,
  type RunEndingReport,
  type ResumeOptions,
  type RunResult,
  spillOptionsOf,
  builtinRegistry,
} from './run-options.js';
import { holdLease } from './run-lease.js';
import { outcomeOf, recordOutcome } from './run-ending.js';

export async function runPlaybook(loaded: Playbook, options: RunOptions): Promise<RunResult> {
  const now = (options.clock ?? systemClock).now;
  const secrets = options.secrets ?? createSecretRegistry();
  const resolved = resolveInputs(loaded.inputs, options.inputs ?? {}, loaded.name);
  // Before the run is recorded: a setting the inputs make invalid starts nothing.
  const playbook = await bindInputSettings(loaded, resolved.values);
  for (const name of resolved.secretNames) secrets.add(String(resolved.values[name]));
  const runId = options.runId ?? randomUUID();
  const { retentionMs } = options;
  const dryRun = options.dryRun ?? false;
  const startedMs = now();
  const startedAt = new Date(startedMs).toISOString();
  const { store } = options;

  const storedInputs = Object.fromEntries(
    Object.entries(resolved.values).filter(([name]) => !resolved.secretNames.includes(name)),
  );
  // Leased before it exists: `runs list` never sees the new run running without a driver (crashed).
  const lease = await holdLease(store, runId, options);
  try {
    await store.createRun({
      id: runId,
      playbook: playbook.name,
      playbookSource: playbook.source,
      playbookHash: playbook.hash,
      inputs: await spillLargeInputs(storedInputs, spillOptionsOf(options, runId)),
      secretInputNames: resolved.secretNames,
      // The fact, not the value: a resume may take these defaults again, and must be given the others.
      defaultedSecretInputs: resolved.secretNames.filter((name) => options.inputs?.[name] === undefined),
      dryRun,
      trigger: options.trigger ?? { kind: 'manual' },
      startedAt,
    });
    const replay = await copyRetried(store, runId, options.retry);
    return await execute(playbook, options, {
      runId,
      dryRun,
      signal: lease.signal,
      leaseLost: lease.lost,
      cancelled: lease.cancelled,
      startedMs,
      startedAt,
      secrets,
      values: resolved.values,
      now,
      decisions: new Map(),
      retentionMs,
      trigger: options.trigger ?? { kind: 'manual' },
      occurrence: 'r0',
      ...(replay ? { resume: replay } : {}),
    });
  } finally {
    await lease.release();
  }
}

/**
 * Records a run of `playbook` as `queued` in a shared store, for a worker to claim and drive
 * (`fleetbook run --queue`, the scheduler in team mode). The record is the one `runPlaybook`
 * would make: inputs checked and defaulted, secret inputs left out (a worker reads them from
 * its own environment, as a resume does), large inputs spilled.
 */
export async function enqueuePlaybookRun(
  playbook: Playbook,
  options: Pick<
    RunOptions,
    'inputs' | 'dryRun' | 'runId' | 'trigger' | 'env' | 'outputsDir' | 'maxInlineOutputBytes' | 'retry'
  > & { store: RunQueue & Pick<RunStore, 'append'> },
): Promise<RunRecord> {
  const resolved = resolveInputs(playbook.inputs, options.inputs ?? {}, playbook.name);
  // Checked now, as a run started here would be; the worker binds them again when it runs it.
  await bindInputSettings(playbook, resolved.values);
  const runId = options.runId ?? randomUUID();
  const storedInputs = Object.fromEntries(
    Object.entries(resolved.values).filter(([name]) => !resolved.secretNames.includes(name)),
  );
  const run = await options.store.enqueueRun({
    id: runId,
    playbook: playbook.name,
    playbookSource: playbook.source,
    playbookHash: playbook.hash,
    inputs: await spillLargeInputs(storedInputs, spillOptionsOf(options, runId)),
    secretInputNames: resolved.secretNames,
    defaultedSecretInputs: resolved.secretNames.filter((name) => options.inputs?.[name] === undefined),
    dryRun: options.dryRun ?? false,
    trigger: options.trigger ?? { kind: 'manual' },
    startedAt: new Date().toISOString(),
  });
  // The worker that claims it goes on from its journal as a resume does: the copy is its replay.
  await copyRetried(options.store, runId, options.retry);
  return run;
}

/**
 * Retrying what failed in another run: the old journal's entries of what is replayed start the
 * new run's journal, and the plan made of them replays it (nothing of it is sent again).
 */
async function copyRetried(
  store: Pick<RunStore, 'append'>,
  runId: string,
  retry: RetrySource | undefined,
): Promise<ResumePlan | undefined> {
  if (!retry) return undefined;
  const { events } = retry;
  // Buffered, committed together by the last one: a fleet's copy is one transaction, not thousands.
  for (const [index, event] of events.entries())
    await store.append(runId, event, index === events.length - 1 ? {} : { buffered: true });
  return createResumePlan(
    events.map((event, index) => ({ runId, seq: index + 1, at: new Date(0).toISOString(), event })),
  );
}

/** The gate the run's loops ask: the one given, none (`null`), or the playbook's own windows and freezes. */
function startGateOption(playbook: Playbook, given: StartGate | null | undefined): { startGate?: StartGate } {
  if (given === null) return {};
  if (given) return { startGate: given };
  const rules = timeRulesOf(playbook);
  return hasTimeRules(rules) ? { startGate: startGateOf(rules) } : {};
}

/**
 * Makes the run wait (`run.waiting`, reason `window`, until the next opening) when a loop ended
 * `interrupted` with `WINDOW_CLOSED` (`onClose: wait`): the first such loop names the wait.
 */
async function waitForWindow(steps: readonly StepSummary[], waits: RunWaitsState): Promise<void> {
  const stopped = steps.find(
    (step) => step.status === StepStatus.interrupted && step.error?.code === StepErrorCode.windowClosed,
  );
  if (!stopped?.error) return;
  const until = (stopped.error.details as { until?: unknown } | undefined)?.until;
  // `waitFor` rejects with the error a step stopped by it would end with: the run has ended here already.
  await waits
    .waitFor(stopped.path, {
      reason: 'window',
      message: stopped.error.message,
      ...(typeof until === 'string' ? { until } : {}),
    })
    .catch(() => undefined);
}

export interface RunFacts {
  runId: string;
  dryRun: boolean;
  signal: AbortSignal;
  /** Set once the run's lease is lost: the store is no longer the run's to write. */
  leaseLost: () => ErrorRecord | undefined;
  /** Set once the run's driver saw a cancellation asked of it. */
  cancelled: () => CancelRequest | undefined;
  /** Approval decisions journaled so far, by gate path. */
  decisions: ReadonlyMap<string, ApprovalDecision>;
  startedMs: number;
  startedAt: string;
  secrets: SecretRegistry;
  values: Record<string, unknown>;
  now: () => number;
  resume?: ResumePlan;
  /** `FLEETBOOK_RETENTION`: runs that ended longer ago are pruned when this one ends. */
  retentionMs?: number | undefined;
  trigger: RunEndingReport['trigger'];
  occurrence: string;
}

export async function execute(
  playbook: Playbook,
  options: RunOptions | ResumeOptions,
  facts: RunFacts,
): Promise<RunResult> {
  // The signal every step listens to: the lease's (interruption, cancellation), and a wait's.
  const stop = new AbortController();
  const forwardStop = (): void => stop.abort(facts.signal.reason);
  if (facts.signal.aborted) forwardStop();
  else facts.signal.addEventListener('abort', forwardStop, { once: true });
  try {
    return await executeSteps(playbook, options, facts, stop);
  } finally {
    facts.signal.removeEventListener('abort', forwardStop);
  }
}

async function executeSteps(
  playbook: Playbook,
  options: RunOptions | ResumeOptions,
  facts: RunFacts,
  stop: AbortController,
): Promise<RunResult> {
  const { runId, dryRun, startedAt, secrets } = facts;
  const { signal } = stop;
  // Every step in flight (loop items, waits, timeouts) listens to the run's signal: dozens at once are normal.
  setMaxListeners(0, signal);
  const logger = options.logger.child({ runId, playbook: playbook.name });
  const retried = 'retry' in options ? options.retry?.runId : undefined;
  if (retried && facts.resume)
    logger.info(
      { dryRun, rerunOf: retried, replayedSteps: facts.resume.records.size },
      `run ${runId} of ${playbook.name} started: what failed in run ${retried} runs again, what succeeded is replayed`,
    );
  else if (facts.resume)
    logger.info({ dryRun, journaledSteps: facts.resume.records.size }, `run ${runId} of ${playbook.name} resumed`);
  else
    logger.info(
      { dryRun },
      `run ${runId} of ${playbook.name} started${dryRun ? ' (dry run: writes are not sent)' : ''}`,
    );
  const spill = spillOptionsOf(options, runId);
  const registry = options.registry ?? builtinRegistry();
  const journal = journalOf(options, facts, spill);
  const waits = createRunWaits({ runId, decisions: facts.decisions, now: facts.now, journal, stop });
  const runner = createStepRunner({
    client: options.client,
    logger,
    secrets,
    dryRun,
    planWrites: dryRun && options.planWrites === true ? createPlanSession() : undefined,
    planGuard: dryRun ? undefined : options.planGuard,
    clock: options.clock ?? systemClock,
    reconcileSettleMs: options.reconcileSettleMs ?? DEFAULT_RECONCILE_SETTLE_MS,
    registry,
    random: options.random ?? Math.random,
    journal,
    waits,
    mail: { mailer: options.mailer, runId, outputsDir: join(spill.dir, runId) },
    history: options.store,
    ...(facts.resume ? { resume: facts.resume } : {}),
    ...startGateOption(playbook, options.startGate),
  });
  const scope = new Scope({
    playbook,
    inputs: facts.values,
    run: { id: runId, playbook: playbook.name, dryRun, startedAt, outputsDir: join(spill.dir, runId) },
    env: exposedEnvironment(options.env ?? {}, secrets),
    taint: createTaintTracker(playbook, secrets, registry),
  });
  const ending = await runner.runSequence(playbook.steps, scope, '', signal);
  // A loop its maintenance window stopped: once everything in flight has finished (here), the run waits for the opening.
  if (ending === 'interrupted' && !signal.aborted) await waitForWindow(runner.summaries(), waits);
  const steps = runner.summaries();
  const outcome = await outcomeOf(playbook, ending, scope, steps, facts, waits.waiting(), options, logger);
  return recordOutcome(playbook, outcome, steps, facts, options, logger, spill);
}

/** What the run's steps journal: scrubbed, large values spilled, nothing once the lease is lost. */
function journalOf(
  options: RunOptions | ResumeOptions,
  facts: RunFacts,
  spill: SpillOptions,
): (event: JournalEvent, appendOptions?: AppendOptions) => Promise<void> {
  // Not async: a journal append is hot (two per loop item), and most events go straight to the
  // store without a promise of their own.
  return (event, appendOptions) => {
    if (facts.leaseLost()) return Promise.resolve();
    const scrubbed = facts.secrets.scrubValue(event);
    if (!mayCarryLargeValue(scrubbed, spill.maxInlineBytes))
      return options.store.append(facts.runId, scrubbed, appendOptions);
    return spillLargeEventValues(scrubbed, spill).then((spilled) =>
      options.store.append(facts.runId, spilled, appendOptions),
    );
  };
}
