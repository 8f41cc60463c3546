/**
 * The rules on what an expression may read, over the loaded playbook. The context holds
 * `inputs`, `steps`, `run`, `env`, and inside a `forEach` its loop variable and `loop`;
 * any other top-level name is undefined when the step runs, so it is an error at load.
 * `inputs.<name>` must be a declared input. `steps.<id>` must name a step that has run by
 * then: a step sees its earlier siblings (and what ran inside them, loops excepted: their
 * steps belong to one iteration), its ancestors' earlier siblings, the earlier steps of its
 * own loop iteration or branch; `rescue` and `always` also see the step they belong to.
 * What is read under those names is checked by type inference over the whole expression
 * (`infer/`): a field that cannot exist is `UNKNOWN_PATH_FIELD`. Each problem points at the name
 * inside the expression where the file allows it.
 */
import { didYouMean } from '../errors/index.js';
import type { PathSegment, ReferenceSite, Template } from '../expressions/index.js';
import type { PlatformDescription } from '../openapi/index.js';
import { fieldMisses } from './infer/index.js';
import { PathTypes, type LoopScope } from './path-types.js';
import type { Finding } from './rules.js';
import { describePointer } from './schema-validation.js';
import type { StepRegistry } from '../steps/index.js';
import type { Playbook, Step } from '../model/index.js';

/** What every expression reads, whatever the step. */
const CONTEXT_NAMES = ['inputs', 'steps', 'run', 'env'] as const;

/** Names a loop variable may not take: it would hide what they name (or `loop`, which the loop sets). */
const RESERVED_NAMES: ReadonlySet<string> = new Set([...CONTEXT_NAMES, 'loop']);

export type ReferenceFinding = Finding & { offsetInValue?: number; lengthInValue?: number };

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
const OWN_KEYS_NOT_WALKED: ReadonlySet<string> = new Set([
  'location',
  'playbook',
  'rescue',
  'always',
  'retry',
  'inputSettings',
]);

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
  if (children.scope === 'shared')
    for (const sequence of children.sequences) for (const child of sequence) finishedWithin(registry, child, into);
  if (!withHandlers) return;
  for (const child of children.rescue) finishedWithin(registry, child, into);
  for (const child of children.always) finishedWithin(registry, child, into);
}

/** What an expression at some place may read besides the context names. */
interface Scope {
  /** Steps that have run. */
  visible: RanSteps;
  /** Loop variables of the enclosing loops, and the loop setting each. */
  loops: LoopScope;
}

/** A path as written: `steps.a.outputs.items[0].name`. */
function written(root: string, segments: readonly PathSegment[]): string {
  return segments.reduce(
    (text, segment) =>
      `${text}.${segment.name}${segment.filter === 'index' ? `[${segment.index ?? 'n'}]` : segment.filter === 'predicate' ? '[…]' : ''}`,
    root,
  );
}

export function expressionReferenceRule(
  playbook: Playbook,
  registry: StepRegistry,
  description: PlatformDescription,
): ReferenceFinding[] {
  return new ReferenceChecker(playbook, registry, description).run();
}

/** Where a reference's problem is: at `offset` in the value, else at the reference's root. */
function siteAt(site: ReferenceSite, offset: number | undefined): { pointer: string; offsetInValue: number } {
  return { pointer: site.pointer, offsetInValue: offset ?? site.rootOffset };
}

/** One pass of `expressionReferenceRule` over a playbook: what it knows of the playbook, and the findings so far. */
class ReferenceChecker {
  private readonly types: PathTypes;
  /** Every step id of the playbook. */
  private readonly all = new Set<string>();
  /** Every loop variable of the playbook, and the loop that sets it: for "used outside its loop". */
  private readonly loops = new Map<string, string>();
  /** The loops (innermost first) each step runs in, for "read it through the loop's items". */
  private readonly enclosingLoops = new Map<string, Step[]>();
  private readonly inputs: string[];
  private readonly findings: ReferenceFinding[] = [];

  constructor(
    private readonly playbook: Playbook,
    private readonly registry: StepRegistry,
    description: PlatformDescription,
  ) {
    this.types = PathTypes.of(playbook, registry, description);
    this.collect(playbook.steps);
    this.inputs = Object.keys(playbook.inputs);
    this.loopsOf(playbook.steps, []);
  }

