/**
 * Attempts: a leaf step's, under its retry policy and timeout; a container's, which only a
 * `block` with a retry of its own repeats as a whole. See ARCHITECTURE.md, "One step".
 */
import type { Logger } from '../logging/index.js';
import { stepLabel, type RetryPolicy, type Step } from '../playbook/index.js';
import type { ContainerDefinition, PreparedLeaf, StepOutcome } from '../steps/index.js';
import { toErrorRecord } from '../steps/index.js';
import type { StepRuntime } from '../steps/index.js';
import { StepStatus, type ErrorRecord } from '../store/index.js';
import { sleepOn } from '../timers/index.js';
import type { Frame, RunnerState, StepFields, StepLog, StepSummary } from './runner-state.js';
import { decideRetry, retryFactsOf, retryFactsOfRecord, type RetryFacts } from './step-retry.js';

/** One step execution in progress: its place, its summary line, its logger. */
export interface StepExecution {
  step: Step;
  path: string;
  /** The step's fields on its log lines; an attempt's logger adds `attempt`. */
  fields: StepFields;
  record: StepSummary;
  /** The step's logger, made on first use: most steps of a loop never log at the run's level. */
  log(): Logger;
  /**
   * Journals `step.started` once, with the rendered input; `undefined` when there is nothing to
   * wait for (already started, or a one-entry step whose start is journaled with its end).
   */
  start(input?: unknown): Promise<void> | undefined;
}

/**
 * What one attempt works with. A class, not an object literal: a literal with a getter is made
 * in dictionary mode (~830 bytes instead of ~100), once per attempt, held by every wait in flight.
 */
class AttemptRuntime implements StepRuntime {
  readonly client: StepRuntime['client'];
  readonly secrets: StepRuntime['secrets'];
  readonly dryRun: boolean;
  readonly planWrites: StepRuntime['planWrites'];
  readonly planGuard: StepRuntime['planGuard'];
  readonly path: string;
  readonly clock: StepRuntime['clock'];
  readonly journal: StepRuntime['journal'];
  readonly waits: StepRuntime['waits'];
  readonly mail: StepRuntime['mail'];
  readonly history: StepRuntime['history'];
  private readonly runLogger: Logger;
  private attemptLog: Logger | undefined;

  constructor(
    state: RunnerState,
    private readonly execution: StepExecution,
    readonly signal: AbortSignal,
    readonly attempt: number,
  ) {
    const { options } = state;
    this.client = options.client;
    this.secrets = options.secrets;
    this.dryRun = options.dryRun;
    this.planWrites = options.planWrites;
    this.planGuard = options.planGuard;
    this.path = execution.path;
    this.clock = options.clock;
    this.journal = state.journal;
    this.waits = options.waits;
    this.mail = options.mail;
    this.history = options.history;
    this.runLogger = options.logger;
  }

  /** Made on first use; the run's child, not the step logger's (see `beginStep`). */
  get logger(): Logger {
    return (this.attemptLog ??= this.runLogger.child({ ...this.execution.fields, attempt: this.attempt }));
  }

  log(level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, message: string): void {
    if (this.runLogger.isLevelEnabled(level))
      this.runLogger[level]({ ...this.execution.fields, attempt: this.attempt, ...fields }, message);
  }
}

/** The attempts of a leaf step under its retry policy (the caller bounds them by the timeout). */
export async function runLeafAttempts(
  state: RunnerState,
  execution: StepExecution,
  prepared: PreparedLeaf,
  frame: Frame,
): Promise<StepOutcome> {
  const { step, path, record } = execution;
  for (let attempt = 1; ; attempt += 1) {
    record.attempts = attempt;
    const runtime = new AttemptRuntime(state, execution, frame.signal, attempt);
    try {
      const result = await prepared.attempt(runtime);
      // Set, not spread: one object per attempt, not an empty literal copied into it.
      const outcome: StepOutcome = { status: result.status ?? StepStatus.succeeded, outputs: result.outputs };
      if (result.readOnly === true) outcome.readOnly = true;
      return outcome;
    } catch (error) {
      if (frame.signal.aborted)
        return { status: StepStatus.interrupted, error: toErrorRecord(frame.signal.reason ?? error) };
      const retried = await retryAfter(
        state,
        step.retry,
        attempt,
        retryFactsOf(error),
        toErrorRecord(error),
        frame.signal,
        path,
        () => runtime.logger,
      );
      if (retried !== 'retry') return { status: retried, error: toErrorRecord(error) };
    }
  }
}

