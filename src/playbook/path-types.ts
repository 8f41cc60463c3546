/**
 * The types of what a playbook's expressions read: `steps.<id>` (the kind's `outputType`),
 * `inputs` (their declarations), a loop variable (the items of its `forEach`), `loop`, `run`,
 * `env`. Built lazily, once per step, so validating costs little more than the walk itself.
 */
import type { Template } from '../expressions/index.js';
import type { PlatformDescription } from '../openapi/index.js';
import {
  closedObject,
  itemOf,
  stepRecordType,
  UNKNOWN,
  type JsonSchema,
  type OutputTypeTools,
  type StepRegistry,
} from '../steps/index.js';
import { inferTemplateType, type InferScope } from './infer/index.js';
import type { Playbook, Step } from '../model/index.js';

/** Loop variables in scope at a place, by name, and the `forEach` that sets each. */
export type LoopScope = ReadonlyMap<string, Step>;

const LOOP_TYPE = closedObject({ index: { type: 'integer' }, first: { type: 'boolean' }, last: { type: 'boolean' } });
const RUN_TYPE = closedObject({
  id: { type: 'string' },
  playbook: { type: 'string' },
  dryRun: { type: 'boolean' },
  startedAt: { type: 'string' },
  outputsDir: { type: 'string' },
});
const ENV_TYPE: JsonSchema = { type: 'object', additionalProperties: { type: 'string' } };

const playbookTypes = new WeakMap<Playbook, PathTypes>();

/** The types of one playbook's steps and inputs. */
export class PathTypes {
  private readonly records = new Map<string, JsonSchema>();
  private readonly typing = new Set<string>();
  readonly byId = new Map<string, Step>();
  /** The loop variables in scope at each step (its own `as` excluded). */
  readonly loopsAt = new Map<Step, LoopScope>();

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

  /** The type of a top-level name besides `steps` and `inputs` read with `loops` in scope; undefined for a name of nothing. */
  root(name: string, loops: LoopScope): JsonSchema | undefined {
    const loop = loops.get(name);
    if (loop !== undefined) return this.loopVariable(loop);
    switch (name) {
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

  /**
   * What type inference reads at a place: the names in scope there, `steps.<id>` of the steps
   * `visible` there (every step, for typing), `inputs.<name>` of the declared inputs. A step or an
   * input of nothing is unknown: the reference rules report it.
   */
  scopeAt(loops: LoopScope, visible: (id: string) => boolean = () => true): InferScope {
    const { inputs } = this.playbook;
    return {
      root: (name) => {
        if (loops.has(name)) return this.root(name, loops);
        if (name === 'steps')
          return { member: (id) => (this.byId.has(id) && visible(id) ? this.record(id) : undefined) };
        if (name === 'inputs')
          return { member: (input) => (Object.hasOwn(inputs, input) ? inputs[input]?.schema : undefined) };
        return this.root(name, loops);
      },
      stepIds: () => [...this.byId.keys()].filter(visible),
    };
  }

  /** The `forEach` item's type. */
  private loopVariable(loop: Step): JsonSchema {
    const items = (loop as Step & { items?: Template }).items;
    return itemOf(this.valueType(items, this.loopsAt.get(loop) ?? new Map()));
  }

  /** The type of a template's value where it can be told (see `inferTemplateType`), unknown elsewhere. */
  valueType(template: Template | undefined, loops: LoopScope): JsonSchema {
    return inferTemplateType(template, this.scopeAt(loops));
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