  run(): ReferenceFinding[] {
    const { playbook, registry } = this;
    this.walk(playbook.steps, { visible: new RanSteps(), loops: new Map() });
    const everything = new RanSteps();
    for (const step of playbook.steps) finishedWithin(registry, step, everything);
    this.check(playbook.outputs, { visible: everything, loops: new Map() });
    // The lock is rendered before the run starts: no step has run.
    this.check(playbook.lock, { visible: new RanSteps(), loops: new Map() });
    return this.findings;
  }

  private collect(steps: Step[]): void {
    for (const step of steps) {
      this.all.add(step.id);
      const children = this.registry.childStepsOf(step);
      if (children.loopVariable !== undefined && !this.loops.has(children.loopVariable))
        this.loops.set(children.loopVariable, step.location.pointer);
      [...children.sequences, children.rescue, children.always].forEach((sequence) => this.collect(sequence));
    }
  }

  private loopsOf(steps: Step[], around: Step[]): void {
    for (const step of steps) {
      if (!this.enclosingLoops.has(step.id)) this.enclosingLoops.set(step.id, around);
      const children = this.registry.childStepsOf(step);
      const inner = children.scope === 'loop' ? [step, ...around] : around;
      for (const sequence of children.sequences) this.loopsOf(sequence, inner);
      this.loopsOf(children.rescue, around);
      this.loopsOf(children.always, around);
    }
  }

  /** How to read a step of a loop's items once the loop has run, or where the step runs. */
  private notYetRunHint(id: string, site: ReferenceSite, scope: Scope): string {
    const loop = (this.enclosingLoops.get(id) ?? []).find((candidate) => scope.visible.has(candidate.id));
    const rest = written('', site.path.slice(1));
    if (loop !== undefined)
      return ` It runs inside the loop '${loop.id}', once per item: read it after the loop as \`steps.${loop.id}.outputs.items.steps.${id}${rest}\` (one per item; \`items[0]\` for the first).`;
    const step = this.types.byId.get(id);
    return step === undefined
      ? ''
      : ` It is the step at ${describePointer(step.location.pointer)}: read it in a step that runs after that one has ended.`;
  }

  private check(template: Template | undefined, scope: Scope, self?: string): void {
    for (const site of template?.references ?? []) this.checkSite(site, scope, self);
    const readable = (id: string): boolean => id === self || scope.visible.has(id);
    for (const miss of fieldMisses(template, this.types.scopeAt(scope.loops, readable)))
      this.findings.push({ code: 'UNKNOWN_PATH_FIELD', ...miss });
  }

  /**
   * One reference, by the name it starts with: the name, the step or the input must be one that
   * can be read here (what is read under it is type inference's: `check`).
   */
  private checkSite(site: ReferenceSite, scope: Scope, self: string | undefined): void {
    if (site.root === 'steps' && !scope.loops.has('steps')) {
      this.checkStepReference(site, scope, self);
    } else if (site.root === 'inputs' && !scope.loops.has('inputs')) {
      this.checkInputReference(site);
    } else if (
      (CONTEXT_NAMES as readonly string[]).includes(site.root) ||
      scope.loops.has(site.root) ||
      (site.root === 'loop' && scope.loops.size > 0)
    ) {
      // A name that can be read here.
    } else if (site.root === 'loop' || this.loops.has(site.root)) {
      const where =
        site.root === 'loop' ? 'a forEach' : `the forEach at ${describePointer(this.loops.get(site.root) ?? '')}`;
      const what = site.root === 'loop' ? "'loop'" : `the loop variable '${site.root}'`;
      this.findings.push({
        code: 'LOOP_NAME_OUTSIDE_LOOP',
        message: `${what} is read outside its loop: it exists only in the steps of ${where}`,
        ...siteAt(site, site.rootOffset),
      });
    } else {
      const known = [...CONTEXT_NAMES, ...scope.loops.keys(), ...(scope.loops.size > 0 ? ['loop'] : [])];
      this.findings.push({
        code: 'UNKNOWN_NAME',
        message: `unknown name '${site.root}': an expression here reads ${known.join(', ')}.${didYouMean(site.root, known)}`,
        ...siteAt(site, site.rootOffset),
      });
    }
  }

