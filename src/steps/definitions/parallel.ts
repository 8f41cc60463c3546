import { stepList } from './schema-parts.js';
import type { StepDefinition } from './step-definition.js';

export const parallelStep: StepDefinition = {
  kind: 'parallel',
  description: 'Runs branches at once; each branch runs its steps in order. Fails when a branch fails, after all have ended.',
  fields: {
    parallel: {
      type: 'array',
      minItems: 1,
      items: { type: 'object', additionalProperties: false, required: ['steps'], properties: { steps: stepList } },
      description: 'The branches, each `{ steps: [...] }`.',
    },
  },
  nested: { parallel: 'branches' },
  canWrite: false,
  examples: [
    {
      description: 'Read two lists at once.',
      yaml: `name: parallel-example
steps:
  - id: reads
    parallel:
      - steps:
          - id: systems
            call: privateCloud.listSystems
      - steps:
          - id: catalogs
            call: privateCloud.listSoftwareCatalogs
  - log: "\${{ $count(steps.systems.outputs.body.items) }} systems"
`,
    },
  ],
};
