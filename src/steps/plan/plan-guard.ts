/**
 * What `fleetbook apply` checks before each write: that the plan holds it (the same step, the
 * same operation) and that the resource is still as planned (the fields the write changes hold
 * the values the plan read, and the write sets what the plan showed). Anything else stops the
 * write before it is sent: `NOT_IN_PLAN` or `PLAN_STALE`, naming the resource and the change.
 */
import type { CallOptions, PlatformClient } from '../../api/index.js';
import type { OperationDescriptor } from '../../openapi/index.js';
import { StepErrorCode } from '../error-codes.js';
import { StepError, StepFailureKind } from '../executors/step-error.js';
import { planWrite, type FieldChange, type PlannedWrite } from './plan-write.js';

/** Called with each write just before it is sent; throws to stop it. */
export type PlanGuard = (write: {
  path: string;
  operation: OperationDescriptor;
  input: Record<string, unknown>;
  options: Pick<CallOptions, 'region' | 'signal'>;
}) => Promise<void>;

const shown = (value: unknown): string => (value === undefined ? '(none)' : JSON.stringify(value));

/** What differs between the planned changes and the ones the write would make now, one phrase each. */
export function driftOf(planned: readonly FieldChange[], now: readonly FieldChange[]): string[] {
  const drift: string[] = [];
  const nowByPath = new Map(now.map((change) => [change.path, change]));
  for (const change of planned) {
    const current = nowByPath.get(change.path);
    nowByPath.delete(change.path);
    if (!current) drift.push(`${change.path} is already ${shown(change.to)} (planned from ${shown(change.from)})`);
    else if (shown(current.from) !== shown(change.from))
      drift.push(`${change.path} is now ${shown(current.from)}, planned from ${shown(change.from)}`);
    else if (shown(current.to) !== shown(change.to))
      drift.push(`${change.path} would be set to ${shown(current.to)}, planned ${shown(change.to)}`);
  }
  for (const extra of nowByPath.values())
    drift.push(`${extra.path} is now ${shown(extra.from)}, which the plan left as it was (${shown(extra.to)})`);
  return drift;
}

export function createPlanGuard(
  client: PlatformClient,
  writes: ReadonlyArray<PlannedWrite & { step: string }>,
): PlanGuard {
  const byStep = new Map(writes.map((write) => [write.step, write]));
  return async ({ path, operation, input, options }) => {
    const planned = byStep.get(path);
    if (!planned || planned.operationId !== operation.id)
      throw new StepError(
        `${operation.id} at step ${path} is not in the plan${planned ? ` (the plan has ${planned.operationId} there)` : ''}: nothing was sent. Make a new plan.`,
        { kind: StepFailureKind.invalidInput, code: StepErrorCode.notInPlan, operationId: operation.id },
      );
    const now = await planWrite(client, operation, input, options);
    const drift = [
      ...(planned.id !== undefined && now.id !== planned.id
        ? [`the resource is now ${now.id ?? 'gone'} (planned ${planned.id})`]
        : []),
      ...(now.readError !== undefined && planned.readError === undefined
        ? [`it could not be read: ${now.readError}`]
        : []),
      ...driftOf(planned.changes, now.changes),
    ];
    if (drift.length > 0)
      throw new StepError(
        `${operation.id} ${planned.resource}: changed since the plan, so nothing was sent: ${drift.join('; ')}. Make a new plan.`,
        { kind: StepFailureKind.invalidInput, code: StepErrorCode.planStale, operationId: operation.id },
      );
  };
}
