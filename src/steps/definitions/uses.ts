import { described } from './value-types.js';
import { orExpression } from './schema-parts.js';
import type { Playbook, StepBase, Template } from '../../model/index.js';
import { runUses } from '../containers/uses.js';
import { defineContainer } from './step-definition.js';

export interface UsesStep extends StepBase {
  kind: 'uses';
  /** As written: a bundled name or a path relative to the using playbook. */
  playbookRef: string;
  with: Template;
  /** Loaded and validated with the parent. */
  playbook: Playbook;
}

export const usesStep = defineContainer<UsesStep>({
  kind: 'uses',
  description:
    "Runs another playbook with inputs; its outputs become this step's outputs. A path is relative to the using playbook; " +
    'a bare name is a bundled playbook.',
  fields: {
    uses: {
      type: 'string',
      minLength: 1,
      description: 'A bundled playbook name, or a path such as `./precheck.yaml`.',
    },
    with: { ...orExpression({ type: 'object' }), description: "The playbook's inputs." },
  },
  canWrite: false,
  normalise(tools) {
    const ref = String(tools.data.uses);
    const playbook = tools.usePlaybook(ref, tools.data.with);
    if (playbook === undefined) return undefined;
    return { playbookRef: ref, with: tools.template(tools.data.with ?? {}, tools.at('with')), playbook };
  },
  // The used playbook's steps are another playbook's: they neither see nor are seen from here.
  children: () => ({ sequences: [], scope: 'shared' }),
  run: runUses,
  outputType: (step, tools) =>
    step === undefined
      ? described({ type: 'object' }, "The used playbook's `outputs`.")
      : tools.playbookOutputs(step.playbook),
  examples: [],
});
