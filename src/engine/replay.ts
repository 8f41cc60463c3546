/** Resume: steps the journal recorded as ended are made visible again instead of being run. */
import type { Step } from '../playbook/index.js';
import { StepStatus, type StepRecord } from '../store/index.js';
import { readSpilledValue } from './large-values.js';
import { joinPath, type RunnerState } from './runner-state.js';
import type { Scope, StepView } from './scope.js';

/** `steps.<id>` of a step execution the journal recorded. */
async function viewOf(record: StepRecord): Promise<StepView> {
  const outputs = await readSpilledValue(record.outputs);
  return {
    status: record.status,
    ...(outputs === undefined ? {} : { outputs }),
    ...(record.error ? { error: record.error } : {}),
  };
}

/** The steps that run in the same scope as `step` (a `uses` and a loop's items have scopes of their own). */
function sameScopeChildren(state: RunnerState, step: Step): Step[] {
  const children = state.options.registry.childStepsOf(step);
  return [...(children.scope === 'shared' ? children.sequences.flat() : []), ...children.rescue, ...children.always];
}

/**
 * Makes the journal's record of `steps` (and of the steps sharing their scope) visible in
 * `scope` as in the first run, without running them; returns how many were recorded.
 */
export async function restore(
  state: RunnerState,
  steps: readonly Step[],
  scope: Scope,
  prefix: string,
): Promise<number> {
  let restored = 0;
  for (const step of steps) {
    const path = joinPath(prefix, step.id);
    const recorded = state.options.resume?.records.get(path);
    if (!recorded) continue;
    scope.steps[step.id] = await viewOf(recorded);
    // A step that succeeded yet kept an error was rescued: nothing else ends so.
    const rescued = recorded.status === StepStatus.succeeded && recorded.error !== undefined;
    state.summaries.push({
      path,
      stepId: step.id,
      kind: step.kind,
      status: recorded.status,
      attempts: recorded.attempts,
      durationMs: 0,
      replayed: true,
      ...(recorded.error ? { error: recorded.error } : {}),
      ...(rescued ? { rescued } : {}),
    });
    restored += 1 + (await restore(state, sameScopeChildren(state, step), scope, path));
  }
  return restored;
}
