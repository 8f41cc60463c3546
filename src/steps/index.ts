/** Step kinds: the registry the loader and the engine look kinds up in, and how to define one. */
export { createStepRegistry, StepRegistryError, type ChildSteps, type StepRegistry } from './registry.js';
export { builtinStepDefinitions } from './definitions/index.js';
export {
  defineContainer,
  defineLeaf,
  isContainer,
  type ContainerContext,
  type ContainerDefinition,
  type Ending,
  type ItemRun,
  type LeafContext,
  type LeafDefinition,
  type NormaliseTools,
  type PreparedLeaf,
  type StepChildren,
  type StepDefinition,
  type StepExample,
  type StepOutcome,
} from './definitions/step-definition.js';
export { anyTemplate, duration, orExpression, stepList, STEP_ID_PATTERN, type JsonSchema } from './definitions/schema-parts.js';
export { StepError, StepFailureKind, isStepError } from './executors/step-error.js';
export type { ExecutorRuntime, LeafResult } from './executors/types.js';
export { StepErrorCode } from './error-codes.js';
