import { orExpression } from './schema-parts.js';
import type { StepDefinition } from './step-definition.js';

export const usesStep: StepDefinition = {
  kind: 'uses',
  description:
    "Runs another playbook with inputs; its outputs become this step's outputs. A path is relative to the using playbook; " +
    'a bare name is a bundled playbook.',
  fields: {
    uses: { type: 'string', minLength: 1, description: 'A bundled playbook name, or a path such as `./precheck.yaml`.' },
    with: { ...orExpression({ type: 'object' }), description: "The playbook's inputs." },
  },
  canWrite: false,
  examples: [],
};
