/**
 * Runs steps: `if`, rendering, the journal's `step.started` / `step.finished`, attempts with
 * the retry policy and the timeout, `rescue`, `always`, `continueOnError`, and the
 * containers (`forEach`, `parallel`, `block`, `uses`). Leaf kinds are performed by the
 * executors of `src/steps/executors/`. See ARCHITECTURE.md.
 */
import { setMaxListeners } from 'node:events';
import type { PlatformClient } from '../api/index.js';
import { linkSignal } from '../api/linked-signal.js';
import { sleep } from '../api/sleep.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import type { CallStep, ForEachStep, ParallelStep, RetryPolicy, Step, UsesStep } from '../playbook/types.js';
import { executeAssert, executeFail, executeLog, executeSet, executeSleep } from '../steps/executors/basic.js';
import { executeCall, isOutcomeUnknown, type CallArgs, type CallOutputs } from '../steps/executors/call.js';
import { toErrorRecord } from '../steps/executors/error-record.js';
import { executeHttp } from '../steps/executors/http.js';
import { StepError, StepFailureKind } from '../steps/executors/step-error.js';
import type { ExecutorRuntime, LeafResult } from '../steps/executors/types.js';
import { reconcileWrite, type ReconcileDecision } from '../steps/reconcile/index.js';
import { StepStatus, type AppendOptions, type ErrorRecord, type JournalEvent, type StepRecord } from '../store/types.js';
import { resolveInputs } from './inputs.js';
import { batchSizes, concurrencyOf, toleratedFailures } from './loop-plan.js';
import { readSpilledValue } from './large-values.js';
import { replayedStatuses, type InFlightRequest, type ResumePlan } from './resume-plan.js';
import { Scope, type StepView } from './scope.js';
import { OUTCOME_UNKNOWN, retryCondition, stepRetryDelayMs } from './step-retry.js';

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
  /** Journals an event; `buffered` for events that precede no effect outside the run (see `RunStore.append`). */
  journal(event: JournalEvent, options?: AppendOptions): Promise<void>;
  now: () => number;
  random: () => number;
  /** Resume: what the journal of the continued run says (steps to replay, requests in flight). */
  resume?: ResumePlan;
}

/** Where a sequence of steps runs. */
interface Frame {
  scope: Scope;
  /** Path of the enclosing step (`''` at the top). */
  prefix: string;
  signal: AbortSignal;
}

type Ending = 'succeeded' | 'failed' | 'interrupted';
interface Outcome {
  status: StepStatus;
  outputs?: unknown;
  error?: ErrorRecord;
  rescued?: boolean;
}

const LEAF_KINDS = new Set(['call', 'set', 'log', 'assert', 'fail', 'sleep', 'http']);

/**
 * Leaf kinds whose attempt is synchronous and has no effect outside the run: their own
 * started/finished lines are at `debug` (a loop of 10,000 `set` steps would otherwise write
 * 20,000 lines at `info`), and no timeout can fire during one attempt, so without retries they get no timer.
 * A failure is still logged at `error`, and a `log` step's message keeps its own level.
 */
const QUIET_KINDS = new Set(['set', 'log', 'assert', 'fail']);

/**
 * Journal entries that a crash may lose without harm: the started/finished entries of quiet
 * steps and of loop items. Losing them only means the step or item runs again on resume, and
 * since every effect outside the run is preceded by an unbuffered entry (which commits the
 * buffered ones before it), what survives a crash is always a prefix of the journal.
 */
const BUFFERED: AppendOptions = { buffered: true };

/** A step's logger, made on first use: most steps of a loop never log at the run's level. */
type StepLog = () => Logger;

const join = (prefix: string, id: string): string => (prefix === '' ? id : `${prefix}.${id}`);

function timeoutError(stepId: string, timeoutMs: number): StepError {
  return new StepError(`Step '${stepId}' did not finish within its timeout of ${timeoutMs} ms.`, { kind: StepFailureKind.timeout, code: 'STEP_TIMEOUT' });
}

/**
 * Runs `task` with a signal that also aborts after `timeoutMs`. A task that ends
 * `interrupted` (or throws) because the timeout fired, not the run, has failed with
 * `STEP_TIMEOUT`.
 */
