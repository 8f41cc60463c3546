/** The run's end: its status, outputs and error, written with its notifications; the journal view and retention. */
import { type Logger, type SecretRegistry } from '../logging/index.js';
import { type Playbook } from '../playbook/index.js';
import { toErrorRecord } from '../steps/index.js';
import { checkpointJournalView, pruneRuns } from '../store/index.js';
import {
  RunStatus,
  StepStatus,
  type WaitRecord,
  type ErrorRecord,
  type NewNotification,
  type RunStore,
} from '../store/index.js';
import { spillLargeValue, type SpillOptions } from './large-values.js';
import type { Scope } from './scope.js';
import { describeWait } from './run-waits.js';
import { type StepSummary } from './step-runner.js';
import type { Ending } from '../steps/index.js';
import { type RunOptions, type RunEndingReport, type ResumeOptions, type RunResult } from './run-options.js';
import { type RunFacts } from './run-playbook.js';
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

/**
 * The error that failed the run: that of the top-level step the sequence stopped at (a failed
 * step with `continueOnError` did not stop it, whatever came first).
 */
function failureOf(playbook: Playbook, steps: readonly StepSummary[]): ErrorRecord | undefined {
  const stopping = new Set(playbook.steps.filter((step) => !step.continueOnError).map((step) => step.id));
  return steps.find((step) => step.status === StepStatus.failed && stopping.has(step.path))?.error;
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
export async function outcomeOf(
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
export async function recordOutcome(
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
  const endedMs = now();
  // This process's part of the run (since it started or resumed it): what its log line says.
  const durationMs = endedMs - facts.startedMs;
  const notifications = notificationsOfOutcome(playbook, outcome, steps, facts, options, logger, endedMs);
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
  endedMs: number,
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
    endedAt: new Date(endedMs).toISOString(),
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
