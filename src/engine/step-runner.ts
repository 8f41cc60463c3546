/**
 * Runs steps: `if`, rendering, the journal's `step.started` / `step.finished`, attempts
 * (`attempts.ts`) under the timeout (`bounded.ts`), `rescue`, `always`, `continueOnError`.
 * What a step does is its kind's definition in the registry: a leaf's `prepare` renders it and
 * makes one attempt, a container's `run` runs its children through `container-context.ts`.
 * See ARCHITECTURE.md.
 */
import { stepLabel, type Step } from '../playbook/index.js';
import {
  isContainer,
  type Ending,
  type LeafDefinition,
  type PreparedLeaf,
  type StepDefinition,
  type StepOutcome,
} from '../steps/index.js';
import { toErrorRecord } from '../steps/index.js';
import { StepStatus, type AppendOptions } from '../store/index.js';
import type { Logger } from '../logging/index.js';
import { runContainerAttempts, runLeafAttempts, type StepExecution } from './attempts.js';
import { bounded } from './bounded.js';
import { containerContext } from './container-context.js';
import { reconciling } from './reconciliation.js';
import { restore } from './replay.js';
import { replayedStatuses } from './resume-plan.js';
import { finishedEvent, logFinished, logStarted, rescueFailure, viewOf, withoutJournalMembers } from './step-lines.js';
import {
  BUFFERED,
  createRunnerState,
  joinPath,
  reportNotStarted,
  type Frame,
  type RunnerOptions,
  type RunnerState,
  type StepFields,
  type StepSummary,
} from './runner-state.js';
import type { Scope } from './scope.js';

export type { RunnerOptions, StepSummary } from './runner-state.js';

export interface StepRunner {
  /** Runs a sequence in `scope`; stops at the first failure not continued, or at cancellation. */
  runSequence(steps: readonly Step[], scope: Scope, prefix: string, signal: AbortSignal): Promise<Ending>;
  /** Every step execution and loop item so far, in the order they started (never-started ones last). */
  summaries(): StepSummary[];
}

export function createStepRunner(options: RunnerOptions): StepRunner {
  const state: RunnerState = createRunnerState(options, (steps, frame) => runSequence(state, steps, frame));
  return {
    runSequence: (steps, scope, prefix, signal) => runSequence(state, steps, { scope, prefix, signal }),
    summaries: () => [...state.summaries],
  };
}

async function runSequence(state: RunnerState, steps: readonly Step[], frame: Frame): Promise<Ending> {
  // Once per step of every loop item: an index, not an entries() iterator and its pairs.
  for (let index = 0; index < steps.length; index += 1) {
    const step = steps[index] as Step;
    if (frame.signal.aborted) {
      reportNotStarted(state, steps.slice(index), frame.prefix);
      return 'interrupted';
    }
    const outcome = await runStep(state, step, frame);
    if (outcome.status === StepStatus.interrupted) {
      reportNotStarted(state, steps.slice(index + 1), frame.prefix);
      return 'interrupted';
    }
    if (outcome.status === StepStatus.failed && !step.continueOnError) {
      reportNotStarted(state, steps.slice(index + 1), frame.prefix);
      return 'failed';
    }
  }
  return 'succeeded';
}

/** Quiet leaf kinds log their own lines at `debug` and buffer their journal entries. */
function isQuiet(definition: StepDefinition): boolean {
  return !isContainer(definition) && definition.quiet === true;
}

interface Execution extends StepExecution {
  /** Ends the step: its view, summary line, `step.finished` and finished line. */
  settle(outcome: StepOutcome): Promise<StepOutcome>;
}

/**
 * One step from its start to its end. A class, not closures made per step: a loop item's step
 * made three (and under tsx, how the benchmarks run, a `defineProperty` of each one's name).
 */
class StepRun implements Execution {
  readonly fields: StepFields;
  readonly record: StepSummary;
  private readonly startedAt: number;
  private readonly lineLevel: 'debug' | 'info';
  private readonly appendOptions: AppendOptions | undefined;
  private readonly startOptions: AppendOptions | undefined;
  private readonly journalsItsEffects: boolean;
  /**
   * A quiet step of one attempt journals one entry, its `step.finished` (with what `step.started`
   * would say): nothing happens outside the run between its start and its end, and a crash before
   * the entry only means it runs again on resume. One with retries journals its start (its
   * `retry.scheduled` entries belong to a started step).
   */
  private readonly oneEntry: boolean;
  private started = false;
  private renderedInput: unknown;
  // Made on first use, for the step's rarer lines (warnings, reconciliation); its started and
  // finished lines carry `fields` on the run's logger, and an attempt's logger is the run's child,
  // not this one's: a child of a child turns its parent into a prototype (a hidden class of its
  // own, ~1 KB), and thousands of steps wait at once.
  private stepLogger: Logger | undefined;

