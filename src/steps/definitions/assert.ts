import type { StepDefinition } from './step-definition.js';

export const assertStep: StepDefinition = {
  kind: 'assert',
  description: 'Fails the step when the condition is not true.',
  fields: {
    assert: { description: 'The condition, usually `${{ }}`.' },
    message: { description: 'What the failure says; may hold `${{ }}`.' },
  },
  canWrite: false,
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
};