/**
 * After a failed attempt: journals `retry.scheduled` and waits out the delay when the policy
 * covers the failure and allows another attempt. `failed`: no retry; `interrupted`: cancelled while waiting.
 */
async function retryAfter(
  state: RunnerState,
  policy: RetryPolicy,
  attempt: number,
  facts: RetryFacts,
  error: ErrorRecord,
  signal: AbortSignal,
  path: string,
  log: StepLog,
): Promise<'retry' | 'failed' | 'interrupted'> {
  const decision = decideRetry(facts, policy, attempt, state.options.random);
  if (!decision.retry) return StepStatus.failed;
  const { reason, delayMs } = decision;
  await state.options.journal({ type: 'retry.scheduled', path, attempt: attempt + 1, delayMs, reason });
  log().warn(
    { delayMs, reason, error },
    `attempt ${attempt} of ${policy.maxAttempts} failed; retrying in ${delayMs} ms`,
  );
  try {
    await sleepOn(state.options.clock, delayMs, signal);
    return 'retry';
  } catch {
    return StepStatus.interrupted;
  }
}

/**
 * The retry policy a container's author wrote, if it allows more than one attempt. The defaults'
 * policy, merged into every step, is for leaf steps: it never repeats a whole block.
 */
function explicitRetry(step: Step): RetryPolicy | undefined {
  return step.retryDeclared && step.retry.maxAttempts > 1 ? step.retry : undefined;
}

/**
 * A container: one whose kind is `retriedAsWhole` (a `block`) and whose own `retry` allows
 * more attempts runs again as a whole (its writes repeated: the user asked for it). The others
 * are not retried, since repeating a loop or a sub-playbook would repeat every write in it; a
 * `retry` written on them is ignored with a warning, once per step.
 */
export async function runContainerAttempts(
  state: RunnerState,
  execution: StepExecution,
  definition: ContainerDefinition,
  frame: Frame,
  runOnce: () => Promise<StepOutcome>,
): Promise<StepOutcome> {
  const { step, path, record } = execution;
  const policy = explicitRetry(step);
  const retried = policy !== undefined && definition.retriedAsWhole === true;
  if (policy && !retried && !state.warnedRetries.has(step)) {
    state.warnedRetries.add(step);
    execution
      .log()
      .warn(
        { kind: step.kind, maxAttempts: policy.maxAttempts },
        `step ${stepLabel(path, step.location.line)}: \`retry\` is ignored on a ${step.kind} (only a block is retried as a whole); put it on the steps inside`,
      );
  }
  for (let attempt = 1; ; attempt += 1) {
    record.attempts = attempt;
    const outcome = await runOnce().catch((error: unknown) =>
      frame.signal.aborted
        ? { status: StepStatus.interrupted, error: toErrorRecord(error) }
        : { status: StepStatus.failed, error: toErrorRecord(error) },
    );
    if (outcome.status !== StepStatus.failed || !retried) return outcome;
    const error = outcome.error ?? { message: 'a step of the block failed', code: 'STEPS_FAILED' };
    const next = await retryAfter(
      state,
      policy,
      attempt,
      retryFactsOfRecord(outcome.error),
      error,
      frame.signal,
      path,
      () => state.options.logger.child({ ...execution.fields, attempt }),
    );
    if (next !== 'retry') return { ...outcome, status: next };
  }
}
