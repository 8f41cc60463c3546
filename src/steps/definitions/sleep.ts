import { duration, orExpression } from './schema-parts.js';
import type { StepDefinition } from './step-definition.js';

export const sleepStep: StepDefinition = {
  kind: 'sleep',
  description: 'Waits for a duration (cancellation ends it early).',
  fields: { sleep: { ...orExpression(duration), description: 'A duration such as `30s`, or an expression yielding one or milliseconds.' } },
  canWrite: false,
  examples: [
    {
      description: 'Let the dust settle.',
      yaml: `name: sleep-example
steps:
  - sleep: 30s
`,
    },
  ],
};
