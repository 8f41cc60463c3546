/** `uses`: another playbook run with inputs, its outputs the step's. */
import type { UsesStep } from '../definitions/uses.js';
import type { ContainerContext, StepOutcome } from '../definitions/step-definition.js';
import { endingOutcome } from './sequences.js';

export async function runUses(context: ContainerContext<UsesStep>): Promise<StepOutcome> {
  const { step } = context;
  const given = ((await step.with.evaluate(context.context())) ?? {}) as Record<string, unknown>;
  const { ending, outputs } = await context.runPlaybook(step.playbook, given, (inputs) =>
    context.start({ playbook: step.playbook.name, inputs }),
  );
  if (ending !== 'succeeded') return endingOutcome(ending, `playbook '${step.playbook.name}' failed`, {});
  return { status: 'succeeded', outputs };
}
