import type { JsonSchema } from './schema-parts.js';

/** A YAML playbook showing one use of a step kind; the tests load every example. */
export interface StepExample {
  description: string;
  /** A whole playbook, valid as written. */
  yaml: string;
}

/**
 * A step kind as data: what the loader validates, what `fleetbook actions` and the language
 * reference show. A step names its kind by the key it carries (`call: ...`, `forEach: ...`).
 */
export interface StepDefinition {
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
   * Whether the step can change something outside Fleetbook (dry-run skips writes). For `call`
   * the operation decides; `http` always counts as a write.
   */
  canWrite: boolean;
  examples: readonly StepExample[];
}
