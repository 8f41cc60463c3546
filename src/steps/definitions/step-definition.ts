/**
 * A step kind: what the loader validates and builds, what `fleetbook actions` and the language
 * reference show, and how the engine runs it. The engine looks a step's kind up in the
 * registry and calls its definition; it knows no kind by name. A step names its kind by the
 * key it carries (`call: ...`, `forEach: ...`).
 *
 * The loaded playbook's types come from the model (`src/model/`, a leaf): the loader builds
 * steps with these definitions, so the definitions never import the loader.
 */
import type { ExpressionContext, Template } from '../../expressions/index.js';
import type { Logger } from '../../logging/index.js';
import type { PlatformDescription } from '../../openapi/index.js';
import type { Playbook, Step } from '../../model/index.js';
import type { ErrorRecord, StepStatus } from '../../store/index.js';
import type { StepRuntime, LeafResult } from '../executors/types.js';
import type { JsonSchema } from './schema-parts.js';

/** A YAML playbook showing one use of a step kind; the tests load every example. */
export interface StepExample {
  description: string;
  /** A whole playbook, valid as written. */
  yaml: string;
}

/** What a kind's `normalise` builds its fields with: the loader's helpers, bound to one step. */
export interface NormaliseTools {
  /** The step's id (written, or generated). */
  id: string;
  /** The step as written (checked against the schema already). */
  data: Record<string, unknown>;
  /** The playbook file the step is written in. */
  file: string;
  /** JSON pointer of a field of the step. */
  at(field: string): string;
  /** The field compiled as a template (its expression errors reported at their place). */
  field(name: string): Template;
  /** Any value compiled as a template, reported at `pointer`. */
  template(value: unknown, pointer: string): Template;
  /** Milliseconds of a duration; undefined when absent (a refused one is reported). */
  ms(value: unknown, pointer: string): number | undefined;
  /** The steps of a field declared in `nested` as `steps`. */
  steps(field: string): Step[];
  /** The branches of a field declared in `nested` as `branches`. */
  branches(field: string): Step[][];
  /** The playbook `ref` names, loaded and its literal `with` checked; undefined when it has problems (reported). */
  usePlaybook(ref: string, given: unknown): Playbook | undefined;
  /** Reports a problem of a field's literal value (a code of `ProblemCode`), located at `pointer`. */
  problem(pointer: string, code: string, message: string): void;
}

/** The steps a step runs inside itself, for every traversal (the runner, the reference rules). */
export interface StepChildren {
  /** Lists run in order; parallel branches are several lists. */
  sequences: Step[][];
  /**
   * `shared`: the children run in the step's scope, readable by later steps (block, parallel);
   * `loop`: each run of them is an iteration of its own, invisible after the step (forEach),
   * with the loop variable `loopVariable` (written at `loopVariableField`).
   */
  scope: 'shared' | 'loop';
  loopVariable?: string;
  loopVariableField?: string;
}

/** A leaf step rendered: what `step.started` records, and the attempt to make. */
export interface PreparedLeaf {
  input?: unknown;
  /** `attachTo`: follow this operation instead of sending (reconciliation of a write). */
  attempt(runtime: StepRuntime, attachTo?: { location: string; body: unknown }): Promise<LeafResult>;
  /**
   * A platform write whose outcome may be unknown after a failure: the engine reconciles it
   * before sending anything again (`src/steps/reconcile/`). Its `input` is then `{ with, region }`.
   */
  reconcilable?: { operationId: string; wait: boolean };
  /**
   * A send that nothing outside can be asked about (an e-mail): on resume, the first attempt of
   * a step whose request the journal shows in flight is this instead, told what the journal
   * knows (`answered`: the other side took it; `unknown`: sent, no answer recorded) and whether
   * the operator confirmed sending again (`--confirm-unknown`).
   */
  resumeInFlight?(
    inFlight: { state: 'unknown' | 'answered' | 'operation'; body?: unknown },
    runtime: StepRuntime,
    confirmUnknown: boolean,
  ): Promise<LeafResult>;
}

