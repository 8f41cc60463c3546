import type { StepDefinition } from './step-definition.js';

export const logStep: StepDefinition = {
  kind: 'log',
  description: 'Writes a message to the run log.',
  fields: {
    log: { description: 'The message: a string with `${{ }}`, or any value (logged as JSON).' },
    level: { enum: ['debug', 'info', 'warn', 'error'], description: 'Default info.' },
  },
  canWrite: false,
  examples: [
    {
      description: 'Log a message with a value.',
      yaml: `name: log-example
steps:
  - log: "run \${{ run.id }} starting"
    level: info
`,
    },
  ],
};
