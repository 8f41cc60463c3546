/** The `email` steps of a playbook as the channel check of fleetbook.yaml takes them. */
import type { EmailStepUse } from '../notifications/index.js';
import type { Playbook } from '../playbook/index.js';
import type { EmailStep } from '../steps/index.js';
import { createStepRegistry, stepsOfKind } from '../steps/index.js';

const registry = createStepRegistry();

export function emailStepUses(playbook: Pick<Playbook, 'steps'>): EmailStepUse[] {
  return (stepsOfKind(registry, playbook.steps, 'email') as EmailStep[]).map((step) => ({
    ...(step.via === undefined ? {} : { via: step.via }),
    location: step.location,
  }));
}
