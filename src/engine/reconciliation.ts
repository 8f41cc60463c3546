/**
 * A write of unknown outcome (no answer, or a 5xx that may have been applied) is reconciled
 * before anything is sent again, in a run as on its resume: the state the write would have
 * changed is read, then the step re-attaches to the operation found, takes the write as
 * done, sends it again when it was not applied, or stops with OUTCOME_UNKNOWN.
 *
 * On resume (`inFlight`), the first attempt also re-attaches to a Location the journal
 * holds or takes an answered write as done, without sending.
 */
import { errorMessage } from '../errors/index.js';
import type { PreparedLeaf } from '../steps/index.js';
import { isConflict, isOutcomeUnknown } from '../steps/index.js';
import { StepError, StepFailureKind } from '../steps/index.js';
import type { StepRuntime, LeafResult } from '../steps/index.js';
import { reconcileWrite, type ReconcileDecision } from '../steps/index.js';
import type { OperationDescriptor } from '../openapi/index.js';
import { sleepOn } from '../timers/index.js';
import type { StepExecution } from './attempts.js';
import type { InFlightRequest } from './resume-plan.js';
import type { RunnerState, StepLog } from './runner-state.js';
import { OUTCOME_UNKNOWN } from './step-retry.js';

/**
 * A write is given this long after it was sent before reconciliation reads the platform: a
 * gateway or a busy platform may hold a received write a moment before applying it, and a read
 * in that moment finds nothing and sends the write again.
 */
export const DEFAULT_RECONCILE_SETTLE_MS = 5000;

interface Reconciler {
  state: RunnerState;
  operation: OperationDescriptor;
  prepared: PreparedLeaf;
  wait: boolean;
  log: StepLog;
}

/** The write taken as accepted: followed to its end when the step waits, else done on the answer. */
function accepted(
  r: Reconciler,
  location: string | undefined,
  runtime: StepRuntime,
  httpStatus = 202,
  body: unknown = null,
): Promise<LeafResult> {
  // Without `wait` the first run would have ended the step on the answer.
  return r.wait && location && r.operation.async
    ? r.prepared.attempt(runtime, { location, body })
    : Promise.resolve({ outputs: { status: httpStatus, headers: location ? { location } : {}, body } });
}

/** Waits what is left of the settle time of a write sent at `sentAtMs`. */
async function settle(r: Reconciler, runtime: StepRuntime, sentAtMs: number): Promise<void> {
  const { clock, reconcileSettleMs } = r.state.options;
  const leftMs = sentAtMs + reconcileSettleMs - clock.now();
  if (!(leftMs > 0)) return;
  r.log().info(
    { operationId: r.operation.id, settleMs: leftMs },
    `${r.operation.id} of unknown outcome: reading the platform in ${Math.ceil(leftMs / 1000)} s, once a write it still holds has landed`,
  );
  await sleepOn(clock, leftMs, runtime.signal);
}

/**
 * The write sent again, as reconciliation decided. A 409 to it means the state changed since the
 * read: most often the first write landed after all (a process paused before its request left,
 * then let go). The state is read once more, and the step attaches to or takes as done what it
 * finds; nothing found again leaves the conflict as the step's failure.
 */
async function sendAgain(r: Reconciler, runtime: StepRuntime, cause: unknown): Promise<LeafResult> {
  try {
    return await r.prepared.attempt(runtime);
  } catch (error) {
    if (runtime.signal.aborted || !isConflict(r.operation, error)) throw error;
    r.log().info(
      { operationId: r.operation.id },
      `${r.operation.id} sent again after reconciliation was refused with a conflict: reading the platform again`,
    );
    return reconcile(r, runtime, r.state.options.clock.now(), cause, error);
  }
}

/**
 * `conflict`: the 409 a write sent again got (the second reading). `sentAtMs`: when the write was sent. `cause`: the failure of this run's request; none when
 * the request was sent before the run stopped.
 */
