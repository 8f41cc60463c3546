/**
 * The rules on what an expression may read, over the loaded playbook. The context holds
 * `inputs`, `steps`, `run`, `env`, and inside a `forEach` its loop variable and `loop`;
 * any other top-level name is undefined when the step runs, so it is an error at load.
 * `inputs.<name>` must be a declared input. `steps.<id>` must name a step that has run by
 * then: a step sees its earlier siblings (and what ran inside them, loops excepted: their
 * steps belong to one iteration), its ancestors' earlier siblings, the earlier steps of its
 * own loop iteration or branch; `rescue` and `always` also see the step they belong to.
 * Each problem points at the name inside the expression where the file allows it.
 */
import { didYouMean } from '../errors/did-you-mean.js';
import type { Template } from '../expressions/types.js';
import type { Finding } from './rules.js';
import { describePointer } from './schema-validation.js';
import type { Playbook, Step } from './types.js';

/** What every expression reads, whatever the step. */
const CONTEXT_NAMES = ['inputs', 'steps', 'run', 'env'] as const;

/** Names a loop variable may not take: it would hide what they name (or `loop`, which the loop sets). */
const RESERVED_NAMES: ReadonlySet<string> = new Set([...CONTEXT_NAMES, 'loop']);

export type ReferenceFinding = Finding & { offsetInValue?: number };

function templatesOf(step: Step): Template[] {
  const fields = Object.entries(step)
    .filter(([key, value]) => key !== 'until' && typeof value === 'object' && value !== null && typeof (value as Template).evaluate === 'function')
    .map(([, value]) => value as Template);
  if (step.kind === 'forEach' && step.tolerate) fields.push(step.tolerate.failures);
  return fields;
}

/**
 * Step ids that have run, as a chain of sets: a nested list of steps adds its own set on top of
 * the one around it instead of copying it, so walking the playbook costs the number of steps
 * times the nesting depth, not steps squared.
 */
class RanSteps {
  private readonly own = new Set<string>();

  constructor(private readonly outer?: RanSteps) {}

  has(id: string): boolean {
    return this.own.has(id) || (this.outer?.has(id) ?? false);
  }

  add(id: string): void {
    this.own.add(id);
  }
}

/** Steps that have run once `step` has ended, as seen from after it. */
function finishedWithin(step: Step, into: RanSteps, withHandlers = true): void {
  into.add(step.id);
  const children: Step[] = [];
  if (step.kind === 'block') children.push(...step.steps);
  if (step.kind === 'parallel') children.push(...step.branches.flat());
  if (withHandlers) children.push(...(step.rescue ?? []), ...(step.always ?? []));
  for (const child of children) finishedWithin(child, into);
}

/** What an expression at some place may read besides the context names. */
interface Scope {
  /** Steps that have run. */
  visible: RanSteps;
  /** Loop variables of the enclosing loops. */
  loopNames: ReadonlySet<string>;
}

