/** Resume: steps the journal recorded as ended are made visible again instead of being run. */
import type { ItemStepReads, Playbook, Step } from '../playbook/index.js';
import { StepStatus, type StepRecord } from '../store/index.js';
import { readSpilledValue } from './large-values.js';
import { itemStepReadsOf, joinPath, type RunnerState } from './runner-state.js';
import type { Scope, StepView } from './scope.js';

/** A loop's outputs as its `step.finished` journals them: items without their steps (older journals had them). */
interface JournaledLoopOutputs {
  items: Array<{ index: number; status: string; steps?: Record<string, unknown> }>;
}

function isCompactLoopOutputs(outputs: unknown): outputs is JournaledLoopOutputs {
  const items = (outputs as { items?: unknown } | null | undefined)?.items;
  return Array.isArray(items) && items.some((item) => typeof item === 'object' && item !== null && !('steps' in item));
}

/**
 * `steps.<id>` of a step execution the journal recorded. A loop's items get their steps back
 * from the items' own entries (as many as the playbook reads after the loop, as when it ran).
 */
async function viewOf(state: RunnerState, playbook: Playbook, step: Step, record: StepRecord): Promise<StepView> {
  let outputs = await readSpilledValue(await state.options.resume?.outputsOf(record));
  const children = state.options.registry.childStepsOf(step);
  if (children.scope === 'loop' && isCompactLoopOutputs(outputs)) {
    const kept = itemStepReadsOf(state, playbook, step.id);
    const body = children.sequences.flat();
    const items = [];
    for (const item of outputs.items) {
      const views =
        item.status === StepStatus.notStarted
          ? {}
          : await viewsOf(state, playbook, body, `${record.path}[${item.index}]`, kept);
      items.push({ ...item, steps: views });
    }
    outputs = { ...outputs, items };
  }
  return {
    status: record.status,
    ...(outputs === undefined ? {} : { outputs }),
    ...(record.error ? { error: record.error } : {}),
  };
}

/** The recorded views of `steps` and of the steps sharing their scope, by id (`kept`: only those ids). */
async function viewsOf(
  state: RunnerState,
  playbook: Playbook,
  steps: readonly Step[],
  prefix: string,
  kept: 'all' | ReadonlySet<string>,
  into: Record<string, StepView> = {},
): Promise<Record<string, StepView>> {
  for (const step of steps) {
    const path = joinPath(prefix, step.id);
    const recorded = state.options.resume?.records.get(path);
    if (!recorded) continue;
    if (kept === 'all' || kept.has(step.id)) into[step.id] = await viewOf(state, playbook, step, recorded);
    await viewsOf(state, playbook, sameScopeChildren(state, step), path, kept, into);
  }
  return into;
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
  kept: ItemStepReads = 'all',
): Promise<number> {
  let restored = 0;
  for (const step of steps) {
    const path = joinPath(prefix, step.id);
    const recorded = state.options.resume?.records.get(path);
    if (!recorded) continue;
    // A replayed loop item's views are read only by what reads the loop after it: the others are not read back.
    if (kept === 'all' || kept.has(step.id))
      scope.steps[step.id] = await viewOf(state, scope.root.playbook, step, recorded);
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
    restored += 1 + (await restore(state, sameScopeChildren(state, step), scope, path, kept));
  }
  return restored;
}
