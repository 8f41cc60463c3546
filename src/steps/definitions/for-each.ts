import { closedObject, described, itemOf, STEP_STATUS_TYPE } from './value-types.js';
import { STEP_ID_PATTERN, anyTemplate, orExpression, stepList } from './schema-parts.js';
import type { Step, StepBase, Template } from '../../model/index.js';
import { runForEach } from '../containers/for-each.js';
import { defineContainer } from './step-definition.js';

export interface ForEachStep extends StepBase {
  kind: 'forEach';
  items: Template;
  /** Name of the loop variable. @default 'item' */
  as: string;
  /** @default 1 */
  concurrency: Template;
  /** Rolling batches: sizes as counts or percentages of the items; the last repeats. */
  batches?: Array<number | string>;
  /** Failures allowed before no new item starts: a count, or a percentage string like `"10%"`. */
  tolerate?: { failures: Template };
  steps: Step[];
}

/** A list or string holding `${{` anywhere. */
const holdsExpression = (value: unknown): boolean =>
  typeof value === 'string' ? value.includes('${{') : Array.isArray(value) && value.some(holdsExpression);

const countOrPercent = {
  anyOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^\\d+(\\.\\d+)?%$' },
  ],
};

export const forEachStep = defineContainer<ForEachStep>({
  kind: 'forEach',
  description:
    'Runs its steps once per item, `concurrency` at a time, optionally in rolling `batches`, stopping new items once ' +
    'failures exceed `tolerate.failures`.',
  fields: {
    forEach: {
      ...anyTemplate,
      description: 'The items: a list, or an expression yielding one (end the path with `[]`).',
    },
    as: { type: 'string', pattern: STEP_ID_PATTERN, description: 'Name of the loop variable. Default item.' },
    concurrency: { ...orExpression({ type: 'integer', minimum: 1 }), description: 'Items running at once. Default 1.' },
    batches: {
      ...orExpression({
        type: 'array',
        minItems: 1,
        items: orExpression({
          anyOf: [
            { type: 'integer', minimum: 1 },
            { type: 'string', pattern: '^\\d+(\\.\\d+)?%$' },
          ],
        }),
      }),
      description:
        'Rolling batch sizes, counts or percentages of all items, e.g. `[1, "25%", "100%"]`; the last repeats. ' +
        'The list or its sizes may be `${{ }}` over inputs, fixed when the run starts.',
    },
    tolerate: {
      type: 'object',
      additionalProperties: false,
      required: ['failures'],
      properties: {
        failures: {
          ...orExpression(countOrPercent),
          description: 'Failed items allowed: a count, or a percentage of all items.',
        },
      },
    },
    steps: stepList,
  },
  required: ['steps'],
  nested: { steps: 'steps' },
  canWrite: false,
  normalise: ({ data, field, template, at, steps }) => {
    const concurrency = template(data.concurrency ?? 1, at('concurrency'));
    // Over inputs only, it is fixed (and checked) when the run starts; else when the loop starts.
    const fixedAtStart = !concurrency.isStatic && concurrency.references.every((site) => site.root === 'inputs');
    const settings = [
      ...(fixedAtStart ? [{ field: 'concurrency', template: concurrency }] : []),
      ...(holdsExpression(data.batches) ? [{ field: 'batches', template: template(data.batches, at('batches')) }] : []),
    ];
    return {
      items: field('forEach'),
      as: typeof data.as === 'string' ? data.as : 'item',
      concurrency,
      ...(settings.length > 0 ? { inputSettings: settings } : {}),
      ...(Array.isArray(data.batches) && !holdsExpression(data.batches)
        ? { batches: data.batches as Array<number | string> }
        : {}),
      ...(typeof data.tolerate === 'object' && data.tolerate !== null && !Array.isArray(data.tolerate)
        ? {
            tolerate: {
              failures: template((data.tolerate as Record<string, unknown>).failures, `${at('tolerate')}/failures`),
            },
          }
        : {}),
      steps: steps('steps'),
    };
  },
  children: (step) => ({ sequences: [step.steps], scope: 'loop', loopVariable: step.as, loopVariableField: 'as' }),
  run: runForEach,
  outputType: (step, tools) =>
    closedObject({
      items: described(
        {
          type: 'array',
          items: closedObject({
            index: described({ type: 'integer' }, "The item's place in the list, from 0."),
            item: described(step === undefined ? {} : itemOf(tools.valueType(step.items)), 'The item.'),
            status: described(STEP_STATUS_TYPE, 'How the item ended (`notStarted` when it never started).'),
            steps: described(
              step === undefined ? { type: 'object' } : tools.stepRecords(step.steps),
              "The item's steps by id, as `steps.<id>` (status, outputs, error) inside the item.",
            ),
          }),
        },
        'One entry per item, in the order of the list: `items[n].steps.<id>.outputs` reads a step of item n.',
      ),
      succeeded: described({ type: 'integer' }, 'Items that succeeded.'),
      failed: described({ type: 'integer' }, 'Items that failed.'),
      notStarted: described({ type: 'integer' }, 'Items never started (tolerance exceeded, run stopped).'),
    }),
  examples: [
    {
      description: 'Precheck every system, two at a time, tolerating one failure.',
      yaml: `name: for-each-example
inputs:
  systemIds: { type: array, items: { type: string } }
steps:
  - id: systems
    forEach: "\${{ inputs.systemIds[] }}"
    as: systemId
    concurrency: 2
    batches: [1, "50%", "100%"]
    tolerate: { failures: 1 }
    steps:
      - id: precheck
        call: privateCloud.runSoftwarePrechecks
        with: { id: "\${{ systemId }}", body: { catalogVersion: "2.4.0" } }
        wait: true
`,
    },
  ],
});
