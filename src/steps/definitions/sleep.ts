import { closedObject, described } from './value-types.js';
import { duration, orExpression } from './schema-parts.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeSleep } from '../executors/basic.js';
import { defineLeaf } from './step-definition.js';

export interface SleepStep extends StepBase {
  kind: 'sleep';
  /** Milliseconds, or a template yielding a duration string or milliseconds. */
  duration: Template;
}

export const sleepStep = defineLeaf<SleepStep>({
  kind: 'sleep',
  description: 'Waits for a duration (cancellation ends it early).',
  fields: {
    sleep: {
      ...orExpression(duration),
      description: 'A duration such as `30s`, or an expression yielding one or milliseconds.',
    },
  },
  canWrite: false,
  // A literal duration is kept in milliseconds; an expression is parsed when rendered.
  normalise: (tools) => ({
    duration: tools.template(tools.ms(tools.data.sleep, tools.at('sleep')) ?? tools.data.sleep, tools.at('sleep')),
  }),
  async prepare({ step, context }) {
    const duration = await step.duration.evaluate(context());
    return { input: { duration }, attempt: (runtime) => executeSleep(duration, runtime) };
  },
  outputType: () => closedObject({ sleptMs: described({ type: 'integer' }, 'Milliseconds slept.') }),
  examples: [
    {
      description: 'Let the dust settle.',
      yaml: `name: sleep-example
steps:
  - sleep: 30s
`,
    },
  ],
});