async function bounded(timeoutMs: number | undefined, parent: AbortSignal, stepId: string, task: (signal: AbortSignal) => Promise<Outcome>): Promise<Outcome> {
  if (timeoutMs === undefined) return task(parent);
  const linked = linkSignal(parent, timeoutMs, () => timeoutError(stepId, timeoutMs));
  const timedOut = (outcome: Outcome): Outcome => ({ ...outcome, status: StepStatus.failed, error: toErrorRecord(linked.signal.reason) });
  try {
    // A container's signal is listened to by every item and wait in flight under it (a forEach of
    // concurrency 30 means 30 sleeps or requests at once), like the run's own signal.
    setMaxListeners(0, linked.signal);
    const outcome = await task(linked.signal);
    return linked.timedOut() && outcome.status === StepStatus.interrupted ? timedOut(outcome) : outcome;
  } catch (error) {
    if (linked.timedOut()) return timedOut({ status: StepStatus.failed });
    throw error;
  } finally {
    linked.dispose();
  }
}

/** A leaf step rendered: what `step.started` records, and the attempt to make. */
interface PreparedLeaf {
  input?: unknown;
  /** `attachTo` (calls only): follow this Location instead of sending. */
  attempt(runtime: ExecutorRuntime, attachTo?: CallArgs['attachTo']): Promise<LeafResult>;
}

/** `steps.<id>` of a step execution the journal recorded. */
async function viewOf(record: StepRecord): Promise<StepView> {
  const outputs = await readSpilledValue(record.outputs);
  return { status: record.status, ...(outputs === undefined ? {} : { outputs }), ...(record.error ? { error: record.error } : {}) };
}

/**
 * The retry policy a container's author wrote, if it allows more than one attempt. The defaults'
 * policy, merged into every step, is for leaf steps: it never repeats a whole block.
 */
function explicitRetry(step: Step): RetryPolicy | undefined {
  return step.retryDeclared && step.retry.maxAttempts > 1 ? step.retry : undefined;
}

/**
 * Whether the step's own retries repeat the transient failures the client would (network
 * errors, 408, 429, 5xx), so the client's are turned off and the two do not multiply. Only
 * `transient` and `any` do: a list of statuses covers no dropped connection, and `on` without
 * them (e.g. `[operationFailed]`) would leave a 429 or a 503 retried by neither.
 */
function retriesTransient(policy: RetryPolicy): boolean {
  return policy.maxAttempts > 1 && policy.on.some((condition) => condition === 'transient' || condition === 'any');
}

/** The steps that run in the same scope as `step` (a `uses` and a loop's items have scopes of their own). */
function sameScopeChildren(step: Step): Step[] {
  const own = step.kind === 'block' ? step.steps : step.kind === 'parallel' ? step.branches.flat() : [];
  return [...own, ...(step.rescue ?? []), ...(step.always ?? [])];
}

export interface StepRunner {
  /** Runs a sequence in `scope`; stops at the first failure not continued, or at cancellation. */
  runSequence(steps: readonly Step[], scope: Scope, prefix: string, signal: AbortSignal): Promise<Ending>;
  /** Every step execution and loop item so far, in the order they started (never-started ones last). */
  summaries(): StepSummary[];
}

