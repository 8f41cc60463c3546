/**
 * `runPlaybook`: one run of a loaded playbook, from its inputs to its outputs, journaled in
 * the run store before each transition is acted on.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformClient } from '../api/index.js';
import { FleetbookError, UsageError, errorMessage } from '../errors/index.js';
import { createSecretRegistry, type Logger, type SecretRegistry } from '../logging/index.js';
import { hasTimeRules, timeRulesOf, type Playbook } from '../playbook/index.js';
import { startGateOf, type StartGate } from '../windows/index.js';
import { reconciliationOf, StepErrorCode, toErrorRecord } from '../steps/index.js';
import {
  acquireLeaseFromLiveOrDead,
  checkpointJournalView,
  journalPages,
  JOURNAL_PAGE_SIZE,
  newLeaseOwner,
  pruneRuns,
  RUN_LEASE_TTL_MS,
  runLeaseKey,
} from '../store/index.js';
import {
  RunStatus,
  StepStatus,
  type AppendOptions,
  type ApprovalDecision,
  type CancelRequest,
  type JournalEntry,
  type JournalEvent,
  type WaitRecord,
  type ErrorRecord,
  type NewNotification,
  type RunQueue,
  type RunRecord,
  type RunStore,
} from '../store/index.js';
import { resolveInputs } from './inputs.js';
import { bindInputSettings } from './input-settings.js';
import {
  mayCarryLargeValue,
  defaultMaxInlineOutputBytes,
  readSpilledInputs,
  spillLargeEventValues,
  spillLargeInputs,
  spillLargeValue,
  type SpillOptions,
} from './large-values.js';
import { DEFAULT_RECONCILE_SETTLE_MS } from './reconciliation.js';
import { createResumePlan, replayedStatuses, type InFlightRequest, type ResumePlan } from './resume-plan.js';
import { exposedEnvironment, Scope } from './scope.js';
import { createTaintTracker } from './taint.js';
import { createRunWaits, decisionsOf, describeWait, endWaitForResume, type RunWaitsState } from './run-waits.js';
import { createStepRunner, type StepSummary } from './step-runner.js';
import type { Ending } from '../steps/index.js';
import { createStepRegistry, type StepRegistry } from '../steps/index.js';
import { systemClock, type Clock, type Timer } from '../timers/index.js';

/** @default of `RunOptions.cancelCheckMs`. */
const DEFAULT_CANCEL_CHECK_MS = 2000;

let builtins: StepRegistry | undefined;
/** The built-in kinds, made once. */
function builtinRegistry(): StepRegistry {
  return (builtins ??= createStepRegistry());
}

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
  /** Time of the run: durations, retry delays, timeouts, sleeps. @default the system clock */
  clock?: Clock;
  /** The step kinds the playbook was loaded with. @default the built-in kinds */
  registry?: StepRegistry;
  /** Jitter source of step retries. @default Math.random */
  random?: () => number;
  /** The environment expressions see: its `FLEETBOOK_VAR_*` variables (see `exposedEnvironment`). The engine reads no variable itself. @default {} */
  env?: Record<string, string | undefined>;
  /** @default { kind: 'manual' } */
  trigger?: { kind: 'manual' | 'schedule' | 'trigger'; scheduleId?: string; ignoredWindow?: string };
  /**
   * Folder for step outputs too large for the journal (`<dir>/<runId>/<path>.json`, the journal
   * keeping a reference). The CLI passes `FLEETBOOK_HOME/outputs`. @default `fleetbook-outputs` in the OS temp folder
   */
  outputsDir?: string;
  /** Runs that ended longer ago than this are pruned (with their output files) when this run ends. @default none is */
  retentionMs?: number;
  /**
   * A run whose journal has at least this many entries keeps its journal folded without values
   * in the store when it ends (`checkpointJournalView`), so `runs show` reads that, not the journal.
   * @default JOURNAL_VIEW_MIN_ENTRIES (50,000)
   */
  journalViewMinEntries?: number;
  /**
   * How long after a write of unknown outcome was sent its state is first read (reconciliation):
   * a write the platform received but has not applied yet shows nothing, and would be sent
   * again. Only the part not already past waits (a resume an hour after a crash reads at once).
   * @default 5000
   */
  reconcileSettleMs?: number;
  /** Values larger than this (bytes of JSON: outputs, inputs, a step's rendered input) go to `outputsDir`. @default 65536 */
  maxInlineOutputBytes?: number;
  /** How long the run's lease lasts unless renewed (every third of it). @default 60000 */
  leaseTtlMs?: number;
  /**
   * When a loop may start its next item, asked on the run's clock: the maintenance windows.
   * `null`: whenever (`fleetbook run --ignore-window`). @default the playbook's own `window:` and `freeze:`
   */
  startGate?: StartGate | null;
  /** How often the run's driver looks for a cancellation asked by another process (`runs cancel`). @default 2000 */
  cancelCheckMs?: number;
  /**
   * The notifications the run's end causes (the CLI and the scheduler pass the notifications
   * module's rules): recorded in the store's outbox with the run's status, in one transaction,
   * after the secrets of the run are scrubbed from them. Not asked for an interrupted run, nor
   * for one whose lease was lost. A hook that throws is logged; the run's result stays as it is.
   */
  notify?: (ending: RunEndingReport) => readonly NewNotification[];
}

