import type { StepDefinition } from './step-definition.js';

export const setStep: StepDefinition = {
  kind: 'set',
  description: 'Computes named values; they become the step\'s outputs (`steps.<id>.outputs.<name>`).',
  fields: { set: { type: 'object', description: 'Names and values; strings may hold `${{ }}`.' } },
  canWrite: false,
  examples: [
    {
      description: 'Name a computed list.',
      yaml: `name: set-example
inputs:
  ids: { type: array, items: { type: string }, default: [a, b] }
steps:
  - id: names
    set: { count: "\${{ $count(inputs.ids) }}", first: "\${{ inputs.ids[0] }}" }
`,
    },
  ],
};
