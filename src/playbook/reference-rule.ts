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
import { closestMatches, didYouMean } from '../errors/index.js';
import type { PathSegment, ReferenceSite, Template } from '../expressions/index.js';
import type { PlatformDescription } from '../openapi/index.js';
import { fieldOf, type JsonSchema } from '../steps/index.js';
import { isMiss, PathTypes, walkPath, type LoopScope, type PathMiss } from './path-types.js';
import type { Finding } from './rules.js';
import { describePointer } from './schema-validation.js';
import type { StepRegistry } from '../steps/index.js';
import type { Playbook, Step } from './types.js';

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

/** The shortest way from `type` to a field `name` a few levels down (`outputs.items.steps`), or undefined. */
function pathToField(type: JsonSchema, name: string, depth = 3): string[] | undefined {
  let frontier: Array<{ type: JsonSchema; path: string[] }> = [{ type, path: [] }];
  for (let level = 0; level < depth; level += 1) {
    const next: typeof frontier = [];
    for (const { type: at, path } of frontier) {
      const lookup = fieldOf(at, '\u0000');
      if (lookup.found || !lookup.known) continue;
      if (path.length > 0 && lookup.fields.includes(name)) return path;
      for (const field of lookup.fields) {
        const inner = fieldOf(at, field);
        if (inner.found) next.push({ type: inner.type, path: [...path, field] });
      }
    }
    frontier = next;
  }
  return undefined;
}