/** What a leaf kind renders its step in. */
export interface LeafContext<S extends Step = Step> {
  step: S;
  path: string;
  /** The expression context as of now (steps that ran so far). */
  context(): ExpressionContext;
  /** The playbook the step is written in (its `defaults`). */
  playbook: Playbook;
}

export type Ending = 'succeeded' | 'failed' | 'interrupted';

/** How a step ended, as the engine records it. */
export interface StepOutcome {
  status: StepStatus;
  outputs?: unknown;
  /**
   * The outputs as the journal keeps them, when they differ from what expressions read: a loop
   * journals its items without their steps (each item's steps are journaled already, and resume
   * rebuilds them from those entries).
   */
  journalOutputs?: unknown;
  error?: ErrorRecord;
  rescued?: boolean;
  /** The step changed nothing outside the run (a read): see `LeafDefinition.journalsItsEffects`. Not journaled. */
  readOnly?: boolean;
}

/** An item of a loop run by `ContainerContext.runItem`. */
export interface ItemRun {
  status: StepStatus;
  /** `steps.<id>` of the item's steps. */
  steps: Record<string, unknown>;
}

/** What the engine offers a container kind to run its children with. */
export interface ContainerContext<S extends Step = Step> {
  step: S;
  path: string;
  /** Aborts on cancellation and on the step's own timeout. */
  signal: AbortSignal;
  context(): ExpressionContext;
  /** The step's logger, made on first use. */
  log(): Logger;
  /** Journals `step.started` (once) with the rendered input. */
  start(input?: unknown): Promise<void>;
  /** Runs steps in order in the step's scope; stops at the first failure not continued. */
  runSequence(steps: readonly Step[]): Promise<Ending>;
  /** Why a sequence that ended `failed` failed: the step that ended it and its message. */
  failureOf(steps: readonly Step[]): ErrorRecord;
  /**
   * Runs `steps` as item `index` of the loop (path `<path>[index]`, its own scope holding
   * `names`): journaled, summarised, replayed whole on resume when it had succeeded.
   */
  /** `label`: what a reader knows the item by (a system's name), journaled with its end for the UI's fleet grid. */
  runItem(index: number, steps: readonly Step[], names: Record<string, unknown>, label?: string): Promise<ItemRun>;
  /**
   * The step views of an ended item that expressions may still read (`steps.<loop>.outputs.items[n].steps.<id>`),
   * by step id, or `all`: the loop keeps only these, so a fleet of items does not stay in memory.
   */
  itemStepReads(): 'all' | ReadonlySet<string>;
  /** Reports loop items that never started in the summary. */
  itemsNotStarted(indexes: readonly number[]): void;
  /**
   * Why no new loop item may start now (the run's maintenance window closed, a freeze began),
   * and what the run does about it: `wait` for the next opening (the loop ends interrupted with
   * `WINDOW_CLOSED`, and once nothing is in flight the engine makes the run wait) or `fail`.
   * Undefined while new work may start. Asked before each item, on the run's clock.
   */
  newWorkRefusal(): { reason: string; onClose: 'wait' | 'fail'; opensAtMs: number | undefined } | undefined;

  /** Runs another playbook with given inputs (checked, defaults applied) in a scope chain of its own. */
  runPlaybook(
    playbook: Playbook,
    given: Record<string, unknown>,
    start: (inputs: Record<string, unknown>) => Promise<void>,
  ): Promise<{ ending: Ending; outputs: unknown }>;
}

/** What a kind's `outputType` types its step's outputs with; built by the loader's reference checker. */
export interface OutputTypeTools {
  description: PlatformDescription;
  /** The type of a template's value where it can be told (a literal, a plain path, text), else unknown (`{}`). */
  valueType(template: Template | undefined): JsonSchema;
  /** The `steps.<id>` records a list of steps leaves once it has run (its handlers included), as an object type. */
  stepRecords(steps: readonly Step[]): JsonSchema;
  /** The type of a playbook's `outputs`. */
  playbookOutputs(playbook: Playbook): JsonSchema;
}

