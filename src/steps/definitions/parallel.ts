import { closedObject, described } from './value-types.js';
import { stepList } from './schema-parts.js';
import type { Step, StepBase } from '../../model/index.js';
import { runParallel } from '../containers/sequences.js';
import { defineContainer } from './step-definition.js';

export interface ParallelStep extends StepBase {
  kind: 'parallel';
  /** Each branch runs its steps in order; branches run at once. */
  branches: Step[][];
}

export const parallelStep = defineContainer<ParallelStep>({
  kind: 'parallel',
  description:
    'Runs branches at once; each branch runs its steps in order. Fails when a branch fails, after all have ended.',
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
  normalise: (tools) => ({ branches: tools.branches('parallel') }),
  children: (step) => ({ sequences: step.branches, scope: 'shared' }),
  run: runParallel,
  outputType: () =>
    closedObject({
      branches: described(
        { type: 'array', items: { enum: ['succeeded', 'failed', 'interrupted'] } },
        'How each branch ended, in order. Its steps are read by their own ids.',
      ),
    }),
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
});
