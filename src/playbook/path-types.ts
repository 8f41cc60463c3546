/**
 * The types of what a playbook's expressions read: `steps.<id>` (the kind's `outputType`),
 * `inputs` (their declarations), a loop variable (the items of its `forEach`), `loop`, `run`,
 * `env`. Built lazily, once per step, so validating costs little more than the walk itself.
 */
import type { PathSegment, ReferenceSite, Template } from '../expressions/index.js';
import type { PlatformDescription } from '../openapi/index.js';
import {
  closedObject,
  fieldOf,
  itemOf,
  stepRecordType,
  typeOfLiteral,
  UNKNOWN,
  type FieldLookup,
  type JsonSchema,
  type OutputTypeTools,
  type StepRegistry,
} from '../steps/index.js';
import type { Playbook, Step } from '../model/index.js';

/** Loop variables in scope at a place, by name, and the `forEach` that sets each. */
export type LoopScope = ReadonlyMap<string, Step>;

/** Where walking a path stopped on a field that cannot be there. */
export interface PathMiss {
  /** Index in the walked segments. */
  at: number;
  lookup: Extract<FieldLookup, { known: true }>;
  /** The type the field was read from. */
  parent: JsonSchema;
}

const LOOP_TYPE = closedObject({ index: { type: 'integer' }, first: { type: 'boolean' }, last: { type: 'boolean' } });
const RUN_TYPE = closedObject({
  id: { type: 'string' },
  playbook: { type: 'string' },
  dryRun: { type: 'boolean' },
  startedAt: { type: 'string' },
  outputsDir: { type: 'string' },
});
const ENV_TYPE: JsonSchema = { type: 'object', additionalProperties: { type: 'string' } };

/** Walks `segments` from `type`: the type read, or where a field cannot exist. */
export function walkPath(type: JsonSchema, segments: readonly PathSegment[]): { type: JsonSchema } | PathMiss {
  let current = type;
  for (const [index, segment] of segments.entries()) {
    const lookup = fieldOf(current, segment.name);
    if (!lookup.found) {
      if (lookup.known) return { at: index, lookup, parent: current };
      return { type: UNKNOWN };
    }
    current = segment.filter === 'index' ? itemOf(lookup.type) : lookup.type;
  }
  return { type: current };
}

export function isMiss(walked: { type: JsonSchema } | PathMiss): walked is PathMiss {
  return 'lookup' in walked;
}

const playbookTypes = new WeakMap<Playbook, PathTypes>();

/** The types of one playbook's steps and inputs. */
export class PathTypes {
  private readonly records = new Map<string, JsonSchema>();
  private readonly typing = new Set<string>();
  readonly byId = new Map<string, Step>();
  /** The loop variables in scope at each step (its own `as` excluded). */
  readonly loopsAt = new Map<Step, LoopScope>();
  private readonly inputsType: JsonSchema;

  constructor(
    private readonly playbook: Playbook,
    private readonly registry: StepRegistry,
    private readonly description: PlatformDescription,
  ) {
    const collect = (steps: readonly Step[], loops: LoopScope): void => {
      for (const step of steps) {
        if (!this.byId.has(step.id)) this.byId.set(step.id, step);
        this.loopsAt.set(step, loops);
        const children = registry.childStepsOf(step);
        const inner = children.loopVariable === undefined ? loops : new Map([...loops, [children.loopVariable, step]]);
        for (const sequence of children.sequences) collect(sequence, inner);
        collect(children.rescue, loops);
        collect(children.always, loops);
      }
    };
    collect(playbook.steps, new Map());
    this.inputsType = closedObject(
      Object.fromEntries(Object.entries(playbook.inputs).map(([name, spec]) => [name, spec.schema])),
    );
  }

  /** The types of another playbook (one a `uses` runs), made once. */
  static of(playbook: Playbook, registry: StepRegistry, description: PlatformDescription): PathTypes {
    let types = playbookTypes.get(playbook);
    if (types === undefined) playbookTypes.set(playbook, (types = new PathTypes(playbook, registry, description)));
    return types;
  }

