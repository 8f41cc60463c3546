import { closedObject } from './value-types.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeFail } from '../executors/basic.js';
import { defineLeaf } from './step-definition.js';

export interface FailStep extends StepBase {
  kind: 'fail';
  message: Template;
}

export const failStep = defineLeaf<FailStep>({
  kind: 'fail',
  description: 'Fails the step with a message (use with `if`).',
  fields: { fail: { description: 'The message; may hold `${{ }}`.' } },
  canWrite: false,
  quiet: true,
  normalise: (tools) => ({ message: tools.field('fail') }),
  async prepare({ step, context }) {
    const message = await step.message.evaluate(context());
    return { attempt: async () => executeFail(message) };
  },
  // It always fails: `steps.<id>.error` holds the message, its outputs nothing.
  outputType: () => closedObject({}),
  examples: [
    {
      description: 'Refuse to run on a frozen day.',
      yaml: `name: fail-example
inputs:
  frozen: { type: boolean, default: false }
steps:
  - if: "\${{ inputs.frozen }}"
    fail: changes are frozen today
`,
    },
  ],
});
