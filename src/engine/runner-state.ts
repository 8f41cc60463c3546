/**
 * What the pieces of the step runner share: the options of the run, the summary lines, the
 * journal, and the Locations followed so far. One per `createStepRunner`.
 */
import type { PlatformClient } from '../api/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import { loopItemReads, type ItemStepReads, type Playbook, type Step } from '../playbook/index.js';
import type { Ending, PlanGuard, PlanSession, RunHistory, RunMail, RunWaits } from '../steps/index.js';
import type { StepRegistry } from '../steps/index.js';
import { StepStatus, type AppendOptions, type ErrorRecord, type JournalEvent } from '../store/index.js';
import type { Clock } from '../timers/index.js';
import type { StartGate } from '../windows/index.js';
import type { ResumePlan } from './resume-plan.js';
import type { Scope } from './scope.js';

/** One line of a run's summary: a step execution or a loop item. */
export interface StepSummary {
  path: string;
  stepId: string;
  /** The step kind, or `item` for a loop item. */
  kind: string;
  status: StepStatus;
  attempts: number;
  durationMs: number;
  error?: ErrorRecord;
  /** The step failed, then its `rescue` succeeded. */
  rescued?: boolean;
  /** Resume: the journal says the step had ended so; it was not run again. */
  replayed?: boolean;
}

export interface RunnerOptions {
  client: PlatformClient;
  logger: Logger;
  secrets: SecretRegistry;
  dryRun: boolean;
  planWrites: PlanSession | undefined;
  planGuard: PlanGuard | undefined;
  /** The step kinds: how each step is run. */
  registry: StepRegistry;
  /** Journals an event; `buffered` for events that precede no effect outside the run (see `RunStore.append`). */
  journal(event: JournalEvent, options?: AppendOptions): Promise<void>;
  /** Durations, retry delays, timeouts, sleeps. */
  clock: Clock;
  /** How long a write of unknown outcome is given to land before its state is read. */
  reconcileSettleMs: number;
  random: () => number;
  /** Resume: what the journal of the continued run says (steps to replay, requests in flight). */
  resume?: ResumePlan;
  /** The run's maintenance windows: a loop starts no new item while they are closed. */
  startGate?: StartGate;
  /** Approval decisions of the run, and stopping it to wait. */
  waits: RunWaits;
  /** What `email` steps send with. */
  mail: RunMail;
  /** What `runs` steps read: the run's store. */
  history: RunHistory;
}

/** Where a sequence of steps runs. */
export interface Frame {
  scope: Scope;
  /** Path of the enclosing step (`''` at the top). */
  prefix: string;
  signal: AbortSignal;
}

/** A step's logger, made on first use: most steps of a loop never log at the run's level. */
export type StepLog = () => Logger;

/** What every line about a step carries: its id, and its path when that is not its id (in a loop, a block). */
export interface StepFields {
  stepId: string;
  path?: string;
}

/**
 * Journal entries that a crash may lose without harm: the started/finished entries of quiet
 * steps and of loop items. Losing them only means the step or item runs again on resume, and
 * since every effect outside the run is preceded by an unbuffered entry (which commits the
 * buffered ones before it), what survives a crash is always a prefix of the journal.
 */
export const BUFFERED: AppendOptions = { buffered: true };

export const joinPath = (prefix: string, id: string): string => (prefix === '' ? id : `${prefix}.${id}`);

export interface RunnerState {
  options: RunnerOptions;
  summaries: StepSummary[];
  /**
   * Locations of operations this run (and, on resume, the runs it continues) followed to their
   * end: an operation found by reconciliation that is one of these was started by an earlier write.
   */
  knownLocations: Set<string>;
  /** The options' journal, also noting the Locations followed. */
  journal: RunnerOptions['journal'];
  /** Containers whose ignored `retry` was already warned about. */
  warnedRetries: WeakSet<Step>;
  /** Runs a sequence: set by the runner, used by the containers. */
  runSequence(steps: readonly Step[], frame: Frame): Promise<Ending>;
}

export function createRunnerState(options: RunnerOptions, runSequence: RunnerState['runSequence']): RunnerState {
  const knownLocations = new Set(options.resume?.knownLocations ?? []);
  return {
    options,
    summaries: [],
    knownLocations,
    journal: (event, appendOptions) => {
      if (event.type === 'operation.finished') knownLocations.add(event.location);
      return options.journal(event, appendOptions);
    },
    warnedRetries: new WeakSet(),
    runSequence,
  };
}

/** Reports steps that never started (in the summary only: nothing happened to them). */
export function reportNotStarted(state: RunnerState, steps: readonly Step[], prefix: string): void {
  for (const step of steps) {
    state.summaries.push({
      path: joinPath(prefix, step.id),
      stepId: step.id,
      kind: step.kind,
      status: StepStatus.notStarted,
      attempts: 0,
      durationMs: 0,
    });
  }
}

/** Per playbook (a `uses` has its own), what its expressions read of its loops' items; worked out once. */
const itemReadsByPlaybook = new WeakMap<Playbook, ReturnType<typeof loopItemReads>>();

/** The step views of an ended item of loop `loopId` that `playbook`'s expressions may read. */
export function itemStepReadsOf(state: RunnerState, playbook: Playbook, loopId: string): ItemStepReads {
  let reads = itemReadsByPlaybook.get(playbook);
  if (reads === undefined) {
    reads = loopItemReads(playbook, state.options.registry);
    itemReadsByPlaybook.set(playbook, reads);
  }
  return reads.of(loopId);
}