  /** `steps.<id>`: status, outputs, error; unknown for an id of no step. */
  record(id: string): JsonSchema {
    const known = this.records.get(id);
    if (known !== undefined) return known;
    const step = this.byId.get(id);
    // A step whose type needs its own (a mistake reported elsewhere) is unknown, not a loop.
    if (step === undefined || this.typing.has(id)) return UNKNOWN;
    this.typing.add(id);
    const definition = this.registry.has(step.kind) ? this.registry.get(step.kind) : undefined;
    const outputs = definition?.outputType?.(step, this.toolsAt(this.loopsAt.get(step) ?? new Map())) ?? UNKNOWN;
    this.typing.delete(id);
    const record = stepRecordType(outputs);
    this.records.set(id, record);
    return record;
  }

  /** The type of a top-level name read with `loops` in scope; undefined for a name of nothing. */
  root(name: string, loops: LoopScope): JsonSchema | undefined {
    const loop = loops.get(name);
    if (loop !== undefined) return this.loopVariable(loop);
    switch (name) {
      case 'inputs':
        return this.inputsType;
      case 'loop':
        return loops.size > 0 ? LOOP_TYPE : undefined;
      case 'run':
        return RUN_TYPE;
      case 'env':
        return ENV_TYPE;
      default:
        return undefined;
    }
  }

  /** The type of what a reference reads (no error: a mistake in it is the checker's to report). */
  typeOfSite(site: ReferenceSite, loops: LoopScope): JsonSchema {
    const [first, ...rest] = site.path;
    if (site.root === 'steps' && !loops.has('steps')) {
      if (first === undefined) return UNKNOWN;
      const walked = walkPath(this.record(first.name), rest);
      return isMiss(walked) ? UNKNOWN : walked.type;
    }
    const root = this.root(site.root, loops);
    if (root === undefined) return UNKNOWN;
    const walked = walkPath(root, site.path);
    return isMiss(walked) ? UNKNOWN : walked.type;
  }

  /** The `forEach` item's type. */
  private loopVariable(loop: Step): JsonSchema {
    const items = (loop as Step & { items?: Template }).items;
    return itemOf(this.valueType(items, this.loopsAt.get(loop) ?? new Map()));
  }

  /** The type of a template's value: literals as written, a value that is one plain path its type, text a string. */
  valueType(template: Template | undefined, loops: LoopScope): JsonSchema {
    if (template === undefined) return UNKNOWN;
    if (template.isStatic) return typeOfLiteral(template.source);
    const sites = new Map<string, ReferenceSite[]>();
    for (const site of template.references) sites.set(site.pointer, [...(sites.get(site.pointer) ?? []), site]);
    const typeAt = (value: unknown, pointer: string): JsonSchema => {
      if (typeof value === 'string') {
        if (!value.includes('${{')) return { type: 'string' };
        const trimmed = value.trim();
        const single = trimmed.startsWith('${{') && trimmed.endsWith('}}') && trimmed.indexOf('${{', 3) === -1;
        if (!single) return { type: 'string' };
        const [site, other] = sites.get(pointer) ?? [];
        return site !== undefined && other === undefined && site.entire ? this.typeOfSite(site, loops) : UNKNOWN;
      }
      if (Array.isArray(value)) {
        const [first] = value;
        return { type: 'array', items: first === undefined ? UNKNOWN : typeAt(first, `${pointer}/0`) };
      }
      if (typeof value === 'object' && value !== null)
        return closedObject(
          Object.fromEntries(
            Object.entries(value).map(([key, item]) => [
              key,
              typeAt(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`),
            ]),
          ),
        );
      return typeOfLiteral(value);
    };
    return typeAt(template.source, template.pointer);
  }

  /** The tools a kind's `outputType` types its step with, in the step's scope. */
  private toolsAt(loops: LoopScope): OutputTypeTools {
    return {
      description: this.description,
      valueType: (template) => this.valueType(template, loops),
      stepRecords: (steps) => {
        const records: Record<string, JsonSchema> = {};
        const add = (step: Step): void => {
          records[step.id] = this.record(step.id);
          const children = this.registry.childStepsOf(step);
          const shared = children.scope === 'shared' ? children.sequences.flat() : [];
          for (const child of [...shared, ...children.rescue, ...children.always]) add(child);
        };
        for (const step of steps) add(step);
        return closedObject(records);
      },
      playbookOutputs: (used) =>
        used === this.playbook
          ? UNKNOWN
          : PathTypes.of(used, this.registry, this.description).valueType(used.outputs, new Map()),
    };
  }
}