export function createStepRunner(options: RunnerOptions): StepRunner {
  const { client, secrets, now } = options;
  const summaries: StepSummary[] = [];
  /**
   * Locations of operations this run (and, on resume, the runs it continues) followed to their
   * end: an operation found by reconciliation that is one of these was started by an earlier write.
   */
  const knownLocations = new Set(options.resume?.knownLocations ?? []);
  const journal: RunnerOptions['journal'] = (event, appendOptions) => {
    if (event.type === 'operation.finished') knownLocations.add(event.location);
    return options.journal(event, appendOptions);
  };
  /** Containers whose ignored `retry` was already warned about. */
  const warnedRetries = new WeakSet<Step>();

  const notStarted = (steps: readonly Step[], prefix: string): void => {
    for (const step of steps) summaries.push({ path: join(prefix, step.id), stepId: step.id, kind: step.kind, status: StepStatus.notStarted, attempts: 0, durationMs: 0 });
  };

  async function runSequence(steps: readonly Step[], frame: Frame): Promise<Ending> {
    for (const [index, step] of steps.entries()) {
      if (frame.signal.aborted) {
        notStarted(steps.slice(index), frame.prefix);
        return 'interrupted';
      }
      const outcome = await runStep(step, frame);
      if (outcome.status === StepStatus.interrupted) {
        notStarted(steps.slice(index + 1), frame.prefix);
        return 'interrupted';
      }
      if (outcome.status === StepStatus.failed && !step.continueOnError) {
        notStarted(steps.slice(index + 1), frame.prefix);
        return 'failed';
      }
    }
    return 'succeeded';
  }

  async function prepareLeaf(step: Step, scope: Scope, stepPath: string): Promise<PreparedLeaf> {
    const context = scope.context();
    switch (step.kind) {
      case 'call': {
        const input = ((await step.with.evaluate(context)) ?? {}) as Record<string, unknown>;
        const region = step.region ? ((await step.region.evaluate(context)) as string | undefined) : scope.root.playbook.defaults.region;
        // A path or `{ path, sumColumns }`: the call executor checks which.
        const saveTo = step.saveTo ? await step.saveTo.evaluate(context) : undefined;
        const wait = step.wait ? { ...scope.root.playbook.defaults.wait, ...step.wait } : undefined;
        const until = step.until;
        return {
          input: { operationId: step.operationId, with: input, ...(region === undefined ? {} : { region }) },
          attempt: (runtime, attachTo) =>
            executeCall(
              {
                attachTo,
                operationId: step.operationId,
                input,
                region,
                wait,
                poll: step.poll,
                paginate: step.paginate,
                saveTo,
                clientRetries: !retriesTransient(step.retry),
                until:
                  until &&
                  (async (outputs: CallOutputs) => {
                    // The condition reads the answer as `steps.<id>.outputs`, like any later step.
                    const view: StepView = { status: StepStatus.running, outputs };
                    const current = scope.context();
                    return Boolean(await until.evaluate({ ...current, steps: { ...current.steps, [step.id]: view } }));
                  }),
              },
              runtime,
            ),
        };
      }
      case 'http': {
        const request = await step.request.evaluate(context);
        return { input: request, attempt: (runtime) => executeHttp(request, runtime) };
      }
      case 'set': {
        const values = await step.values.evaluate(context);
        return { input: values, attempt: async () => executeSet(values) };
      }
      case 'log': {
        const message = await step.message.evaluate(context);
        return { attempt: async (runtime) => executeLog(message, step.level, runtime) };
      }
      case 'assert': {
        const condition = await step.condition.evaluate(context);
        const message = step.message ? await step.message.evaluate(context) : undefined;
        return { attempt: async () => executeAssert(condition, message, step.condition.source) };
      }
      case 'fail': {
        const message = await step.message.evaluate(context);
        return { attempt: async () => executeFail(message) };
      }
      case 'sleep': {
        const duration = await step.duration.evaluate(context);
        return { input: { duration }, attempt: (runtime) => executeSleep(duration, runtime) };
      }
      default:
        throw new Error(`${stepPath}: '${step.kind}' is not a leaf step`);
    }
  }

  /** The attempts of a leaf step under its retry policy and timeout. */
  async function runAttempts(step: Step, prepared: PreparedLeaf, frame: Frame, stepPath: string, record: StepSummary, log: StepLog): Promise<Outcome> {
    const policy = step.retry;
    for (let attempt = 1; ; attempt += 1) {
      record.attempts = attempt;
      let attemptLog: Logger | undefined;
      const logOfAttempt = (): Logger => (attemptLog ??= log().child({ attempt }));
      const runtime: ExecutorRuntime = {
        client,
        signal: frame.signal,
        get logger() {
          return logOfAttempt();
        },
        secrets,
        dryRun: options.dryRun,
        path: stepPath,
        attempt,
        journal,
      };
      try {
        const result = await prepared.attempt(runtime);
        return { status: result.status ?? StepStatus.succeeded, outputs: result.outputs };
      } catch (error) {
        if (frame.signal.aborted) return { status: StepStatus.interrupted, error: toErrorRecord(frame.signal.reason ?? error) };
        const retried = await retryAfter(policy, attempt, error, frame.signal, stepPath, logOfAttempt);
        if (retried !== 'retry') return { status: retried, error: toErrorRecord(error) };
      }
    }
  }

  /**
   * After a failed attempt: journals `retry.scheduled` and waits out the delay when the policy
   * covers `error` and allows another attempt. `failed`: no retry; `interrupted`: cancelled while waiting.
   */
  async function retryAfter(policy: RetryPolicy, attempt: number, error: unknown, signal: AbortSignal, stepPath: string, log: StepLog): Promise<'retry' | 'failed' | 'interrupted'> {
    const reason = retryCondition(error, policy.on);
    if (reason === undefined || attempt >= policy.maxAttempts) return StepStatus.failed;
    const delayMs = stepRetryDelayMs(policy, attempt, error, options.random);
    await options.journal({ type: 'retry.scheduled', path: stepPath, attempt: attempt + 1, delayMs, reason });
    log().warn({ delayMs, reason, error: toErrorRecord(error) }, `attempt ${attempt} of ${policy.maxAttempts} failed; retrying in ${delayMs} ms`);
    try {
      await sleep(delayMs, signal);
      return 'retry';
    } catch {
      return StepStatus.interrupted;
    }
  }

  /**
   * A container: a `block` whose own `retry` allows more attempts runs again as a whole (its
   * writes repeated: the user asked for it). The other containers are not retried, since
   * repeating a loop or a sub-playbook would repeat every write in it; a `retry` written on them
   * is ignored with a warning, once per step.
   */
  async function runContainerAttempts(step: Step, frame: Frame, stepPath: string, record: StepSummary, log: StepLog, start: (input?: unknown) => Promise<void>): Promise<Outcome> {
    const policy = explicitRetry(step);
    if (policy && step.kind !== 'block' && !warnedRetries.has(step)) {
      warnedRetries.add(step);
      log().warn({ kind: step.kind, maxAttempts: policy.maxAttempts }, `step ${stepPath}: \`retry\` is ignored on a ${step.kind} (only a block is retried as a whole); put it on the steps inside`);
    }
    for (let attempt = 1; ; attempt += 1) {
      record.attempts = attempt;
      const outcome = await runContainer(step, frame, stepPath, log, start).catch((error: unknown) =>
        frame.signal.aborted ? { status: StepStatus.interrupted, error: toErrorRecord(error) } : { status: StepStatus.failed, error: toErrorRecord(error) },
      );
      if (outcome.status !== StepStatus.failed || !policy || step.kind !== 'block') return outcome;
      // `on` is matched against the block's failure: `any`, or `timeout` when its own timeout fired.
      const failedCode = (outcome.error?.details as { failedCode?: string } | undefined)?.failedCode;
      const failure = new StepError(outcome.error?.message ?? 'a step of the block failed', {
        kind: outcome.error?.code === 'STEP_TIMEOUT' ? StepFailureKind.timeout : StepFailureKind.failed,
        // A write of unknown outcome inside stops the block's retry as it stops a step's.
        code: failedCode === OUTCOME_UNKNOWN ? OUTCOME_UNKNOWN : (outcome.error?.code ?? 'STEPS_FAILED'),
      });
      const retried = await retryAfter(policy, attempt, failure, frame.signal, stepPath, () => log().child({ attempt }));
      if (retried !== 'retry') return { ...outcome, status: retried };
    }
  }

  /**
   * Resume: makes the journal's record of `steps` (and of the steps sharing their scope) visible
   * in `scope` as in the first run, without running them; returns how many were recorded.
   */
  async function restore(steps: readonly Step[], scope: Scope, prefix: string): Promise<number> {
    let restored = 0;
    for (const step of steps) {
      const path = join(prefix, step.id);
      const recorded = options.resume?.records.get(path);
      if (!recorded) continue;
      scope.steps[step.id] = await viewOf(recorded);
      // A step that succeeded yet kept an error was rescued: nothing else ends so.
      const rescued = recorded.status === StepStatus.succeeded && recorded.error !== undefined;
      summaries.push({ path, stepId: step.id, kind: step.kind, status: recorded.status, attempts: recorded.attempts, durationMs: 0, replayed: true, ...(recorded.error ? { error: recorded.error } : {}), ...(rescued ? { rescued } : {}) });
      restored += 1 + (await restore(sameScopeChildren(step), scope, path));
    }
    return restored;
  }

  async function runStep(step: Step, frame: Frame): Promise<Outcome> {
    const stepPath = join(frame.prefix, step.id);
    const recorded = options.resume?.records.get(stepPath);
    if (recorded && replayedStatuses.has(recorded.status)) {
      // Succeeded (or skipped) before the run stopped: its outputs come from the journal.
      await restore([step], frame.scope, frame.prefix);
      return frame.scope.steps[step.id] as Outcome;
    }
    const startedAt = now();
    const record: StepSummary = { path: stepPath, stepId: step.id, kind: step.kind, status: StepStatus.running, attempts: 0, durationMs: 0 };
    summaries.push(record);
    let stepLogger: Logger | undefined;
    const log: StepLog = () => (stepLogger ??= options.logger.child({ stepId: step.id, ...(stepPath === step.id ? {} : { path: stepPath }) }));
    const lineLevel = QUIET_KINDS.has(step.kind) ? 'debug' : 'info';
    let started = false;
    const appendOptions = QUIET_KINDS.has(step.kind) ? BUFFERED : undefined;
    /** Journals `step.started` once, with the rendered input. */
    const start = async (input?: unknown): Promise<void> => {
      if (started) return;
      started = true;
      await options.journal({ type: 'step.started', path: stepPath, stepId: step.id, kind: step.kind, ...(input === undefined ? {} : { input: secrets.scrubValue(input) }) }, appendOptions);
      if (options.logger.isLevelEnabled(lineLevel)) log()[lineLevel]({ kind: step.kind }, `step ${stepPath} started`);
    };
    const settle = async (outcome: Outcome): Promise<Outcome> => {
      const finished: Outcome = secrets.scrubValue(outcome);
      record.status = finished.status;
      record.durationMs = now() - startedAt;
      if (finished.error) record.error = finished.error;
      if (finished.rescued) record.rescued = true;
      if (record.attempts === 0 && outcome.status !== StepStatus.skipped) record.attempts = 1;
      frame.scope.steps[step.id] = { status: finished.status, ...(finished.outputs === undefined ? {} : { outputs: finished.outputs }), ...(finished.error ? { error: finished.error } : {}) };
      await start();
      await options.journal({
        type: 'step.finished',
        path: stepPath,
        status: finished.status,
        ...(finished.outputs === undefined ? {} : { outputs: finished.outputs }),
        ...(finished.error ? { error: finished.error } : {}),
      }, appendOptions);
      const level = finished.status === StepStatus.failed ? 'error' : lineLevel;
      if (options.logger.isLevelEnabled(level)) log()[level]({ kind: step.kind, status: finished.status, durationMs: record.durationMs, attempts: record.attempts, ...(finished.error ? { error: finished.error } : {}) }, `step ${stepPath} ${finished.status}`);
      return finished;
    };

    try {
      if (step.if && !(await step.if.evaluate(frame.scope.context()))) return await settle({ status: StepStatus.skipped });
    } catch (error) {
      return settle({ status: StepStatus.failed, error: toErrorRecord(error) });
    }

    let outcome: Outcome;
    if (LEAF_KINDS.has(step.kind)) {
      let prepared: PreparedLeaf;
      try {
        prepared = await prepareLeaf(step, frame.scope, stepPath);
      } catch (error) {
        return settle({ status: StepStatus.failed, error: toErrorRecord(error) });
      }
      await start(prepared.input);
      if (step.kind === 'call') prepared = reconciling(step, prepared, log, options.resume?.inFlight.get(stepPath));
      // The timeout bounds the whole step, retries and their delays included.
      // A quiet step with a single attempt ends before any timer could fire: it needs none.
      const untimed = QUIET_KINDS.has(step.kind) && step.retry.maxAttempts <= 1;
      const timeoutMs = untimed ? undefined : (step.timeoutMs ?? frame.scope.root.playbook.defaults.timeoutMs);
      outcome = await bounded(timeoutMs, frame.signal, step.id, (signal) => runAttempts(step, prepared, { ...frame, signal }, stepPath, record, log));
    } else {
      outcome = await runContainerAttempts(step, frame, stepPath, record, log, start);
    }

    const inner: Frame = { ...frame, prefix: stepPath };
    if (outcome.status === StepStatus.failed && step.rescue && !frame.signal.aborted) {
      frame.scope.steps[step.id] = { status: StepStatus.failed, ...(outcome.error ? { error: outcome.error } : {}) };
      log().warn({ error: outcome.error }, `step ${stepPath} failed; running its rescue`);
      const rescue = await runSequence(step.rescue, inner);
      if (rescue === 'succeeded') outcome = { ...outcome, status: StepStatus.succeeded, rescued: true };
      else if (rescue === 'interrupted') outcome = { ...outcome, status: StepStatus.interrupted };
    }
    if (step.always && !frame.signal.aborted) {
      frame.scope.steps[step.id] = { status: outcome.status, ...(outcome.outputs === undefined ? {} : { outputs: outcome.outputs }), ...(outcome.error ? { error: outcome.error } : {}) };
      const always = await runSequence(step.always, inner);
      if (always === 'interrupted' && outcome.status !== StepStatus.failed) outcome = { ...outcome, status: StepStatus.interrupted };
      else if (always === 'failed' && outcome.status !== StepStatus.failed) {
        outcome = { ...outcome, status: StepStatus.failed, error: { message: `a step of '${step.id}'.always failed`, code: 'ALWAYS_FAILED' } };
      }
    }
    return settle(outcome);
  }

  /**
   * A write of unknown outcome (no answer, or a 5xx that may have been applied) is reconciled
   * before anything is sent again, in a run as on its resume: the state the write would have
   * changed is read, then the step re-attaches to the operation found, takes the write as
   * done, sends it again when it was not applied, or stops with OUTCOME_UNKNOWN.
   *
   * On resume (`inFlight`), the first attempt also re-attaches to a Location the journal
   * holds or takes an answered write as done, without sending.
   */
  function reconciling(step: CallStep, prepared: PreparedLeaf, log: StepLog, inFlight?: InFlightRequest): PreparedLeaf {
    const operation = client.catalogue.byId.get(step.operationId);
    // A read is simply sent again; so is a request of another operation (the playbook changed under --force).
    if (!operation?.isWrite || options.dryRun) return prepared;
    let pending = inFlight?.operationId === step.operationId ? inFlight : undefined;
    const accepted = (location: string | undefined, runtime: ExecutorRuntime, httpStatus = 202, body: unknown = null): Promise<LeafResult> =>
      // Without `wait` the first run would have ended the step on the answer.
      step.wait && location && operation.async
        ? prepared.attempt(runtime, { location, body })
        : Promise.resolve({ outputs: { status: httpStatus, headers: location ? { location } : {}, body } });
    /** `cause`: the failure of this run's request; none when the request was sent before the run stopped. */
    const reconcile = async (runtime: ExecutorRuntime, cause?: unknown): Promise<LeafResult> => {
      const input = (prepared.input as { with: Record<string, unknown>; region?: string }).with;
      const region = (prepared.input as { region?: string }).region;
      let decision: ReconcileDecision;
      try {
        decision = await reconcileWrite({ operationId: operation.id, input, region }, { client, signal: runtime.signal, knownLocations });
      } catch (error) {
        // The read's own failure may be transient, but a retry of the step would send the write
        // blindly: it ends the step as a write whose outcome cannot be told.
        if (runtime.signal.aborted) throw error;
        decision = { decision: 'unknown', reason: `reading the state it would have changed failed: ${error instanceof Error ? error.message : String(error)}` };
      }
      log().info({ operationId: operation.id, ...decision }, `${operation.id} of unknown outcome reconciled: ${decision.decision}`);
      switch (decision.decision) {
        case 'attach':
          // Journaled first, so a crash while following leaves the Location, not an unknown write.
          await options.journal({ type: 'operation.progress', path: runtime.path, location: decision.location, ...(decision.state ? { state: decision.state } : {}) });
          return accepted(decision.location, runtime);
        case 'done':
          return { outputs: { status: operation.successStatus, headers: {}, body: { items: decision.found }, reconciled: 'done' } };
        case 'send':
          return prepared.attempt(runtime);
        case 'unknown': {
          if (cause === undefined && options.resume?.confirmUnknown) return prepared.attempt(runtime);
          const sent = cause === undefined ? 'was sent before the run stopped' : `got no answer that tells whether it was applied (${cause instanceof Error ? cause.message : String(cause)})`;
          throw new StepError(`${operation.id} ${sent} and its outcome cannot be told (${decision.reason}). Check the platform, then resume with --confirm-unknown to send it again.`, {
            kind: StepFailureKind.invalidInput,
            code: OUTCOME_UNKNOWN,
            operationId: operation.id,
            ...(cause === undefined ? {} : { cause }),
          });
        }
      }
    };
    return {
      ...prepared,
      attempt: async (runtime) => {
        const resumed = pending;
        pending = undefined;
        if (resumed) return resumed.state === 'unknown' ? reconcile(runtime) : accepted(resumed.location, runtime, resumed.httpStatus, resumed.body);
        try {
          return await prepared.attempt(runtime);
        } catch (error) {
          if (runtime.signal.aborted || !isOutcomeUnknown(operation, error)) throw error;
          // A write sent again on `send` is not reconciled a second time: its failure ends the attempt.
          return reconcile(runtime, error);
        }
      },
    };
  }

  async function runContainer(step: Step, frame: Frame, stepPath: string, log: StepLog, start: (input?: unknown) => Promise<void>): Promise<Outcome> {
    // Only a container's own timeout bounds it: the playbook's default is meant for single
    // steps, and would otherwise cut a long rolling update.
    return bounded(step.timeoutMs, frame.signal, step.id, async (signal) => {
      const inner: Frame = { scope: frame.scope, prefix: stepPath, signal };
      switch (step.kind) {
        case 'forEach':
          return runForEach(step, inner, stepPath, log, start);
        case 'parallel':
          return runParallel(step, inner, start);
        case 'block': {
          await start();
          const ending = await runSequence(step.steps, inner);
          return ending === 'failed' ? { status: StepStatus.failed, outputs: {}, error: blockFailure(step.steps, inner) } : endingOutcome(ending, '', {});
        }
        case 'uses':
          return runUses(step, inner, start);
        default:
          throw new Error(`${stepPath}: '${step.kind}' is not a container step`);
      }
    });
  }

  /**
   * A failed block's error names the step that ended it and repeats its message, so the run's
   * summary says why without a look into the journal. `details.failedCode` keeps the innermost
   * step's code through nested blocks: a block retry must not repeat a write of unknown outcome.
   */
  function blockFailure(steps: readonly Step[], frame: Frame): ErrorRecord {
    const failed = steps.find((step) => !step.continueOnError && (frame.scope.steps[step.id] as Outcome | undefined)?.status === StepStatus.failed);
    const error = failed ? (frame.scope.steps[failed.id] as Outcome).error : undefined;
    if (!failed || !error) return { message: 'a step of the block failed', code: 'STEPS_FAILED' };
    const innerCode = (error.details as { failedCode?: string } | undefined)?.failedCode ?? error.code;
    return {
      message: `step ${join(frame.prefix, failed.id)} failed: ${error.message}`,
      code: 'STEPS_FAILED',
      details: { failedStep: join(frame.prefix, failed.id), ...(innerCode === undefined ? {} : { failedCode: innerCode }) },
    };
  }

  function endingOutcome(ending: Ending, failure: string, outputs: unknown): Outcome {
    if (ending === 'succeeded') return { status: StepStatus.succeeded, outputs };
    if (ending === 'interrupted') return { status: StepStatus.interrupted, outputs };
    return { status: StepStatus.failed, outputs, error: { message: failure, code: 'STEPS_FAILED' } };
  }

  async function runParallel(step: ParallelStep, frame: Frame, start: (input?: unknown) => Promise<void>): Promise<Outcome> {
    await start({ branches: step.branches.length });
    const endings = await Promise.all(step.branches.map((branch) => runSequence(branch, frame)));
    const ending: Ending = endings.includes('interrupted') ? 'interrupted' : endings.includes('failed') ? 'failed' : 'succeeded';
    const failed = endings.filter((one) => one === 'failed').length;
    return endingOutcome(ending, `${failed} of ${endings.length} branches failed`, { branches: endings });
  }

  async function runUses(step: UsesStep, frame: Frame, start: (input?: unknown) => Promise<void>): Promise<Outcome> {
    const given = ((await step.with.evaluate(frame.scope.context())) ?? {}) as Record<string, unknown>;
    const child = step.playbook;
    const resolved = resolveInputs(child.inputs, given, child.name);
    for (const name of resolved.secretNames) secrets.add(String(resolved.values[name]));
    await start({ playbook: child.name, inputs: resolved.values });
    const parentRoot = frame.scope.root;
    const scope = new Scope({ playbook: child, inputs: resolved.values, run: parentRoot.run, env: parentRoot.env });
    const ending = await runSequence(child.steps, { ...frame, scope });
    if (ending !== 'succeeded') return endingOutcome(ending, `playbook '${child.name}' failed`, {});
    return { status: StepStatus.succeeded, outputs: child.outputs ? await child.outputs.evaluate(scope.context()) : {} };
  }

  async function runForEach(step: ForEachStep, frame: Frame, stepPath: string, log: StepLog, start: (input?: unknown) => Promise<void>): Promise<Outcome> {
    const context = frame.scope.context();
    const items = await step.items.evaluate(context);
    if (!Array.isArray(items)) {
      throw new StepError(`forEach '${step.id}': \`forEach\` must give an array, got ${items === null ? 'null' : typeof items}. (A one-item JSONata result needs \`[]\` at the end of the path.)`, {
        kind: StepFailureKind.invalidInput,
        code: 'FOREACH_NOT_ARRAY',
      });
    }
    const total = items.length;
    const concurrency = concurrencyOf(await step.concurrency.evaluate(context));
    const allowed = toleratedFailures(step.tolerate ? await step.tolerate.failures.evaluate(context) : undefined, total);
    const sizes = batchSizes(step.batches, total);
    await start({ items: total, concurrency, batches: sizes, toleratedFailures: allowed });

    interface ItemResult {
      index: number;
      item: unknown;
      status: StepStatus;
      steps: Record<string, StepView>;
    }
    const results: ItemResult[] = items.map((item, index) => ({ index, item, status: StepStatus.notStarted, steps: {} }));
    let failures = 0;
    const mayStart = (): boolean => !frame.signal.aborted && failures <= allowed;

    const itemScope = (index: number): Scope => frame.scope.child({ [step.as]: items[index], loop: { index, first: index === 0, last: index === total - 1 } });
    const runItem = async (index: number): Promise<void> => {
      const itemPath = `${stepPath}[${index}]`;
      if (options.resume?.records.get(itemPath)?.status === StepStatus.succeeded) {
        // The item finished before the run stopped: its steps are replayed, none run again.
        const scope = itemScope(index);
        summaries.push({ path: itemPath, stepId: step.id, kind: 'item', status: StepStatus.succeeded, attempts: 1, durationMs: 0, replayed: true });
        await restore(step.steps, scope, itemPath);
        results[index] = { index, item: items[index], status: StepStatus.succeeded, steps: scope.steps };
        return;
      }
      const startedAt = now();
      const record: StepSummary = { path: itemPath, stepId: step.id, kind: 'item', status: StepStatus.running, attempts: 1, durationMs: 0 };
      summaries.push(record);
      await options.journal({ type: 'item.started', path: stepPath, index }, BUFFERED);
      const scope = itemScope(index);
      const ending = await runSequence(step.steps, { scope, prefix: itemPath, signal: frame.signal });
      const status = ending === 'succeeded' ? StepStatus.succeeded : ending === 'failed' ? StepStatus.failed : StepStatus.interrupted;
      if (status === StepStatus.failed) failures += 1;
      results[index] = { index, item: items[index], status, steps: scope.steps };
      record.status = status;
      record.durationMs = now() - startedAt;
      await options.journal({ type: 'item.finished', path: stepPath, index, status }, BUFFERED);
      if (status === StepStatus.failed && failures > allowed) {
        log().warn({ failures, toleratedFailures: allowed }, `forEach ${stepPath}: ${failures} failed items exceed the tolerance of ${allowed}; no new item starts`);
      }
    };

    let next = 0;
    for (const size of sizes) {
      const end = next + size;
      const running = new Set<Promise<void>>();
      while (next < end && mayStart()) {
        if (running.size >= concurrency) {
          await Promise.race(running);
          continue;
        }
        const promise: Promise<void> = runItem(next).finally(() => running.delete(promise));
        // An item fails only by a throw of the run's machinery (the store gone): the race or the
        // all below reports the first; an item rejecting while no race waits must not crash the process.
        promise.catch(() => undefined);
        running.add(promise);
        next += 1;
      }
      await Promise.all(running);
      if (!mayStart()) break;
    }

    for (const result of results) {
      if (result.status === StepStatus.notStarted) {
        summaries.push({ path: `${stepPath}[${result.index}]`, stepId: step.id, kind: 'item', status: StepStatus.notStarted, attempts: 0, durationMs: 0 });
      }
    }
    const count = (status: StepStatus): number => results.filter((result) => result.status === status).length;
    const outputs = { items: results, succeeded: count(StepStatus.succeeded), failed: count(StepStatus.failed), notStarted: count(StepStatus.notStarted) };
    if (failures > allowed) {
      return { status: StepStatus.failed, outputs, error: { message: `${failures} of ${total} items failed (tolerated: ${allowed}); ${outputs.notStarted} never started`, code: 'TOLERANCE_EXCEEDED' } };
    }
    if (frame.signal.aborted || count(StepStatus.interrupted) > 0) return { status: StepStatus.interrupted, outputs };
    return { status: StepStatus.succeeded, outputs };
  }

  return {
    runSequence: (steps, scope, prefix, signal) => runSequence(steps, { scope, prefix, signal }),
    summaries: () => [...summaries],
  };
}