/** A run's end as the `notify` hook sees it. */
export interface RunEndingReport {
  runId: string;
  playbook: string;
  dryRun: boolean;
  trigger: { kind: string; scheduleId?: string };
  status: RunStatus;
  startedAt: string;
  durationMs: number;
  outputs?: unknown;
  error?: ErrorRecord;
  steps: readonly StepSummary[];
  /** Which end of the run this is (`r<resumes>`): a resumed run that ends again is a new event. */
  occurrence: string;
  /** A run that waits: the gate it waits at. */
  waiting?: { step: string; message?: string; approvers?: string[] };
}

/** What `resumeRun` takes: the run's own inputs come from the store. */
export interface ResumeOptions extends Omit<RunOptions, 'inputs' | 'dryRun' | 'runId' | 'trigger'> {
  runId: string;
  /** Values of the run's secret inputs (never stored): from the environment or a prompt. */
  secretInputs?: Record<string, unknown>;
  /** Resume although the playbook's normalised hash differs from the run's. @default false */
  force?: boolean;
  /** Send again writes of unknown outcome that cannot be reconciled. @default false */
  confirmUnknown?: boolean;
  /**
   * Count this as a resume (`resumes + 1`). A worker starting a queued run for the first time
   * drives it through `resumeRun` (the run is already stored) without counting one. @default true
   */
  countAsResume?: boolean;
}

