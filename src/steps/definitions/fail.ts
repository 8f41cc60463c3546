import type { StepDefinition } from './step-definition.js';

export const failStep: StepDefinition = {
  kind: 'fail',
  description: 'Fails the step with a message (use with `if`).',
  fields: { fail: { description: 'The message; may hold `${{ }}`.' } },
  canWrite: false,
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
};
