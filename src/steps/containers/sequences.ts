/** The containers that run step lists in their own scope: `block` and `parallel`. */
import type { BlockStep } from '../definitions/block.js';
import type { ParallelStep } from '../definitions/parallel.js';
import type { ContainerContext, Ending, StepOutcome } from '../definitions/step-definition.js';

/** A sequence's ending as a step's outcome; `failure` is the message of a failed one. */
export function endingOutcome(ending: Ending, failure: string, outputs: unknown): StepOutcome {
  if (ending === 'succeeded') return { status: 'succeeded', outputs };
  if (ending === 'interrupted') return { status: 'interrupted', outputs };
  return { status: 'failed', outputs, error: { message: failure, code: 'STEPS_FAILED' } };
}

/** `block`: its steps in order; a failure names the step that ended it. */
export async function runBlock(context: ContainerContext<BlockStep>): Promise<StepOutcome> {
  await context.start();
  const ending = await context.runSequence(context.step.steps);
  if (ending === 'failed') return { status: 'failed', outputs: {}, error: context.failureOf(context.step.steps) };
  return endingOutcome(ending, '', {});
}

/** `parallel`: every branch at once; fails when a branch failed, once all have ended. */
export async function runParallel(context: ContainerContext<ParallelStep>): Promise<StepOutcome> {
  const { branches } = context.step;
  await context.start({ branches: branches.length });
  const endings = await Promise.all(branches.map((branch) => context.runSequence(branch)));
  const ending: Ending = endings.includes('interrupted')
    ? 'interrupted'
    : endings.includes('failed')
      ? 'failed'
      : 'succeeded';
  const failed = endings.filter((one) => one === 'failed').length;
  return endingOutcome(ending, `${failed} of ${endings.length} branches failed`, { branches: endings });
}