async function reconcile(
  r: Reconciler,
  runtime: StepRuntime,
  sentAtMs: number,
  cause?: unknown,
  conflict?: unknown,
): Promise<LeafResult> {
  const { state, operation, prepared } = r;
  const { with: input, region } = prepared.input as { with: Record<string, unknown>; region?: string };
  await settle(r, runtime, sentAtMs);
  let decision: ReconcileDecision;
  try {
    decision = await reconcileWrite(
      { operationId: operation.id, input, region },
      { client: state.options.client, signal: runtime.signal, knownLocations: state.knownLocations },
    );
  } catch (error) {
    // The read's own failure may be transient, but a retry of the step would send the write
    // blindly: it ends the step as a write whose outcome cannot be told.
    if (runtime.signal.aborted) throw error;
    decision = {
      decision: 'unknown',
      reason: `reading the state it would have changed failed: ${errorMessage(error)}`,
    };
  }
  r.log().info(
    { operationId: operation.id, ...decision },
    `${operation.id} of unknown outcome reconciled: ${decision.decision}`,
  );
  if (decision.decision === 'attach') {
    // Journaled first, so a crash while following leaves the Location, not an unknown write.
    await state.options.journal({
      type: 'operation.progress',
      path: runtime.path,
      location: decision.location,
      ...(decision.state ? { state: decision.state } : {}),
    });
    return accepted(r, decision.location, runtime);
  }
  if (decision.decision === 'done')
    return {
      outputs: { status: operation.successStatus, headers: {}, body: { items: decision.found }, reconciled: 'done' },
    };
  if (decision.decision === 'send') {
    // Read again after a conflict and still nothing found: the conflict is the step's failure.
    if (conflict !== undefined) throw conflict;
    return sendAgain(r, runtime, cause);
  }
  if (cause === undefined && state.options.resume?.confirmUnknown) return prepared.attempt(runtime);
  const sent =
    cause === undefined
      ? 'was sent before the run stopped'
      : `got no answer that tells whether it was applied (${errorMessage(cause)})`;
  throw new StepError(
    `${operation.id} ${sent} and its outcome cannot be told (${decision.reason}). Check the platform, then resume with --confirm-unknown to send it again.`,
    {
      kind: StepFailureKind.outcomeUnknown,
      code: OUTCOME_UNKNOWN,
      operationId: operation.id,
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** `prepared` with reconciliation around its attempts when it is a platform write (not in a dry run). */
export function reconciling(
  state: RunnerState,
  prepared: PreparedLeaf,
  execution: Pick<StepExecution, 'log'>,
  inFlight?: InFlightRequest,
): PreparedLeaf {
  const resumeInFlight = prepared.resumeInFlight?.bind(prepared);
  if (resumeInFlight !== undefined) {
    let pending = inFlight;
    return {
      ...prepared,
      attempt: (runtime) => {
        const resumed = pending;
        pending = undefined;
        return resumed
          ? resumeInFlight(resumed, runtime, state.options.resume?.confirmUnknown ?? false)
          : prepared.attempt(runtime);
      },
    };
  }
  const write = prepared.reconcilable;
  const operation = write === undefined ? undefined : state.options.client.catalogue.byId.get(write.operationId);
  // A read is simply sent again; so is a request of another operation (the playbook changed under --force).
  if (write === undefined || !operation?.isWrite || state.options.dryRun) return prepared;
  const r: Reconciler = { state, operation, prepared, wait: write.wait, log: () => execution.log() };
  let pending = inFlight?.operationId === operation.id ? inFlight : undefined;
  return {
    ...prepared,
    attempt: async (runtime) => {
      const resumed = pending;
      pending = undefined;
      if (resumed)
        return resumed.state === 'unknown'
          ? reconcile(r, runtime, resumed.sentAtMs)
          : accepted(r, resumed.location, runtime, resumed.httpStatus, resumed.body);
      const sentAtMs = state.options.clock.now();
      // A reaction, not a frame held for the attempt (a write followed to its end waits long).
      return prepared.attempt(runtime).catch((error: unknown) => {
        if (runtime.signal.aborted || !isOutcomeUnknown(operation, error)) throw error;
        // A write sent again on `send` is not reconciled a second time: its failure ends the attempt.
        return reconcile(r, runtime, sentAtMs, error);
      });
    },
  };
}