export function expressionReferenceRule(
  playbook: Playbook,
  registry: StepRegistry,
  description: PlatformDescription,
): ReferenceFinding[] {
  const types = new PathTypes(playbook, registry, description);
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

  /** The loops (innermost first) each step runs in, for "read it through the loop's items". */
  const enclosingLoops = new Map<string, Step[]>();
  const loopsOf = (steps: Step[], around: Step[]): void => {
    for (const step of steps) {
      if (!enclosingLoops.has(step.id)) enclosingLoops.set(step.id, around);
      const children = registry.childStepsOf(step);
      const inner = children.scope === 'loop' ? [step, ...around] : around;
      for (const sequence of children.sequences) loopsOf(sequence, inner);
      loopsOf(children.rescue, around);
      loopsOf(children.always, around);
    }
  };
  loopsOf(playbook.steps, []);

  /** How to read a step of a loop's items once the loop has run, or where the step runs. */
  const notYetRunHint = (id: string, site: ReferenceSite, scope: Scope): string => {
    const loop = (enclosingLoops.get(id) ?? []).find((candidate) => scope.visible.has(candidate.id));
    const rest = written('', site.path.slice(1));
    if (loop !== undefined)
      return ` It runs inside the loop '${loop.id}', once per item: read it after the loop as \`steps.${loop.id}.outputs.items.steps.${id}${rest}\` (one per item; \`items[0]\` for the first).`;
    const step = types.byId.get(id);
    return step === undefined
      ? ''
      : ` It is the step at ${describePointer(step.location.pointer)}: read it in a step that runs after that one has ended.`;
  };

  /** A path read from `type` after its first `from` segments: each field must be one the type can have. */
  const checkPath = (site: ReferenceSite, type: JsonSchema, from: number, scope: Scope): void => {
    const walked = walkPath(type, site.path.slice(from));
    if (!isMiss(walked)) return;
    const index = from + walked.at;
    const segment = site.path[index];
    if (segment === undefined) return;
    const parentText = written(site.root, site.path.slice(0, index));
    findings.push({
      code: 'UNKNOWN_PATH_FIELD',
      message: `\`${parentText}\` has no field '${segment.name}': ${fieldsText(walked)}${suggestion(site, index, walked, scope)}`,
      pointer: site.pointer,
      offsetInValue: segment.offset,
      lengthInValue: segment.length,
    });
  };

  const fieldsText = (miss: PathMiss): string => {
    const { fields, what } = miss.lookup;
    if (fields.length === 0) return `it is ${what}.`;
    const shown = fields.slice(0, 12).join(', ');
    return `its fields are ${shown}${fields.length > 12 ? `, … (${fields.length} in all)` : ''}.`;
  };

  /** A field spelt nearly so, else the same name a few levels down, else the same path read from another step. */
  const suggestion = (site: ReferenceSite, index: number, miss: PathMiss, scope: Scope): string => {
    const segment = site.path[index];
    if (segment === undefined) return '';
    const [close] = closestMatches(segment.name, miss.lookup.fields);
    const before = written(site.root, site.path.slice(0, index));
    const after = written('', site.path.slice(index + 1));
    if (close !== undefined) return ` Did you mean \`${before}.${close}${after}\`?`;
    const deeper = pathToField(miss.parent, segment.name);
    if (deeper !== undefined) return ` Did you mean \`${before}.${deeper.join('.')}.${segment.name}${after}\`?`;
    if (site.root !== 'steps' || site.member === undefined) return '';
    const rest = site.path.slice(1);
    const other = [...types.byId.keys()].find(
      (id) => id !== site.member && scope.visible.has(id) && !isMiss(walkPath(types.record(id), rest)),
    );
    return other === undefined
      ? ''
      : ` Did you mean \`${written(`steps.${other}`, rest)}\`? That field is in what step '${other}' returns.`;
  };

  const check = (template: Template | undefined, scope: Scope, self?: string): void => {
    for (const site of template?.references ?? []) {
      const at = (offset: number | undefined): { pointer: string; offsetInValue: number } => ({
        pointer: site.pointer,
        offsetInValue: offset ?? site.rootOffset,
      });
      if (site.root === 'steps' && !scope.loops.has('steps')) {
        const id = site.member;
        if (id === undefined) continue;
        if (scope.visible.has(id) || id === self) {
          checkPath(site, types.record(id), 1, scope);
          continue;
        }
        const hint = didYouMean(id, all);
        findings.push(
          all.has(id)
            ? {
                code: 'STEP_NOT_YET_RUN',
                message: `step '${id}' has not run at this point: a step reads only steps that ran before it.${notYetRunHint(id, site, scope)}`,
                ...at(site.memberOffset),
                lengthInValue: id.length,
              }
            : {
                code: 'UNKNOWN_STEP_REFERENCE',
                message: `there is no step with id '${id}'${hint === '' ? '' : `.${hint}`}`,
                ...at(site.memberOffset),
              },
        );
      } else if (site.root === 'inputs' && !scope.loops.has('inputs')) {
        const name = site.member;
        if (name === undefined) continue;
        if (inputs.includes(name)) {
          checkPath(site, types.root('inputs', scope.loops) ?? {}, 0, scope);
          continue;
        }
        const takes = inputs.length > 0 ? `it takes ${inputs.join(', ')}` : 'it takes none';
        findings.push({
          code: 'UNKNOWN_INPUT',
          message: `the playbook declares no input '${name}': ${takes}.${didYouMean(name, inputs)}`,
          ...at(site.memberOffset),
        });
      } else if ((CONTEXT_NAMES as readonly string[]).includes(site.root) || scope.loops.has(site.root)) {
        checkPath(site, types.root(site.root, scope.loops) ?? {}, 0, scope);
      } else if (site.root === 'loop' && scope.loops.size > 0) {
        checkPath(site, types.root('loop', scope.loops) ?? {}, 0, scope);
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
        const known = [...CONTEXT_NAMES, ...scope.loops.keys(), ...(scope.loops.size > 0 ? ['loop'] : [])];
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

  /** A setting fixed when the run starts reads the inputs and nothing else: no step has run then. */
  const checkInputSettings = (step: Step): void => {
    for (const { template } of step.inputSettings ?? []) {
      const others = template.references.filter((site) => site.root !== 'inputs');
      // What they name is beside the point: nothing but inputs exists when the value is fixed.
      if (others.length === 0) check(template, { visible: new RanSteps(), loops: new Map() });
      for (const site of others) {
        findings.push({
          code: 'SETTING_NOT_OVER_INPUTS',
          message: `this value is fixed when the run starts, before any step: its expression reads only \`inputs\`, not '${site.root}'`,
          pointer: site.pointer,
          offsetInValue: site.rootOffset,
          lengthInValue: site.root.length,
        });
      }
    }
  };

  const walk = (steps: Step[], outer: Scope): void => {
    const visible = new RanSteps(outer.visible);
    for (const step of steps) {
      checkInputSettings(step);
      const scope: Scope = { visible, loops: outer.loops };
      const readsItself = new Set(registry.get(step.kind).readsItself ?? []);
      for (const template of templatesOf(step, readsItself)) check(template, scope);
      for (const field of readsItself) check(step[field as keyof Step] as Template | undefined, scope, step.id);
      const children = registry.childStepsOf(step);
      if (children.loopVariable !== undefined) {
        reservedLoopName(step, children.loopVariable, children.loopVariableField ?? 'as');
        const inLoop: Scope = { visible, loops: new Map([...outer.loops, [children.loopVariable, step]]) };
        for (const sequence of children.sequences) walk(sequence, inLoop);
      } else {
        for (const sequence of children.sequences) walk(sequence, scope);
      }
      const afterStep = new RanSteps(visible);
      finishedWithin(registry, step, afterStep, false);
      walk(children.rescue, { visible: afterStep, loops: outer.loops });
      walk(children.always, { visible: afterStep, loops: outer.loops });
      finishedWithin(registry, step, visible);
    }
  };
  walk(playbook.steps, { visible: new RanSteps(), loops: new Map() });

  const everything = new RanSteps();
  for (const step of playbook.steps) finishedWithin(registry, step, everything);
  check(playbook.outputs, { visible: everything, loops: new Map() });
  // The lock is rendered before the run starts: no step has run.
  check(playbook.lock, { visible: new RanSteps(), loops: new Map() });
  return findings;
}
