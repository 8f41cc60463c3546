/**
 * What expressions see while a run goes on. A scope holds the results of the steps that ran
 * in it and its own names (a loop's variable and `loop`); a loop iteration is a scope over
 * the enclosing one, so its steps shadow outer steps of the same id while outer ones stay
 * readable. A sub-playbook (`uses`) starts a scope chain of its own.
 */
import type { ExpressionContext } from '../expressions/index.js';
import type { Playbook } from '../playbook/types.js';
import type { ErrorRecord, StepStatus } from '../store/types.js';

/** `steps.<id>` as expressions read it. */
export interface StepView {
  status: StepStatus;
  outputs?: unknown;
  error?: ErrorRecord;
}

/** What every scope of one playbook execution shares. */
export interface ScopeRoot {
  playbook: Playbook;
  inputs: Record<string, unknown>;
  run: ExpressionContext['run'];
  env: Record<string, string | undefined>;
}

export class Scope {
  readonly steps: Record<string, StepView> = {};

  constructor(
    readonly root: ScopeRoot,
    private readonly parent?: Scope,
    private readonly names: Record<string, unknown> = {},
  ) {}

  /** A scope for one loop iteration (or any nested set of names). */
  child(names: Record<string, unknown>): Scope {
    return new Scope(this.root, this, names);
  }

  /** This scope and its ancestors, outermost first. */
  private chain(): Scope[] {
    return [...(this.parent ? this.parent.chain() : []), this];
  }

  /** The expression context as of now: inner steps and names over outer ones. */
  context(): ExpressionContext {
    const chain = this.chain();
    const steps: Record<string, StepView> = {};
    const names: Record<string, unknown> = {};
    for (const scope of chain) {
      Object.assign(steps, scope.steps);
      Object.assign(names, scope.names);
    }
    return { ...names, inputs: this.root.inputs, steps, run: this.root.run, env: this.root.env };
  }
}