  constructor(
    private readonly options: RunnerOptions,
    readonly step: Step,
    readonly path: string,
    private readonly frame: Frame,
    definition: StepDefinition,
  ) {
    this.startedAt = options.clock.now();
    this.record = { path, stepId: step.id, kind: step.kind, status: StepStatus.running, attempts: 0, durationMs: 0 };
    this.fields = path === step.id ? { stepId: step.id } : { stepId: step.id, path };
    const quiet = isQuiet(definition);
    this.lineLevel = quiet ? 'debug' : 'info';
    this.appendOptions = quiet ? BUFFERED : undefined;
    // A kind that journals its own effects first starts buffered: its first effect's entry commits
    // the start with it.
    this.journalsItsEffects = !isContainer(definition) && definition.journalsItsEffects === true;
    this.startOptions = this.journalsItsEffects ? BUFFERED : this.appendOptions;
    this.oneEntry = quiet && step.retry.maxAttempts <= 1;
  }

  log(): Logger {
    return (this.stepLogger ??= this.options.logger.child(this.fields));
  }

  /** Synchronous for a one-entry step (nothing to journal yet): its caller need not await a promise. */
  start(input?: unknown): Promise<void> | undefined {
    if (this.started) return undefined;
    this.started = true;
    const { options, step, path } = this;
    if (this.oneEntry) {
      this.renderedInput = input;
      logStarted(options, this.fields, this.lineLevel, step, path);
      return undefined;
    }
    return options
      .journal(
        {
          type: 'step.started',
          path,
          stepId: step.id,
          kind: step.kind,
          ...(input === undefined ? {} : { input: options.secrets.scrubValue(input) }),
        },
        this.startOptions,
      )
      .then(() => logStarted(options, this.fields, this.lineLevel, step, path));
  }

  async settle(outcome: StepOutcome): Promise<StepOutcome> {
    const { options, record, step } = this;
    // Most outcomes carry neither member the journal and the view leave out: no copy made of those
    // (an object rest is a slow copy, once per step).
    const { journalOutputs, readOnly } = outcome;
    const viewed = 'journalOutputs' in outcome || 'readOnly' in outcome ? withoutJournalMembers(outcome) : outcome;
    const finished: StepOutcome = options.secrets.scrubValue(viewed);
    const journaled = journalOutputs === undefined ? finished.outputs : options.secrets.scrubValue(journalOutputs);
    record.status = finished.status;
    record.durationMs = options.clock.now() - this.startedAt;
    if (finished.error) record.error = finished.error;
    if (finished.rescued) record.rescued = true;
    if (record.attempts === 0 && outcome.status !== StepStatus.skipped) record.attempts = 1;
    this.frame.scope.steps[step.id] = viewOf(finished);
    const starting = this.start();
    if (starting) await starting;
    // A `set` step's input is its outputs: journaled once.
    const input = this.renderedInput === outcome.outputs ? undefined : options.secrets.scrubValue(this.renderedInput);
    await options.journal(
      finishedEvent(this.path, finished, journaled, this.oneEntry ? { step, input } : undefined),
      this.journalsItsEffects && readOnly === true && finished.status === StepStatus.succeeded
        ? BUFFERED
        : this.appendOptions,
    );
    const level = finished.status === StepStatus.failed ? 'error' : this.lineLevel;
    logFinished(options, this.fields, level, step, finished, record);
    return finished;
  }
}

/** `outcome` without what only the journal (`journalOutputs`) or the step's end (`readOnly`) reads. */
function beginStep(state: RunnerState, step: Step, path: string, frame: Frame, definition: StepDefinition): Execution {
  const execution = new StepRun(state.options, step, path, frame, definition);
  state.summaries.push(execution.record);
  return execution;
}

