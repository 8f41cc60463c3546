/** A step's or a container's timeout: the signal its work runs under. */
import { setMaxListeners } from 'node:events';
import { StepErrorCode } from '../steps/index.js';
import type { StepOutcome } from '../steps/index.js';
import { toErrorRecord } from '../steps/index.js';
import { StepError, StepFailureKind } from '../steps/index.js';
import { StepStatus } from '../store/index.js';
import { linkSignal, type Clock } from '../timers/index.js';

function timeoutError(stepId: string, timeoutMs: number): StepError {
  return new StepError(`Step '${stepId}' did not finish within its timeout of ${timeoutMs} ms.`, {
    kind: StepFailureKind.timeout,
    code: StepErrorCode.stepTimeout,
  });
}

/**
 * Runs `task` with a signal that also aborts after `timeoutMs`. A task that ends
 * `interrupted` (or throws) because the timeout fired, not the run, has failed with
 * `STEP_TIMEOUT`.
 */
export async function bounded(
  clock: Clock,
  timeoutMs: number | undefined,
  parent: AbortSignal,
  stepId: string,
  task: (signal: AbortSignal) => Promise<StepOutcome>,
): Promise<StepOutcome> {
  if (timeoutMs === undefined) return task(parent);
  const linked = linkSignal(parent, timeoutMs, () => timeoutError(stepId, timeoutMs), clock);
  const timedOut = (outcome: StepOutcome): StepOutcome => ({
    ...outcome,
    status: StepStatus.failed,
    error: toErrorRecord(linked.signal.reason),
  });
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