export function expressionReferenceRule(playbook: Playbook): ReferenceFinding[] {
  const all = new Set<string>();
  // Every loop variable of the playbook, and the loop that sets it: for "used outside its loop".
  const loops = new Map<string, string>();
  const collect = (steps: Step[]): void => {
    for (const step of steps) {
      all.add(step.id);
      if (step.kind === 'forEach' && !loops.has(step.as)) loops.set(step.as, step.location.pointer);
      if (step.kind === 'block' || step.kind === 'forEach') collect(step.steps);
      if (step.kind === 'parallel') step.branches.forEach(collect);
      collect(step.rescue ?? []);
      collect(step.always ?? []);
    }
  };
  collect(playbook.steps);
  const inputs = Object.keys(playbook.inputs);
  const findings: ReferenceFinding[] = [];

  const check = (template: Template | undefined, scope: Scope, self?: string): void => {
    for (const site of template?.references ?? []) {
      const at = (offset: number | undefined): { pointer: string; offsetInValue: number } => ({ pointer: site.pointer, offsetInValue: offset ?? site.rootOffset });
      if (site.root === 'steps') {
        const id = site.member;
        if (id === undefined || scope.visible.has(id) || id === self) continue;
        const hint = didYouMean(id, all);
        findings.push(
          all.has(id)
            ? { code: 'STEP_NOT_YET_RUN', message: `step '${id}' has not run at this point: a step reads only steps that ran before it`, ...at(site.memberOffset) }
            : { code: 'UNKNOWN_STEP_REFERENCE', message: `there is no step with id '${id}'${hint === '' ? '' : `.${hint}`}`, ...at(site.memberOffset) },
        );
      } else if (site.root === 'inputs') {
        const name = site.member;
        if (name === undefined || inputs.includes(name)) continue;
        const takes = inputs.length > 0 ? `it takes ${inputs.join(', ')}` : 'it takes none';
        findings.push({ code: 'UNKNOWN_INPUT', message: `the playbook declares no input '${name}': ${takes}.${didYouMean(name, inputs)}`, ...at(site.memberOffset) });
      } else if ((CONTEXT_NAMES as readonly string[]).includes(site.root) || scope.loopNames.has(site.root)) {
        continue;
      } else if (site.root === 'loop' && scope.loopNames.size > 0) {
        continue;
      } else if (site.root === 'loop' || loops.has(site.root)) {
        const where = site.root === 'loop' ? 'a forEach' : `the forEach at ${describePointer(loops.get(site.root) ?? '')}`;
        const what = site.root === 'loop' ? "'loop'" : `the loop variable '${site.root}'`;
        findings.push({ code: 'LOOP_NAME_OUTSIDE_LOOP', message: `${what} is read outside its loop: it exists only in the steps of ${where}`, ...at(site.rootOffset) });
      } else {
        const known = [...CONTEXT_NAMES, ...scope.loopNames, ...(scope.loopNames.size > 0 ? ['loop'] : [])];
        findings.push({
          code: 'UNKNOWN_NAME',
          message: `unknown name '${site.root}': an expression here reads ${known.join(', ')}.${didYouMean(site.root, known)}`,
          ...at(site.rootOffset),
        });
      }
    }
  };

  const walk = (steps: Step[], outer: Scope): void => {
    const visible = new RanSteps(outer.visible);
    for (const step of steps) {
      const scope: Scope = { visible, loopNames: outer.loopNames };
      for (const template of templatesOf(step)) check(template, scope);
      if (step.kind === 'call') check(step.until, scope, step.id);
      if (step.kind === 'forEach') {
        if (RESERVED_NAMES.has(step.as)) {
          findings.push({
            code: 'RESERVED_LOOP_NAME',
            message: `a loop variable cannot be named '${step.as}': it would hide ${step.as === 'loop' ? "the loop's own 'loop'" : `the run's '${step.as}'`}; choose another name such as 'item'`,
            pointer: `${step.location.pointer}/as`,
          });
        }
        walk(step.steps, { visible, loopNames: new Set([...outer.loopNames, step.as]) });
      }
      if (step.kind === 'block') walk(step.steps, scope);
      if (step.kind === 'parallel') for (const branch of step.branches) walk(branch, scope);
      const afterStep = new RanSteps(visible);
      finishedWithin(step, afterStep, false);
      walk(step.rescue ?? [], { visible: afterStep, loopNames: outer.loopNames });
      walk(step.always ?? [], { visible: afterStep, loopNames: outer.loopNames });
      finishedWithin(step, visible);
    }
  };
  walk(playbook.steps, { visible: new RanSteps(), loopNames: new Set() });

  const everything = new RanSteps();
  for (const step of playbook.steps) finishedWithin(step, everything);
  check(playbook.outputs, { visible: everything, loopNames: new Set() });
  // The lock is rendered before the run starts: no step has run.
  check(playbook.lock, { visible: new RanSteps(), loopNames: new Set() });
  return findings;
}
