import { closedObject, described } from './value-types.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeLog } from '../executors/basic.js';
import { defineLeaf } from './step-definition.js';

export interface LogStep extends StepBase {
  kind: 'log';
  message: Template;
  level: 'debug' | 'info' | 'warn' | 'error';
}

export const logStep = defineLeaf<LogStep>({
  kind: 'log',
  description: 'Writes a message to the run log.',
  fields: {
    log: { description: 'The message: a string with `${{ }}`, or any value (logged as JSON).' },
    level: { enum: ['debug', 'info', 'warn', 'error'], description: 'Default info.' },
  },
  canWrite: false,
  quiet: true,
  normalise: (tools) => ({
    message: tools.field('log'),
    level: typeof tools.data.level === 'string' ? tools.data.level : 'info',
  }),
  async prepare({ step, context }) {
    const message = await step.message.evaluate(context());
    return { attempt: async (runtime) => executeLog(message, step.level, runtime) };
  },
  outputType: () => closedObject({ message: described({ type: 'string' }, 'The line as logged.') }),
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
});
