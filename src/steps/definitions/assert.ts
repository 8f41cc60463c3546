import { closedObject, described } from './value-types.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeAssert } from '../executors/basic.js';
import { defineLeaf } from './step-definition.js';

export interface AssertStep extends StepBase {
  kind: 'assert';
  condition: Template;
  message?: Template;
}

export const assertStep = defineLeaf<AssertStep>({
  kind: 'assert',
  description: 'Fails the step when the condition is not true.',
  fields: {
    assert: { description: 'The condition, usually `${{ }}`.' },
    message: { description: 'What the failure says; may hold `${{ }}`.' },
  },
  canWrite: false,
  quiet: true,
  normalise: (tools) => ({
    condition: tools.field('assert'),
    ...(tools.data.message === undefined ? {} : { message: tools.field('message') }),
  }),
  async prepare({ step, context }) {
    const condition = await step.condition.evaluate(context());
    const message = step.message ? await step.message.evaluate(context()) : undefined;
    return { attempt: async () => executeAssert(condition, message, step.condition.source) };
  },
  outputType: () =>
    closedObject({ passed: described({ type: 'boolean' }, 'Always true: a false condition fails the step.') }),
  examples: [
    {
      description: 'Stop when nothing is to be done.',
      yaml: `name: assert-example
inputs:
  systemIds: { type: array, items: { type: string } }
steps:
  - assert: "\${{ $count(inputs.systemIds) > 0 }}"
    message: no system given
`,
    },
  ],
});
