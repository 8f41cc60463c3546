import { described } from './value-types.js';
import type { StepBase, Template } from '../../model/index.js';
import { executeSet } from '../executors/basic.js';
import type { LeafResult } from '../executors/types.js';
import { defineLeaf } from './step-definition.js';

export interface SetStep extends StepBase {
  kind: 'set';
  values: Template;
}

const attemptSet = async (values: unknown): Promise<LeafResult> => executeSet(values);

export const setStep = defineLeaf<SetStep>({
  kind: 'set',
  description: "Computes named values; they become the step's outputs (`steps.<id>.outputs.<name>`).",
  fields: { set: { type: 'object', description: 'Names and values; strings may hold `${{ }}`.' } },
  canWrite: false,
  quiet: true,
  normalise: (tools) => ({ values: tools.field('set') }),
  async prepare({ step, context }) {
    const values = await step.values.evaluate(context());
    // Bound, not an arrow: under tsx (how the tests and benchmarks run) a named closure made per
    // step also pays a `defineProperty` of its name.
    return { input: values, attempt: attemptSet.bind(undefined, values) };
  },
  outputType: (step, tools) =>
    step === undefined
      ? described({ type: 'object' }, 'One field per name of `set`, of the type of its value where it can be told.')
      : tools.valueType(step.values),
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
});
