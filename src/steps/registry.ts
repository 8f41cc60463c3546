import { didYouMean } from '../errors/index.js';
import { FleetbookError, ExitCode } from '../errors/index.js';
import { builtinStepDefinitions } from './definitions/index.js';
import type { Step } from '../model/index.js';
import { isContainer, type StepChildren, type StepDefinition } from './definitions/step-definition.js';

/** A step kind asked for that the registry does not hold, or declared twice. */
export class StepRegistryError extends FleetbookError {
  constructor(message: string, code: 'UNKNOWN_STEP_KIND' | 'DUPLICATE_STEP_KIND') {
    super(message, { code, exitCode: ExitCode.usage });
    this.name = 'StepRegistryError';
  }
}

export interface StepRegistry {
  /** Kinds in declaration order. */
  readonly kinds: readonly string[];
  has(kind: string): boolean;
  /** Throws `StepRegistryError` (`UNKNOWN_STEP_KIND`) naming the known kinds. */
  get(kind: string): StepDefinition;
  list(): readonly StepDefinition[];
  /** The steps `step` runs inside itself, and its `rescue` and `always`: every traversal's one walk. */
  childStepsOf(step: Step): ChildSteps;
}

/** A step's children by role; see `StepChildren`. */
export interface ChildSteps extends StepChildren {
  rescue: Step[];
  always: Step[];
}

const LEAF_CHILDREN: StepChildren = { sequences: [], scope: 'shared' };

/**
 * The children of a step that has none, nor `rescue` or `always`: most steps. One frozen value
 * for all of them, since every walk over a playbook asks for each step's children (a 10,000-step
 * playbook's validation made some 60,000 of these objects).
 */
const NO_CHILDREN: ChildSteps = Object.freeze({
  sequences: Object.freeze([]) as unknown as Step[][],
  scope: 'shared',
  rescue: Object.freeze([]) as unknown as Step[],
  always: Object.freeze([]) as unknown as Step[],
});

/** A registry of step kinds; refuses two definitions of one kind. @default the built-in kinds */
export function createStepRegistry(definitions: readonly StepDefinition[] = builtinStepDefinitions): StepRegistry {
  const byKind = new Map<string, StepDefinition>();
  for (const definition of definitions) {
    if (byKind.has(definition.kind))
      throw new StepRegistryError(`step kind '${definition.kind}' is declared twice`, 'DUPLICATE_STEP_KIND');
    byKind.set(definition.kind, definition);
  }
  const kinds = [...byKind.keys()];
  const registry: StepRegistry = {
    kinds,
    has: (kind) => byKind.has(kind),
    get(kind) {
      const definition = byKind.get(kind);
      if (definition === undefined) {
        throw new StepRegistryError(
          `unknown step kind '${kind}'.${didYouMean(kind, kinds)} Known kinds: ${kinds.join(', ')}.`,
          'UNKNOWN_STEP_KIND',
        );
      }
      return definition;
    },
    list: () => [...byKind.values()],
    childStepsOf(step) {
      const definition = byKind.get(step.kind);
      const container = definition !== undefined && isContainer(definition);
      if (!container && step.rescue === undefined && step.always === undefined) return NO_CHILDREN;
      const own = container ? definition.children(step) : LEAF_CHILDREN;
      return { ...own, rescue: step.rescue ?? [], always: step.always ?? [] };
    },
  };
  return registry;
}

/** The steps of `kind` among `steps` and every step nested in them (rescue and always included). */
export function stepsOfKind(registry: StepRegistry, steps: readonly Step[], kind: string): Step[] {
  return steps.flatMap((step) => {
    const children = registry.childStepsOf(step);
    const nested = [...children.sequences, children.rescue, children.always].flatMap((list) =>
      stepsOfKind(registry, list, kind),
    );
    return step.kind === kind ? [step, ...nested] : nested;
  });
}
