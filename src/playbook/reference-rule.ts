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
import { didYouMean } from '../errors/index.js';
import type { Template } from '../expressions/index.js';
import type { Finding } from './rules.js';
import { describePointer } from './schema-validation.js';
import type { StepRegistry } from '../steps/index.js';
import type { Playbook, Step } from './types.js';

/** What every expression reads, whatever the step. */
const CONTEXT_NAMES = ['inputs', 'steps', 'run', 'env'] as const;

/** Names a loop variable may not take: it would hide what they name (or `loop`, which the loop sets). */
const RESERVED_NAMES: ReadonlySet<string> = new Set([...CONTEXT_NAMES, 'loop']);

export type ReferenceFinding = Finding & { offsetInValue?: number };

/** Every template of a step's own fields (not its children's), however deep (`tolerate.failures`). */
function templatesOf(step: Step, skip: ReadonlySet<string>): Template[] {
  const found: Template[] = [];
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null) return;
    if (typeof (value as Template).evaluate === 'function') {
      found.push(value as Template);
      return;
    }
    // A nested step (a list of them) is walked as a step of its own.
    if (Array.isArray(value) ? value.some(isStep) : isStep(value)) return;
    for (const inner of Array.isArray(value) ? value : Object.values(value)) visit(inner);
  };
  for (const [key, value] of Object.entries(step)) {
    if (!skip.has(key) && !OWN_KEYS_NOT_WALKED.has(key)) visit(value);
  }
  return found;
}

/** A step's fields that hold no template of its own: its place, a used playbook, its nested steps. */
const OWN_KEYS_NOT_WALKED: ReadonlySet<string> = new Set(['location', 'playbook', 'rescue', 'always', 'retry']);

function isStep(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Step).kind === 'string' &&
    typeof (value as Step).location === 'object'
  );
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

/** Steps that have run once `step` has ended, as seen from after it (a loop's steps belong to one iteration). */
function finishedWithin(registry: StepRegistry, step: Step, into: RanSteps, withHandlers = true): void {
  into.add(step.id);
  const children = registry.childStepsOf(step);
  const within = [
    ...(children.scope === 'shared' ? children.sequences.flat() : []),
    ...(withHandlers ? [...children.rescue, ...children.always] : []),
  ];
  for (const child of within) finishedWithin(registry, child, into);
}

/** What an expression at some place may read besides the context names. */
interface Scope {
  /** Steps that have run. */
  visible: RanSteps;
  /** Loop variables of the enclosing loops. */
  loopNames: ReadonlySet<string>;
}

export function expressionReferenceRule(playbook: Playbook, registry: StepRegistry): ReferenceFinding[] {
  const all = new Set<string>();
  // Every loop variable of the playbook, and the loop that sets it: for "used outside its loop".
  const loops = new Map<string, string>();
  const collect = (steps: Step[]): void => {
    for (const step of steps) {
      all.add(step.id);
      const children = registry.childStepsOf(step);
      if (children.loopVariable !== undefined && !loops.has(children.loopVariable))
        loops.set(children.loopVariable, step.location.pointer);
      [...children.sequences, children.rescue, children.always].forEach(collect);
    }
  };
  collect(playbook.steps);
  const inputs = Object.keys(playbook.inputs);
  const findings: ReferenceFinding[] = [];

  const check = (template: Template | undefined, scope: Scope, self?: string): void => {
    for (const site of template?.references ?? []) {
      const at = (offset: number | undefined): { pointer: string; offsetInValue: number } => ({
        pointer: site.pointer,
        offsetInValue: offset ?? site.rootOffset,
      });
      if (site.root === 'steps') {
        const id = site.member;
        if (id === undefined || scope.visible.has(id) || id === self) continue;
        const hint = didYouMean(id, all);
        findings.push(
          all.has(id)
            ? {
                code: 'STEP_NOT_YET_RUN',
                message: `step '${id}' has not run at this point: a step reads only steps that ran before it`,
                ...at(site.memberOffset),
              }
            : {
                code: 'UNKNOWN_STEP_REFERENCE',
                message: `there is no step with id '${id}'${hint === '' ? '' : `.${hint}`}`,
                ...at(site.memberOffset),
              },
        );
      } else if (site.root === 'inputs') {
        const name = site.member;
        if (name === undefined || inputs.includes(name)) continue;
        const takes = inputs.length > 0 ? `it takes ${inputs.join(', ')}` : 'it takes none';
        findings.push({
          code: 'UNKNOWN_INPUT',
          message: `the playbook declares no input '${name}': ${takes}.${didYouMean(name, inputs)}`,
          ...at(site.memberOffset),
        });
      } else if ((CONTEXT_NAMES as readonly string[]).includes(site.root) || scope.loopNames.has(site.root)) {
        continue;
      } else if (site.root === 'loop' && scope.loopNames.size > 0) {
        continue;
      } else if (site.root === 'loop' || loops.has(site.root)) {
        const where =
          site.root === 'loop' ? 'a forEach' : `the forEach at ${describePointer(loops.get(site.root) ?? '')}`;
        const what = site.root === 'loop' ? "'loop'" : `the loop variable '${site.root}'`;
        findings.push({
          code: 'LOOP_NAME_OUTSIDE_LOOP',
          message: `${what} is read outside its loop: it exists only in the steps of ${where}`,
          ...at(site.rootOffset),
        });
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

  const reservedLoopName = (step: Step, name: string, field: string): void => {
    if (!RESERVED_NAMES.has(name)) return;
    findings.push({
      code: 'RESERVED_LOOP_NAME',
      message: `a loop variable cannot be named '${name}': it would hide ${name === 'loop' ? "the loop's own 'loop'" : `the run's '${name}'`}; choose another name such as 'item'`,
      pointer: `${step.location.pointer}/${field}`,
    });
  };

  const walk = (steps: Step[], outer: Scope): void => {
    const visible = new RanSteps(outer.visible);
    for (const step of steps) {
      const scope: Scope = { visible, loopNames: outer.loopNames };
      const readsItself = new Set(registry.get(step.kind).readsItself ?? []);
      for (const template of templatesOf(step, readsItself)) check(template, scope);
      for (const field of readsItself) check(step[field as keyof Step] as Template | undefined, scope, step.id);
      const children = registry.childStepsOf(step);
      if (children.loopVariable !== undefined) {
        reservedLoopName(step, children.loopVariable, children.loopVariableField ?? 'as');
        const inLoop: Scope = { visible, loopNames: new Set([...outer.loopNames, children.loopVariable]) };
        for (const sequence of children.sequences) walk(sequence, inLoop);
      } else {
        for (const sequence of children.sequences) walk(sequence, scope);
      }
      const afterStep = new RanSteps(visible);
      finishedWithin(registry, step, afterStep, false);
      walk(children.rescue, { visible: afterStep, loopNames: outer.loopNames });
      walk(children.always, { visible: afterStep, loopNames: outer.loopNames });
      finishedWithin(registry, step, visible);
    }
  };
  walk(playbook.steps, { visible: new RanSteps(), loopNames: new Set() });

  const everything = new RanSteps();
  for (const step of playbook.steps) finishedWithin(registry, step, everything);
  check(playbook.outputs, { visible: everything, loopNames: new Set() });
  // The lock is rendered before the run starts: no step has run.
  check(playbook.lock, { visible: new RanSteps(), loopNames: new Set() });
  return findings;
}