export interface RunResult {
  runId: string;
  status: RunStatus;
  /**
   * The playbook's `outputs`, rendered at the end of the run: after a failure or an interruption
   * too, as far as they render (an expression that fails then is logged, not fatal).
   */
  outputs?: unknown;
  error?: ErrorRecord;
  /** Every step execution and loop item, in the order they started; never-started ones `notStarted`. */
  steps: StepSummary[];
  /** Paths of the steps a dry run did not send. */
  simulatedSteps: string[];
  durationMs: number;
  /** What a `waiting` run waits for. */
  wait?: WaitRecord;
}

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
    'inputs' | 'dryRun' | 'runId' | 'trigger' | 'env' | 'outputsDir' | 'maxInlineOutputBytes'
  > & { store: RunQueue },
): Promise<RunRecord> {
  const resolved = resolveInputs(playbook.inputs, options.inputs ?? {}, playbook.name);
  // Checked now, as a run started here would be; the worker binds them again when it runs it.
  await bindInputSettings(playbook, resolved.values);
  const runId = options.runId ?? randomUUID();
  const storedInputs = Object.fromEntries(
    Object.entries(resolved.values).filter(([name]) => !resolved.secretNames.includes(name)),
  );
  return options.store.enqueueRun({
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
}

/** The run's lease while the run holds it (see `holdLease`). */
interface HeldLease {
  /** The run's signal: the caller's, also aborted when the lease is lost. */
  signal: AbortSignal;
  /** Why the lease was lost, once it was: from then on the run writes nothing more to the store. */
  lost(): ErrorRecord | undefined;
  /** Who cancelled the run, once its driver saw the request. */
  cancelled(): CancelRequest | undefined;
  release(): Promise<void>;
}

/**
 * The run's lease, renewed while it goes on: a resume in another process must not drive the
 * same run at once. A live owner elsewhere is a `UsageError` (exit 2). A renewal refused (the
 * lease lapsed and another process took it) or failing until less than a third of the TTL is
 * left aborts the run, as a lost playbook lock does (run-with-lock.ts): it starts no new work,
 * and since another process may now drive it, it journals nothing more.
 */
async function holdLease(
  store: RunStore,
  runId: string,
  options: Pick<RunOptions, 'leaseTtlMs' | 'logger' | 'signal' | 'clock' | 'cancelCheckMs'>,
): Promise<HeldLease> {
  const ttlMs = options.leaseTtlMs ?? RUN_LEASE_TTL_MS;
  const { logger, signal: outer } = options;
  const clock = options.clock ?? systemClock;
  const leaseKey = runLeaseKey(runId);
  const owner = newLeaseOwner();
  if (!(await acquireLeaseFromLiveOrDead(store, leaseKey, owner, ttlMs))) {
    throw new UsageError(
      `run ${runId} is being driven by another process (its lease is held); wait for it to end, or for its lease to lapse if that process died`,
      'RUN_LEASED',
    );
  }
  let heldUntil = clock.now() + ttlMs;
  let lostBecause: ErrorRecord | undefined;
  let finished = false;
  const controller = new AbortController();
  const forward = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener('abort', forward, { once: true });
  const lose = (message: string): void => {
    lostBecause = {
      message: `run ${runId} ${message}; it stopped starting work (another process may be driving it; \`fleetbook runs show ${runId}\`)`,
      code: 'LEASE_LOST',
    };
    logger.error({ event: 'lease.lost', runId, error: lostBecause }, lostBecause.message);
    controller.abort(new FleetbookError(lostBecause.message, { code: 'LEASE_LOST' }));
  };
  // Renewal timers do not keep the process alive by themselves (the run's own work does).
  const later = (task: () => void, ms: number): Timer => clock.setTimer(task, ms).unref();
  const renew = (): void => {
    if (finished) return;
    const askedAt = clock.now();
    // A renewal, not an acquisition: a lease another process released when it took the run over
    // (this one paused past its TTL) is lost, not taken back from under that process.
    store.renewLease(leaseKey, owner, ttlMs).then(
      (held) => {
        if (finished) return;
        if (!held) return lose('lost its lease to another process');
        heldUntil = askedAt + ttlMs;
        timer = later(renew, ttlMs / 3);
      },
      (error: unknown) => {
        if (finished) return;
        const leftMs = heldUntil - clock.now();
        if (leftMs <= ttlMs / 3) return lose(`could not renew its lease before it lapsed (${errorMessage(error)})`);
        logger.warn(
          { event: 'lease.renewFailed', runId, err: error },
          `could not renew the lease of run ${runId}; trying again`,
        );
        timer = later(renew, Math.min(ttlMs / 3, leftMs - ttlMs / 3));
      },
    );
  };
  let timer = later(renew, ttlMs / 3);
  const cancelWatch = watchForCancel(store, runId, controller, logger, (task, ms) => later(task, ms), options);
  return {
    signal: controller.signal,
    lost: () => lostBecause,
    cancelled: () => cancelWatch.cancelledBy(),
    async release() {
      finished = true;
      timer.cancel();
      cancelWatch.stop();
      outer?.removeEventListener('abort', forward);
      if (!lostBecause) await store.releaseLease(leaseKey, owner);
    },
  };
}

/**
 * The heartbeat that sees `fleetbook runs cancel` from another process (or another worker's
 * machine): the request is in the store, the run's signal aborts, steps stop at a journaled point.
 */
function watchForCancel(
  store: RunStore,
  runId: string,
  controller: AbortController,
  logger: Logger,
  later: (task: () => void, ms: number) => Timer,
  options: Pick<RunOptions, 'cancelCheckMs'>,
): { cancelledBy(): CancelRequest | undefined; stop(): void } {
  let cancelledBy: CancelRequest | undefined;
  let stopped = false;
  const cancelCheckMs = options.cancelCheckMs ?? DEFAULT_CANCEL_CHECK_MS;
  const lookForCancel = (): void => {
    if (stopped) return;
    store.getRun(runId).then(
      (run) => {
        if (stopped) return;
        if (run?.cancelRequested && !controller.signal.aborted) {
          cancelledBy = run.cancelRequested;
          logger.warn(
            { event: 'run.cancelRequested', runId, by: cancelledBy.by },
            `run ${runId} is being cancelled (asked by ${cancelledBy.by}); stopping at a journaled point`,
          );
          controller.abort(
            new FleetbookError(`run ${runId} was cancelled by ${cancelledBy.by}`, { code: 'RUN_CANCELLED' }),
          );
          return;
        }
        timer = later(lookForCancel, cancelCheckMs);
      },
      () => {
        // A store that cannot answer now is the renewal's concern; look again later.
        if (!stopped) timer = later(lookForCancel, cancelCheckMs);
      },
    );
  };
  let timer = later(lookForCancel, cancelCheckMs);
  return {
    cancelledBy: () => cancelledBy,
    stop() {
      stopped = true;
      timer.cancel();
    },
  };
}

/** Top-level step ids of the journal that the playbook no longer has, for the refusal's reason. */
function changedSteps(playbook: Playbook, plan: ResumePlan): string[] {
  const ids = new Set(playbook.steps.map((step) => step.id));
  const gone = new Set<string>();
  for (const path of plan.records.keys()) {
    const top = /^[A-Za-z_][A-Za-z0-9_]*/.exec(path)?.[0];
    if (top && !ids.has(top)) gone.add(top);
  }
  return [...gone];
}

/** The operation id `http` steps journal their requests under (steps/executors/http.ts). */
const WEBHOOK = 'http';

/**
 * Why a request of unknown outcome cannot be reconciled, or undefined when it can (or needs
 * not be: a read). A webhook that is not a GET may have notified, opened a ticket or called
 * back; nothing on the platform tells, so only the operator can say whether to send it again.
 */
function cannotReconcile(request: InFlightRequest, client: PlatformClient): string | undefined {
  if (request.operationId === WEBHOOK) {
    // A journal from before methods were kept: the executor's default is POST.
    const method = (request.method ?? 'POST').toUpperCase();
    return method === 'GET' || method === 'HEAD'
      ? undefined
      : 'a webhook leaves nothing the platform can show; sending it again may notify or act twice';
  }
  if (!client.catalogue.byId.get(request.operationId)?.isWrite) return undefined;
  const rule = reconciliationOf(request.operationId);
  return rule.kind === 'cannot' ? rule.reason : undefined;
}

/** Refuses what a resume must not do: an unknown or finished run, a changed playbook, unreconcilable writes. */
function checkResumable(
  run: RunRecord | undefined,
  runId: string,
  playbook: Playbook,
  plan: ResumePlan,
  options: ResumeOptions,
): asserts run is RunRecord {
  if (!run)
    throw new UsageError(`no run ${runId} in the store (\`fleetbook runs list\` shows the runs)`, 'RUN_NOT_FOUND');
  if (run.status === RunStatus.succeeded)
    throw new UsageError(`run ${runId} succeeded; there is nothing to resume`, 'RUN_SUCCEEDED');
  if (run.status === RunStatus.cancelled)
    throw new UsageError(
      `run ${runId} was cancelled${run.error?.details && typeof (run.error.details as { by?: unknown }).by === 'string' ? ` by ${(run.error.details as { by: string }).by}` : ''}; a cancelled run is not resumed (start a new run)`,
      'RUN_CANCELLED',
    );
  if (run.playbookHash !== playbook.hash && !options.force) {
    const gone = changedSteps(playbook, plan);
    throw new UsageError(
      `the playbook ${playbook.name} changed since run ${runId} started (its normalised hash differs${gone.length > 0 ? `; steps no longer there: ${gone.join(', ')}` : ''}). ` +
        'Resume with --force to continue with the playbook as it is now.',
      'PLAYBOOK_CHANGED',
    );
  }
  if (options.confirmUnknown) return;
  const unreconcilable = [...plan.inFlight]
    .filter(
      ([path, request]) => request.state === 'unknown' && !replayedStatuses.has(plan.records.get(path)?.status ?? ''),
    )
    .map(([path, request]) => ({ path, request, reason: cannotReconcile(request, options.client) }))
    .filter((found): found is { path: string; request: InFlightRequest; reason: string } => found.reason !== undefined);
  if (unreconcilable.length > 0) {
    const list = unreconcilable
      .map(
        ({ path, request, reason }) =>
          `${path} (${request.operationId === WEBHOOK ? `${request.method ?? ''} webhook` : request.operationId}: ${reason})`,
      )
      .join('; ');
    throw new UsageError(
      `run ${runId} sent writes whose outcome is unknown and cannot be reconciled: ${list}. Check the platform; resume with --confirm-unknown to send them again.`,
      'OUTCOME_UNKNOWN',
    );
  }
}

/**
 * Continues a run that was interrupted, crashed or failed: steps that succeeded are replayed
 * from the journal, a wait in flight re-attaches to its Location, a write of unknown outcome
 * is reconciled before it is sent again, failed steps run again. See docs/resume.md.
 */
export async function resumeRun(playbook: Playbook, options: ResumeOptions): Promise<RunResult> {
  const { store, runId } = options;
  const now = (options.clock ?? systemClock).now;
  const startedMs = now();
  const { retentionMs } = options;
  const lease = await holdLease(store, runId, options);
  try {
    let run = await store.getRun(runId);
    if (run?.status === RunStatus.waiting) {
      // Before its time a refusal saying how to end the wait; after it, ended as the sweep would.
      await endWaitForResume(store, run, now);
      run = await store.getRun(runId);
    }
    // Read without the steps' values (cut by the store), in pages: a fleet's journal is mostly API
    // answers, and a replay needs the outputs of few steps, read back one entry each.
    const journal: JournalEntry[] = [];
    for await (const page of journalPages(store, runId, JOURNAL_PAGE_SIZE, { values: false })) journal.push(...page);
    const plan = createResumePlan(journal, options.confirmUnknown, async (seq) => {
      const [entry] = await store.journal(runId, seq - 1, 1);
      return entry?.seq === seq ? entry.event : undefined;
    });
    checkResumable(run, runId, playbook, plan, options);
    checkSecretInputs(run, options.secretInputs ?? {});
    const secrets = options.secrets ?? createSecretRegistry();
    const resolved = resolveInputs(
      playbook.inputs,
      { ...(await readSpilledInputs(run.inputs)), ...options.secretInputs },
      playbook.name,
    );
    for (const name of resolved.secretNames) secrets.add(String(resolved.values[name]));
    const bound = await bindInputSettings(playbook, resolved.values);
    if (options.countAsResume !== false) await store.markResumed(runId);
    return await execute(bound, options, {
      runId,
      dryRun: run.dryRun,
      signal: lease.signal,
      leaseLost: lease.lost,
      cancelled: lease.cancelled,
      startedMs,
      startedAt: run.startedAt,
      secrets,
      values: resolved.values,
      now,
      resume: plan,
      decisions: decisionsOf(journal),
      retentionMs,
      trigger: run.trigger,
      occurrence: `r${run.resumes + (options.countAsResume !== false ? 1 : 0)}`,
    });
  } finally {
    await lease.release();
  }
}

/**
 * A secret input given when the run started must be given again (it was never stored): taking
 * its default instead would resume with another value than the run had.
 */
function checkSecretInputs(run: RunRecord, given: Record<string, unknown>): void {
  const missing = run.secretInputNames.filter(
    (name) => given[name] === undefined && !run.defaultedSecretInputs.includes(name),
  );
  if (missing.length > 0) {
    throw new UsageError(
      `run ${run.id} was started with the secret input${missing.length === 1 ? '' : 's'} ${missing.map((name) => `'${name}'`).join(', ')} given; secrets are never stored, so give ${missing.length === 1 ? 'it' : 'them'} again to resume`,
      'SECRET_INPUT_MISSING',
    );
  }
}

/** The statuses after which no process drives the run until someone resumes or redrives it. */
const endedStatuses = new Set<string>([RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled]);

/**
 * Keeps the run's journal folded without values in the store, once its status is written (the
 * run is over for whoever looks; the fold reads the journal back, not the run's memory). A
 * failure costs `runs show` time, not the run: it is logged.
 */
async function keepJournalView(
  store: RunStore,
  runId: string,
  minEntries: number | undefined,
  logger: Logger,
): Promise<void> {
  try {
    await checkpointJournalView(store, runId, minEntries);
  } catch (error) {
    logger.warn(
      { event: 'run.journalViewFailed', err: error },
      `could not keep the folded journal of run ${runId}; runs show folds it from the journal`,
    );
  }
}

/**
 * Applies the retention as a run ends, so history does not grow without a `runs prune`: one
 * indexed delete, and a look at the output folders only when runs went. A failure is logged,
 * not the run's: its own outcome is already stored.
 */
async function pruneOldRuns(
  store: RunStore,
  now: number,
  retentionMs: number,
  outputsDir: string,
  logger: Logger,
): Promise<void> {
  const endedBefore = new Date(now - retentionMs).toISOString();
  try {
    const pruned = await pruneRuns(store, endedBefore, outputsDir, { onlyIfPruned: true });
    if (pruned > 0)
      logger.info(
        { event: 'runs.pruned', pruned, endedBefore },
        `pruned ${pruned} run${pruned === 1 ? '' : 's'} that ended before ${endedBefore} (FLEETBOOK_RETENTION)`,
      );
  } catch (error) {
    logger.warn(
      { event: 'runs.pruneFailed', err: error, endedBefore },
      `could not prune runs that ended before ${endedBefore} (FLEETBOOK_RETENTION)`,
    );
  }
}

/** Where this run's large values go (see large-values.ts). */
function spillOptionsOf(
  options: Pick<RunOptions, 'outputsDir' | 'maxInlineOutputBytes' | 'env'>,
  runId: string,
): SpillOptions {
  return {
    dir: options.outputsDir ?? join(tmpdir(), 'fleetbook-outputs'),
    runId,
    maxInlineBytes: options.maxInlineOutputBytes ?? defaultMaxInlineOutputBytes,
  };
}

/**
 * The error that failed the run: that of the top-level step the sequence stopped at (a failed
 * step with `continueOnError` did not stop it, whatever came first).
 */
function failureOf(playbook: Playbook, steps: readonly StepSummary[]): ErrorRecord | undefined {
  const stopping = new Set(playbook.steps.filter((step) => !step.continueOnError).map((step) => step.id));
  return steps.find((step) => step.status === StepStatus.failed && stopping.has(step.path))?.error;
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

interface RunFacts {
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

/** What the `notify` hook makes of the run's end, its secrets scrubbed; none when it fails (logged). */
function notificationsOf(
  options: RunOptions | ResumeOptions,
  logger: Logger,
  secrets: SecretRegistry,
  ending: RunEndingReport,
): readonly NewNotification[] | undefined {
  if (!options.notify) return undefined;
  try {
    return secrets.scrubValue(options.notify(ending));
  } catch (caught) {
    logger.error(
      { event: 'notification.composeFailed', error: toErrorRecord(caught) },
      `the notifications of run ${ending.runId} could not be made; the run's result is kept`,
    );
    return undefined;
  }
}

async function execute(playbook: Playbook, options: RunOptions | ResumeOptions, facts: RunFacts): Promise<RunResult> {
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
  if (facts.resume)
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
    clock: options.clock ?? systemClock,
    reconcileSettleMs: options.reconcileSettleMs ?? DEFAULT_RECONCILE_SETTLE_MS,
    registry,
    random: options.random ?? Math.random,
    journal,
    waits,
    ...(facts.resume ? { resume: facts.resume } : {}),
    ...startGateOption(playbook, options.startGate),
  });
  const scope = new Scope({
    playbook,
    inputs: facts.values,
    run: { id: runId, playbook: playbook.name, dryRun, startedAt },
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

interface RunOutcome {
  status: RunStatus;
  outputs: unknown;
  error: ErrorRecord | undefined;
  /** Set when the run lost its lease: its status is then left to whoever drives it now. */
  leaseLost: ErrorRecord | undefined;
  /** The wait the run stopped for, when it ends `waiting`. */
  wait: WaitRecord | undefined;
}

/** The run's status, rendered outputs and error once its sequence of steps ended `ending`. */
async function outcomeOf(
  playbook: Playbook,
  ending: Ending,
  scope: Scope,
  steps: readonly StepSummary[],
  facts: RunFacts,
  wait: WaitRecord | undefined,
  options: RunOptions | ResumeOptions,
  logger: Logger,
): Promise<RunOutcome> {
  const { runId } = facts;
  let status: RunStatus =
    ending === 'succeeded' ? RunStatus.succeeded : ending === 'failed' ? RunStatus.failed : RunStatus.interrupted;
  let outputs: unknown;
  let error: ErrorRecord | undefined;
  if (playbook.outputs) {
    try {
      outputs = facts.secrets.scrubValue(await playbook.outputs.evaluate(scope.context()));
    } catch (caught) {
      // After a success the outputs are the run's result: failing to render them fails it. After a
      // failure they are a best effort (what a rolling update's table shows of the systems it reached).
      if (status === RunStatus.succeeded) {
        status = RunStatus.failed;
        error = toErrorRecord(caught);
      } else {
        logger.warn(
          { error: toErrorRecord(caught) },
          `the outputs of run ${runId} could not be rendered after it ${status}`,
        );
      }
    }
  }
  const leaseLost = facts.leaseLost();
  const cancelledBy = facts.cancelled();
  if (leaseLost) {
    status = RunStatus.interrupted;
    error = leaseLost;
  } else if (cancelledBy) {
    // Asked by `runs cancel`: stopped where the journal is, not to be resumed.
    status = RunStatus.cancelled;
    error = { message: `run ${runId} was cancelled by ${cancelledBy.by}`, code: 'RUN_CANCELLED', details: cancelledBy };
  } else if (wait && status === RunStatus.interrupted && !options.signal?.aborted) {
    status = RunStatus.waiting;
  }
  if (status !== RunStatus.succeeded && status !== RunStatus.waiting && !error) {
    error =
      status === RunStatus.interrupted
        ? { message: 'the run was interrupted; it can be resumed', code: 'INTERRUPTED' }
        : (failureOf(playbook, steps) ?? { message: 'a step failed', code: 'STEP_FAILED' });
  }
  return { status, outputs, error, leaseLost, wait: status === RunStatus.waiting ? wait : undefined };
}

/** Writes the run's end (status, outputs, notifications), prunes old runs, logs it and says what it was. */
async function recordOutcome(
  playbook: Playbook,
  outcome: RunOutcome,
  steps: StepSummary[],
  facts: RunFacts,
  options: RunOptions | ResumeOptions,
  logger: Logger,
  spill: SpillOptions,
): Promise<RunResult> {
  const { runId, dryRun, now } = facts;
  const { store } = options;
  const { outputs, leaseLost } = outcome;
  const simulatedSteps = steps.filter((step) => step.status === StepStatus.simulated).map((step) => step.path);
  const durationMs = now() - facts.startedMs;
  const notifications = notificationsOfOutcome(playbook, outcome, steps, facts, options, logger, durationMs);
  // A run that lost its lease leaves the run's status to whoever drives it now.
  const { status, error, wait } = leaseLost ? outcome : await writeEnd(outcome, runId, store, notifications, spill);
  if (!leaseLost && endedStatuses.has(status))
    await keepJournalView(store, runId, options.journalViewMinEntries, logger);
  if (facts.retentionMs !== undefined && !leaseLost)
    await pruneOldRuns(store, now(), facts.retentionMs, spill.dir, logger);
  if (wait)
    logger.warn(
      { status, durationMs, wait, event: 'run.waiting' },
      `run ${runId} waiting for ${describeWait(wait)}; no process is kept meanwhile`,
    );
  else
    logger[status === RunStatus.succeeded ? 'info' : 'error'](
      { status, durationMs, ...(error ? { error } : {}), ...(dryRun ? { simulatedSteps } : {}) },
      `run ${runId} ${status}`,
    );
  return {
    runId,
    status,
    ...(wait ? { wait } : {}),
    ...(outputs === undefined ? {} : { outputs }),
    ...(error ? { error } : {}),
    steps,
    simulatedSteps,
    durationMs,
  };
}

/**
 * Writes the run's end: its wait, or its status with its outputs and notifications. The store
 * may write `cancelled` instead (a cancellation asked before the end, not yet seen by the
 * run's driver, wins: see `RunStore.setRunStatus`); what was written is what the run ended as.
 */
async function writeEnd(
  outcome: RunOutcome,
  runId: string,
  store: RunStore,
  notifications: NewNotification[] | undefined,
  spill: SpillOptions,
): Promise<Pick<RunOutcome, 'status' | 'error' | 'wait'>> {
  const { status, outputs, error, wait } = outcome;
  let written: RunStatus;
  if (wait) {
    written = await store.suspendRun(runId, wait);
    // Right after the wait is recorded and before any send (suspendRun takes no notifications).
    if (written === RunStatus.waiting && notifications) await store.addNotifications(notifications);
  } else {
    written = await store.setRunStatus(runId, status, {
      ...(outputs === undefined ? {} : { outputs: await spillLargeValue(outputs, 'run.outputs', spill) }),
      ...(error ? { error } : {}),
      ...(notifications ? { notifications } : {}),
    });
  }
  if (written === status) return { status, error, wait };
  const stored = (await store.getRun(runId))?.error;
  return {
    status: written,
    error: stored ?? { message: `run ${runId} was cancelled`, code: 'RUN_CANCELLED' },
    wait: undefined,
  };
}

/**
 * The notifications the run's end sets off, if any: none for a run stopped to be resumed or
 * cancelled, nor one whose lease was lost (its status is another's to write).
 */
function notificationsOfOutcome(
  playbook: Playbook,
  outcome: RunOutcome,
  steps: StepSummary[],
  facts: RunFacts,
  options: RunOptions | ResumeOptions,
  logger: Logger,
  durationMs: number,
): NewNotification[] | undefined {
  const { status, outputs, error, leaseLost, wait } = outcome;
  if (leaseLost || status === RunStatus.interrupted || status === RunStatus.cancelled) return undefined;
  const notifications = notificationsOf(options, logger, facts.secrets, {
    runId: facts.runId,
    playbook: playbook.name,
    dryRun: facts.dryRun,
    trigger: facts.trigger,
    status,
    startedAt: facts.startedAt,
    durationMs,
    ...(outputs === undefined ? {} : { outputs }),
    ...(error ? { error } : {}),
    steps,
    // Each gate a run waits at is an event of its own.
    occurrence: wait ? `${wait.path}@${facts.occurrence}` : facts.occurrence,
    ...(wait
      ? {
          waiting: {
            step: wait.path,
            ...(wait.message === undefined ? {} : { message: wait.message }),
            ...(wait.approvers === undefined ? {} : { approvers: wait.approvers }),
          },
        }
      : {}),
  });
  return notifications && notifications.length > 0 ? [...notifications] : undefined;
}
