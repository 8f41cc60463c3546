import { closedObject } from './value-types.js';
import { stepList } from './schema-parts.js';
import type { Step, StepBase } from '../../model/index.js';
import { runBlock } from '../containers/sequences.js';
import { defineContainer } from './step-definition.js';

export interface BlockStep extends StepBase {
  kind: 'block';
  steps: Step[];
}

export const blockStep = defineContainer<BlockStep>({
  kind: 'block',
  description: 'Groups steps, so `rescue`, `always`, `retry`, `timeout` and `if` apply to them together.',
  fields: { block: { ...stepList, description: 'The steps, run in order.' } },
  nested: { block: 'steps' },
  canWrite: false,
  normalise: (tools) => ({ steps: tools.steps('block') }),
  children: (step) => ({ sequences: [step.steps], scope: 'shared' }),
  retriedAsWhole: true,
  run: runBlock,
  // Its steps are read by their own ids (`steps.<inner id>`), not through the block.
  outputType: () => closedObject({}),
  examples: [
    {
      description: 'Update, resume on failure, always report.',
      yaml: `name: block-example
inputs:
  systemId: { type: string }
steps:
  - id: update
    block:
      - id: run
        call: privateCloud.runSoftwareUpdate
        with: { id: "\${{ inputs.systemId }}", body: { catalogVersion: "2.4.0" } }
        wait: true
    rescue:
      - id: resume
        call: privateCloud.resumeSoftwareUpdate
        with: { id: "\${{ inputs.systemId }}" }
        wait: true
    always:
      - log: "update ended: \${{ steps.run.status }}"
`,
    },
  ],
});