  /** `steps.<id>…`: a step that has run here (or the step itself, for the fields it reads of itself). */
  private checkStepReference(site: ReferenceSite, scope: Scope, self: string | undefined): void {
    const id = site.member;
    if (id === undefined) return;
    if (scope.visible.has(id) || id === self) return;
    const hint = didYouMean(id, this.all);
    this.findings.push(
      this.all.has(id)
        ? {
            code: 'STEP_NOT_YET_RUN',
            message: `step '${id}' has not run at this point: a step reads only steps that ran before it.${this.notYetRunHint(id, site, scope)}`,
            ...siteAt(site, site.memberOffset),
            lengthInValue: id.length,
          }
        : {
            code: 'UNKNOWN_STEP_REFERENCE',
            message: `there is no step with id '${id}'${hint === '' ? '' : `.${hint}`}`,
            ...siteAt(site, site.memberOffset),
          },
    );
  }

  /** `inputs.<name>…`: a declared input. */
  private checkInputReference(site: ReferenceSite): void {
    const { inputs } = this;
    const name = site.member;
    if (name === undefined || inputs.includes(name)) return;
    const takes = inputs.length > 0 ? `it takes ${inputs.join(', ')}` : 'it takes none';
    this.findings.push({
      code: 'UNKNOWN_INPUT',
      message: `the playbook declares no input '${name}': ${takes}.${didYouMean(name, inputs)}`,
      ...siteAt(site, site.memberOffset),
    });
  }

  private reservedLoopName(step: Step, name: string, field: string): void {
    if (!RESERVED_NAMES.has(name)) return;
    this.findings.push({
      code: 'RESERVED_LOOP_NAME',
      message: `a loop variable cannot be named '${name}': it would hide ${name === 'loop' ? "the loop's own 'loop'" : `the run's '${name}'`}; choose another name such as 'item'`,
      pointer: `${step.location.pointer}/${field}`,
    });
  }

  /** A setting fixed when the run starts reads the inputs and nothing else: no step has run then. */
  private checkInputSettings(step: Step): void {
    for (const { template } of step.inputSettings ?? []) {
      const others = template.references.filter((site) => site.root !== 'inputs');
      // What they name is beside the point: nothing but inputs exists when the value is fixed.
      if (others.length === 0) this.check(template, { visible: new RanSteps(), loops: new Map() });
      for (const site of others) {
        this.findings.push({
          code: 'SETTING_NOT_OVER_INPUTS',
          message: `this value is fixed when the run starts, before any step: its expression reads only \`inputs\`, not '${site.root}'`,
          pointer: site.pointer,
          offsetInValue: site.rootOffset,
          lengthInValue: site.root.length,
        });
      }
    }
  }

  /** The fields of a kind's steps that read the step itself, by kind: asked once per kind, not per step. */
  private readonly readsItselfByKind = new Map<string, ReadonlySet<string>>();

  private readsItself(kind: string): ReadonlySet<string> {
    let fields = this.readsItselfByKind.get(kind);
    if (fields === undefined)
      this.readsItselfByKind.set(kind, (fields = new Set(this.registry.get(kind).readsItself ?? [])));
    return fields;
  }

  private walk(steps: Step[], outer: Scope): void {
    if (steps.length === 0) return;
    const { registry } = this;
    const visible = new RanSteps(outer.visible);
    const scope: Scope = { visible, loops: outer.loops };
    for (const step of steps) {
      this.checkInputSettings(step);
      const readsItself = this.readsItself(step.kind);
      for (const template of templatesOf(step, readsItself)) this.check(template, scope);
      for (const field of readsItself) this.check(step[field as keyof Step] as Template | undefined, scope, step.id);
      const children = registry.childStepsOf(step);
      if (children.loopVariable !== undefined) {
        this.reservedLoopName(step, children.loopVariable, children.loopVariableField ?? 'as');
        const inLoop: Scope = { visible, loops: new Map([...outer.loops, [children.loopVariable, step]]) };
        for (const sequence of children.sequences) this.walk(sequence, inLoop);
      } else {
        for (const sequence of children.sequences) this.walk(sequence, scope);
      }
      if (children.rescue.length > 0 || children.always.length > 0) {
        const afterStep = new RanSteps(visible);
        finishedWithin(registry, step, afterStep, false);
        this.walk(children.rescue, { visible: afterStep, loops: outer.loops });
        this.walk(children.always, { visible: afterStep, loops: outer.loops });
      }
      finishedWithin(registry, step, visible);
    }
  }
}