interface DefinitionBase<S extends Step = Step> {
  /** The kind, and the key naming it in a step. */
  kind: string;
  description: string;
  /** JSON Schema of the kind's own fields (the kind key included), beside the common step fields. */
  fields: Record<string, JsonSchema>;
  /** Fields the kind requires besides its key. */
  required?: readonly string[];
  /** Fields holding nested step lists, for the loader's walk: `steps` (a list) or `branches` (list of `{ steps }`). */
  nested?: Readonly<Record<string, 'steps' | 'branches'>>;
  /**
   * Whether the step can change something outside Fleetbook. In a dry run the engine does not
   * run a step that can write: it is `simulated`, unless the kind `simulatesItself` (a `call`
   * of a read is performed; its executor decides by the operation).
   */
  canWrite: boolean;
  simulatesItself?: boolean;
  examples: readonly StepExample[];
  /** Builds the kind's own fields of the loaded step; undefined drops the step (its problems reported). */
  normalise(tools: NormaliseTools): Record<string, unknown> | undefined;
  /**
   * What the kind adds to its branch of the playbook schema for a platform description
   * (`properties`, `allOf`): `call` names every operation and checks `with` against its input.
   */
  schemaFor?(description: PlatformDescription): { properties?: Record<string, JsonSchema>; allOf?: JsonSchema[] };
  /** Fields whose expressions may read the step itself (`until` reads the latest answer). */
  readsItself?: readonly string[];
  /**
   * The type of `steps.<id>.outputs` as a JSON Schema, checked against every `${{ }}` path that
   * reads it; `{}` where nothing is known. Without a step: the kind's outputs in general, with
   * descriptions, for `fleetbook actions <kind>` and the language reference. A kind without
   * one has outputs of unknown type: every path through them is accepted.
   */
  outputType?(step: S | undefined, tools: OutputTypeTools): JsonSchema;
}

/** A kind that performs one attempt at a time; the engine adds `if`, retries, timeout, rescue, always. */
export interface LeafDefinition<S extends Step = Step> extends DefinitionBase<S> {
  /**
   * No effect outside the run and a synchronous attempt: its lines are at `debug`, its journal
   * entries buffered, and without retries it gets no timer.
   */
  quiet?: boolean;
  /**
   * Its executor journals (unbuffered) every effect outside the run before acting: its
   * `step.started` may then wait for that entry's commit, and a result marked `readOnly` ends
   * buffered too (a crash that loses them only repeats the step).
   */
  journalsItsEffects?: boolean;
  prepare(context: LeafContext<S>): Promise<PreparedLeaf>;
}

/** A kind that runs other steps. */
export interface ContainerDefinition<S extends Step = Step> extends DefinitionBase<S> {
  children(step: S): StepChildren;
  /** Its own `retry` runs it again as a whole while it fails (block); otherwise a `retry` is ignored with a warning. */
  retriedAsWhole?: boolean;
  run(context: ContainerContext<S>): Promise<StepOutcome>;
}

export type StepDefinition = LeafDefinition | ContainerDefinition;

export function isContainer(definition: StepDefinition): definition is ContainerDefinition {
  return 'run' in definition;
}

/** Types a definition by its step; the registry holds it as a `StepDefinition`. */
export function defineLeaf<S extends Step>(definition: LeafDefinition<S>): LeafDefinition {
  return definition as unknown as LeafDefinition;
}

export function defineContainer<S extends Step>(definition: ContainerDefinition<S>): ContainerDefinition {
  return definition as unknown as ContainerDefinition;
}

/** What a kind's outputs hold in general (no step to type them by), for `fleetbook actions <kind>` and the docs. */
export function kindOutputType(definition: StepDefinition, description: PlatformDescription): JsonSchema {
  const unknown: JsonSchema = {};
  return (
    definition.outputType?.(undefined, {
      description,
      valueType: () => unknown,
      stepRecords: () => ({ type: 'object' }),
      playbookOutputs: () => unknown,
    }) ?? unknown
  );
}