async function runStep(state: RunnerState, step: Step, frame: Frame): Promise<StepOutcome> {
  const { options } = state;
  const path = joinPath(frame.prefix, step.id);
  const recorded = options.resume?.records.get(path);
  if (recorded && replayedStatuses.has(recorded.status)) {
    // Succeeded (or skipped) before the run stopped: its outputs come from the journal.
    await restore(state, [step], frame.scope, frame.prefix);
    return frame.scope.steps[step.id] as StepOutcome;
  }
  const definition = options.registry.get(step.kind);
  const execution = beginStep(state, step, path, frame, definition);
  try {
    if (step.if && !(await step.if.evaluate(frame.scope.context())))
      return await execution.settle({ status: StepStatus.skipped });
  } catch (error) {
    return execution.settle({ status: StepStatus.failed, error: toErrorRecord(error) });
  }
  if (isContainer(definition)) {
    const outcome = await runContainerAttempts(state, execution, definition, frame, () =>
      // Only a container's own timeout bounds it: the playbook's default is meant for single
      // steps, and would otherwise cut a long rolling update.
      bounded(options.clock, step.timeoutMs, frame.signal, step.id, (signal) =>
        definition.run(containerContext(state, execution, { scope: frame.scope, prefix: execution.path, signal })),
      ),
    );
    return endStep(state, execution, frame, outcome);
  }
  let prepared: PreparedLeaf;
  try {
    prepared = await definition.prepare({
      step,
      path,
      // Bound, not an arrow: under tsx (how the tests and benchmarks run) a named closure made
      // per step also pays a `defineProperty` of its name.
      context: frame.scope.context.bind(frame.scope),
      playbook: frame.scope.root.playbook,
    });
  } catch (error) {
    // A rendering error fails the step before it starts: no rescue, no always.
    return execution.settle({ status: StepStatus.failed, error: toErrorRecord(error) });
  }
  // The step's end as a reaction, not as the rest of this frame: a leaf may wait long (an
  // operation followed to its end), thousands at once.
  return runLeaf(state, execution, definition, prepared, frame).then((ended) =>
    endStep(state, execution, frame, ended),
  );
}

/** `rescue` and `always` when the step has them (most have neither: no call, no promise), then its end. */
async function endStep(
  state: RunnerState,
  execution: Execution,
  frame: Frame,
  ended: StepOutcome,
): Promise<StepOutcome> {
  const { step } = execution;
  return execution.settle(step.rescue || step.always ? await runHandlers(state, execution, frame, ended) : ended);
}

/** A rendered leaf: journaled, then attempted under its timeout; simulated in a dry run if it can write. */
async function runLeaf(
  state: RunnerState,
  execution: StepExecution,
  definition: LeafDefinition,
  rendered: PreparedLeaf,
  frame: Frame,
): Promise<StepOutcome> {
  const { options } = state;
  const { step, path } = execution;
  const starting = execution.start(rendered.input);
  if (starting) await starting;
  if (options.dryRun && definition.canWrite && !definition.simulatesItself) {
    execution
      .log()
      .info({ kind: step.kind }, `dry run: step ${stepLabel(path, step.location.line)} (${step.kind}) not run`);
    return {
      status: StepStatus.simulated,
      outputs: { simulated: true, input: options.secrets.scrubValue(rendered.input ?? null) },
    };
  }
  const prepared = reconciling(state, rendered, execution, options.resume?.inFlight.get(path));
  // The timeout bounds the whole step, retries and their delays included.
  // A quiet step with a single attempt ends before any timer could fire: it needs none.
  const untimed = definition.quiet === true && step.retry.maxAttempts <= 1;
  if (untimed) return runLeafAttempts(state, execution, prepared, frame);
  const timeoutMs = step.timeoutMs ?? frame.scope.root.playbook.defaults.timeoutMs;
  return bounded(options.clock, timeoutMs, frame.signal, step.id, (signal) =>
    runLeafAttempts(state, execution, prepared, signal === frame.signal ? frame : { ...frame, signal }),
  );
}

/** `rescue` after a failure, then `always` whatever happened (not after cancellation). */
async function runHandlers(
  state: RunnerState,
  execution: StepExecution,
  frame: Frame,
  ended: StepOutcome,
): Promise<StepOutcome> {
  const { step, path } = execution;
  let outcome = ended;
  const inner: Frame = { ...frame, prefix: path };
  if (outcome.status === StepStatus.failed && step.rescue && !frame.signal.aborted) {
    frame.scope.steps[step.id] = { status: StepStatus.failed, ...(outcome.error ? { error: outcome.error } : {}) };
    execution
      .log()
      .warn({ error: outcome.error }, `step ${stepLabel(path, step.location.line)} failed; running its rescue`);
    const rescue = await runSequence(state, step.rescue, inner);
    if (rescue === 'succeeded') outcome = { ...outcome, status: StepStatus.succeeded, rescued: true };
    else if (rescue === 'interrupted') outcome = { ...outcome, status: StepStatus.interrupted };
    else outcome = { ...outcome, error: rescueFailure(step.rescue, inner, outcome.error) };
  }
  if (step.always && !frame.signal.aborted) {
    frame.scope.steps[step.id] = viewOf(outcome);
    const always = await runSequence(state, step.always, inner);
    if (always === 'interrupted' && outcome.status !== StepStatus.failed)
      outcome = { ...outcome, status: StepStatus.interrupted };
    else if (always === 'failed' && outcome.status !== StepStatus.failed) {
      outcome = {
        ...outcome,
        status: StepStatus.failed,
        error: { message: `a step of '${step.id}'.always failed`, code: 'ALWAYS_FAILED' },
      };
    }
  }
  return outcome;
}
