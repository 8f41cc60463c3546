/**
 * The engine's taint tracker (see expressions/taint.ts): secrets are the `secret: true` inputs
 * of the playbook, and the outputs of a `set` step computed from a secret (a `set` step's
 * outputs are its rendered values). Another step's outputs are what the platform or a webhook
 * answered, not computed by the playbook: they are scrubbed of every registered form of the
 * secret instead, so an echo is caught without redacting every word of the answer.
 */
import type { TaintTracker } from '../expressions/index.js';
import type { SecretRegistry } from '../logging/index.js';
import type { Playbook, Step } from '../playbook/index.js';
import type { StepRegistry } from '../steps/index.js';

function setStepIds(registry: StepRegistry, steps: readonly Step[], into: Set<string>): Set<string> {
  for (const step of steps) {
    if (step.kind === 'set') into.add(step.id);
    const children = registry.childStepsOf(step);
    for (const sequence of [...children.sequences, children.rescue, children.always])
      setStepIds(registry, sequence, into);
  }
  return into;
}

/** Registers every string of `value` as a secret. */
function registerStrings(value: unknown, secrets: SecretRegistry): void {
  if (typeof value === 'string') secrets.add(value);
  else if (Array.isArray(value)) for (const item of value) registerStrings(item, secrets);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) registerStrings(item, secrets);
}

export function createTaintTracker(
  playbook: Playbook,
  secrets: SecretRegistry,
  registry: StepRegistry,
): TaintTracker | undefined {
  const secretInputs = new Set(
    Object.entries(playbook.inputs)
      .filter(([, spec]) => spec.secret)
      .map(([name]) => name),
  );
  // A playbook without secret inputs has nothing to track.
  if (secretInputs.size === 0) return undefined;
  const setSteps = setStepIds(registry, playbook.steps, new Set());
  const taintedSteps = new Set<string>();
  return {
    readsSecret: (references) =>
      references.some(({ root, member }) =>
        root === 'inputs'
          ? member === undefined || secretInputs.has(member)
          : root === 'steps' && (member === undefined ? taintedSteps.size > 0 : taintedSteps.has(member)),
      ),
    taint(value, stepId) {
      registerStrings(value, secrets);
      if (stepId !== undefined && setSteps.has(stepId)) taintedSteps.add(stepId);
    },
  };
}
