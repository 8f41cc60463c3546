/** What the engine gives a container kind to run its children with (`ContainerContext`). */
import { stepLabel, type Playbook, type Step } from '../playbook/index.js';
import { isContainer, type ContainerContext, type ItemRun } from '../steps/index.js';
import { StepStatus, type ErrorRecord } from '../store/index.js';
import type { StepExecution } from './attempts.js';
import { resolveInputs } from './inputs.js';
import { bindInputSettings } from './input-settings.js';
import { restore } from './replay.js';
import { BUFFERED, itemStepReadsOf, joinPath, type Frame, type RunnerState, type StepSummary } from './runner-state.js';
import { Scope } from './scope.js';
import { createTaintTracker } from './taint.js';

/**
 * A failed sequence's error names the step that ended it and repeats its message, so the run's
 * summary says why without a look into the journal. `details.failedCode` keeps the innermost
 * step's code through nested blocks: a block retry must not repeat a write of unknown outcome.
 */
function failureOf(steps: readonly Step[], frame: Frame): ErrorRecord {
  const failed = steps.find(
    (step) => !step.continueOnError && frame.scope.steps[step.id]?.status === StepStatus.failed,
  );
  const error = failed ? frame.scope.steps[failed.id]?.error : undefined;
  if (!failed || !error) return { message: 'a step of the block failed', code: 'STEPS_FAILED' };
  const innerCode = (error.details as { failedCode?: string } | undefined)?.failedCode ?? error.code;
  return {
    message: `step ${stepLabel(joinPath(frame.prefix, failed.id), failed.location.line)} failed: ${error.message}`,
    code: 'STEPS_FAILED',
    details: {
      failedStep: joinPath(frame.prefix, failed.id),
      ...(innerCode === undefined ? {} : { failedCode: innerCode }),
    },
  };
}

/** Whether a sequence's steps each journal one entry, by registry and sequence: asked once per loop, not per item. */
const oneEntrySequences = new WeakMap<object, WeakMap<readonly Step[], boolean>>();

/**
 * Whether every step of `steps` journals one entry only: a quiet leaf kind with one attempt and
 * no `rescue` or `always` (which may run other steps). See `beginStep` in step-runner.ts.
 */
function journalsOneEntryEach(state: RunnerState, steps: readonly Step[]): boolean {
  const { registry } = state.options;
  let byRegistry = oneEntrySequences.get(registry);
  if (!byRegistry) oneEntrySequences.set(registry, (byRegistry = new WeakMap()));
  let known = byRegistry.get(steps);
  if (known === undefined) {
    known = steps.every((step) => {
      const definition = registry.get(step.kind);
      return (
        !isContainer(definition) &&
        definition.quiet === true &&
        step.retry.maxAttempts <= 1 &&
        !step.rescue &&
        !step.always
      );
    });
    byRegistry.set(steps, known);
  }
  return known;
}

/** One loop item: replayed whole when the journal says it succeeded, else run in its own scope. */
async function runItem(
  state: RunnerState,
  execution: StepExecution,
  frame: Frame,
  { index, label }: { index: number; label: string | undefined },
  steps: readonly Step[],
  names: Record<string, unknown>,
): Promise<ItemRun> {
  const { options, summaries } = state;
  const itemPath = `${execution.path}[${index}]`;
  const scope = frame.scope.child(names);
  if (options.resume?.records.get(itemPath)?.status === StepStatus.succeeded) {
    // The item finished before the run stopped: its steps are replayed, none run again.
    summaries.push({
      path: itemPath,
      stepId: execution.step.id,
      kind: 'item',
      status: StepStatus.succeeded,
      attempts: 1,
      durationMs: 0,
      replayed: true,
    });
    await restore(state, steps, scope, itemPath, itemStepReadsOf(state, frame.scope.root.playbook, execution.step.id));
    return { status: StepStatus.succeeded, steps: scope.steps };
  }
  const startedAt = options.clock.now();
  const record: StepSummary = {
    path: itemPath,
    stepId: execution.step.id,
    kind: 'item',
    status: StepStatus.running,
    attempts: 1,
    durationMs: 0,
  };
  summaries.push(record);
  // An item of one-entry steps journals its end only (the fold makes its record from it): its
  // start would say nothing a resume or a reader needs, and it is a row per item of a loop.
  if (!journalsOneEntryEach(state, steps))
    await options.journal({ type: 'item.started', path: execution.path, index }, BUFFERED);
  // The item's end as reactions, not as the rest of this frame: thousands of items may wait at once.
  return state.runSequence(steps, { scope, prefix: itemPath, signal: frame.signal }).then((ending) => {
    const status =
      ending === 'succeeded' ? StepStatus.succeeded : ending === 'failed' ? StepStatus.failed : StepStatus.interrupted;
    record.status = status;
    record.durationMs = options.clock.now() - startedAt;
    return options
      .journal({ type: 'item.finished', path: execution.path, index, status, ...(label ? { label } : {}) }, BUFFERED)
      .then(() => ({ status, steps: scope.steps }));
  });
}

/** Another playbook in a scope chain of its own: its inputs checked, its secrets registered. */
async function runPlaybook(
  state: RunnerState,
  frame: Frame,
  used: Playbook,
  given: Record<string, unknown>,
  start: (inputs: Record<string, unknown>) => Promise<void>,
) {
  const resolved = resolveInputs(used.inputs, given, used.name);
  for (const name of resolved.secretNames) state.options.secrets.add(String(resolved.values[name]));
  const playbook = await bindInputSettings(used, resolved.values);
  await start(resolved.values);
  const parentRoot = frame.scope.root;
  const scope = new Scope({
    playbook,
    inputs: resolved.values,
    run: parentRoot.run,
    env: parentRoot.env,
    taint: createTaintTracker(playbook, state.options.secrets, state.options.registry),
  });
  const ending = await state.runSequence(playbook.steps, { ...frame, scope });
  const outputs = ending === 'succeeded' && playbook.outputs ? await playbook.outputs.evaluate(scope.context()) : {};
  return { ending, outputs };
}

/** `frame`: the container's own (its path as prefix, its signal bounded by its timeout). */
export function containerContext(state: RunnerState, execution: StepExecution, frame: Frame): ContainerContext {
  return {
    step: execution.step,
    path: execution.path,
    signal: frame.signal,
    context: () => frame.scope.context(),
    log: () => execution.log(),
    start: (input) => execution.start(input) ?? Promise.resolve(),
    runSequence: (steps) => state.runSequence(steps, frame),
    failureOf: (steps) => failureOf(steps, frame),
    runItem: (index, steps, names, label) => runItem(state, execution, frame, { index, label }, steps, names),
    itemStepReads: () => itemStepReadsOf(state, frame.scope.root.playbook, execution.step.id),
    itemsNotStarted(indexes) {
      for (const index of indexes) {
        state.summaries.push({
          path: `${execution.path}[${index}]`,
          stepId: execution.step.id,
          kind: 'item',
          status: StepStatus.notStarted,
          attempts: 0,
          durationMs: 0,
        });
      }
    },
    runPlaybook: (playbook, given, start) => runPlaybook(state, frame, playbook, given, start),
    newWorkRefusal() {
      const gate = state.options.startGate;
      const refusal = gate?.refusal(state.options.clock.now());
      return refusal && { ...refusal, onClose: gate?.onClose ?? 'wait' };
    },
  };
}
