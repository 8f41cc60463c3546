/** What a run and a resume take (`RunOptions`, `ResumeOptions`) and give back (`RunResult`). */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlatformClient } from '../api/index.js';
import { type Logger, type SecretRegistry } from '../logging/index.js';
import { type StartGate } from '../windows/index.js';
import type { RunStatus, WaitRecord, ErrorRecord, NewNotification, RunStore } from '../store/index.js';
import { defaultMaxInlineOutputBytes, type SpillOptions } from './large-values.js';
import type { RetrySource } from './retry-failed.js';
import { type StepSummary } from './step-runner.js';
import { createStepRegistry, type Mailer, type PlanGuard, type StepRegistry } from '../steps/index.js';
import { type Clock } from '../timers/index.js';

/** @default of `RunOptions.cancelCheckMs`. */
export const DEFAULT_CANCEL_CHECK_MS = 2000;

let builtins: StepRegistry | undefined;
/** The built-in kinds, made once. */
export function builtinRegistry(): StepRegistry {
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
  /** With `dryRun`: each write is planned (its resource read, its change recorded in its outputs). @default false */
  planWrites?: boolean;
  /** `fleetbook apply`: each write is checked against the plan before it is sent. */
  planGuard?: PlanGuard;
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
  /** `by`: who started or triggered the run (a gate's `notRequester` refuses them). @default { kind: 'manual' } */
  trigger?: {
    kind: 'manual' | 'schedule' | 'trigger';
    scheduleId?: string;
    by?: string;
    ignoredWindow?: string;
    rerunOf?: string;
    retriedFailed?: boolean;
  };
  /** Retry what failed in another run: what its journal says succeeded is replayed, not run (`retrySourceOf`). */
  retry?: RetrySource;
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
  /**
   * Where `email` steps send (the CLI passes the e-mail channels of fleetbook.yaml, or the
   * embedded simulator's outbox for a rehearsal). @default none: an `email` step fails saying so
   */
  mailer?: Mailer;
}

/** A run's end as the `notify` hook sees it. */
export interface RunEndingReport {
  runId: string;
  playbook: string;
  dryRun: boolean;
  trigger: { kind: string; scheduleId?: string };
  status: RunStatus;
  /** When the run first started (not this process's resume of it). */
  startedAt: string;
  /** Now: this end (or wait). From `startedAt` to here is the run's whole duration, waits included. */
  endedAt: string;
  outputs?: unknown;
  error?: ErrorRecord;
  steps: readonly StepSummary[];
  /** Which end of the run this is (`r<resumes>`): a resumed run that ends again is a new event. */
  occurrence: string;
  /** A run that waits: the gate it waits at. */
  waiting?: { step: string; message?: string; approvers?: string[] };
}

/** What `resumeRun` takes: the run's own inputs come from the store. */
export interface ResumeOptions extends Omit<RunOptions, 'inputs' | 'dryRun' | 'runId' | 'trigger' | 'retry'> {
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

/** The folder runs keep their files in (each its own `<folder>/<runId>/`): `outputsDir`, or its default. */
export const outputsRootOf = (outputsDir: string | undefined): string =>
  outputsDir ?? join(tmpdir(), 'fleetbook-outputs');

/** Where this run's large values go (see large-values.ts). */
export function spillOptionsOf(
  options: Pick<RunOptions, 'outputsDir' | 'maxInlineOutputBytes' | 'env'>,
  runId: string,
): SpillOptions {
  return {
    dir: outputsRootOf(options.outputsDir),
    runId,
    maxInlineBytes: options.maxInlineOutputBytes ?? defaultMaxInlineOutputBytes,
  };
}
