/**
 * The rule on what a step may read: `steps.<id>` must name a step that has run by then.
 * A step sees its earlier siblings (and what ran inside them, loops excepted: their steps
 * belong to one iteration), its ancestors' earlier siblings, the earlier steps of its own
 * loop iteration or branch; `rescue` and `always` also see the step they belong to.
 */
import type { Template } from '../expressions/types.js';
import type { Finding } from './rules.js';
import type { Playbook, Step } from './types.js';

function templatesOf(step: Step): Array<[string, Template]> {
  const fields = Object.entries(step).filter(
    ([key, value]) => key !== 'until' && typeof value === 'object' && value !== null && typeof (value as Template).evaluate === 'function',
  ) as Array<[string, Template]>;
  if (step.kind === 'forEach' && step.tolerate) fields.push(['tolerate', step.tolerate.failures]);
  return fields;
}

/** The YAML key a normalised field was written under. */
function writtenAs(step: Step, field: string): string {
  const renamed: Record<string, string> = { values: 'set', condition: 'assert', items: 'forEach', duration: 'sleep', request: 'http', tolerate: 'tolerate/failures' };
  if (field === 'message' && (step.kind === 'log' || step.kind === 'fail')) return step.kind;
  return renamed[field] ?? field;
}

/** Steps that have run once `step` has ended, as seen from after it. */
function finishedWithin(step: Step, into: Set<string>): void {
  into.add(step.id);
  const children: Step[] = [];
  if (step.kind === 'block') children.push(...step.steps);
  if (step.kind === 'parallel') children.push(...step.branches.flat());
  children.push(...(step.rescue ?? []), ...(step.always ?? []));
  for (const child of children) finishedWithin(child, into);
}

export function stepReferenceRule(playbook: Playbook): Finding[] {
  const all = new Set<string>();
  const collect = (steps: Step[]): void => {
    for (const step of steps) {
      all.add(step.id);
      if (step.kind === 'block' || step.kind === 'forEach') collect(step.steps);
      if (step.kind === 'parallel') step.branches.forEach(collect);
      collect(step.rescue ?? []);
      collect(step.always ?? []);
    }
  };
  collect(playbook.steps);
  const findings: Finding[] = [];

  const check = (template: Template | undefined, pointer: string, visible: ReadonlySet<string>, self?: string): void => {
    for (const id of template?.stepReferences ?? []) {
      if (visible.has(id) || id === self) continue;
      findings.push(
        all.has(id)
          ? { code: 'STEP_NOT_YET_RUN', message: `step '${id}' has not run at this point: a step reads only steps that ran before it`, pointer }
          : { code: 'UNKNOWN_STEP_REFERENCE', message: `there is no step with id '${id}'`, pointer },
      );
    }
  };

  const walk = (steps: Step[], outer: ReadonlySet<string>): void => {
    const visible = new Set(outer);
    for (const step of steps) {
      for (const [field, template] of templatesOf(step)) check(template, `${step.location.pointer}/${writtenAs(step, field)}`, visible);
      if (step.kind === 'call') check(step.until, `${step.location.pointer}/until`, visible, step.id);
      if (step.kind === 'block' || step.kind === 'forEach') walk(step.steps, visible);
      if (step.kind === 'parallel') for (const branch of step.branches) walk(branch, visible);
      const afterStep = new Set(visible);
      finishedWithin({ ...step, rescue: [], always: [] }, afterStep);
      walk(step.rescue ?? [], afterStep);
      walk(step.always ?? [], afterStep);
      finishedWithin(step, visible);
    }
  };
  walk(playbook.steps, new Set());

  const everything = new Set<string>();
  for (const step of playbook.steps) finishedWithin(step, everything);
  check(playbook.outputs, '/outputs', everything);
  return findings;
}
