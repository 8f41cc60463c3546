/**
 * What expressions see while a run goes on. A scope holds the results of the steps that ran
 * in it and its own names (a loop's variable and `loop`); a loop iteration is a scope over
 * the enclosing one, so its steps shadow outer steps of the same id while outer ones stay
 * readable. A sub-playbook (`uses`) starts a scope chain of its own.
 */
import { trackTaint, type ExpressionContext, type TaintTracker } from '../expressions/index.js';
import type { SecretRegistry } from '../logging/index.js';
import type { Playbook } from '../playbook/index.js';
import type { ErrorRecord, StepStatus } from '../store/index.js';

/**
 * The prefix of the environment variables expressions may read. The process's environment
 * holds whatever the shell or the CI job put there (tokens, cloud keys): `${{ env }}` in a
 * log step would print them all and journal them. Only names the operator chose to pass are
 * shown, as they are spelt (`env.FLEETBOOK_VAR_REGION`).
 */
export const ENV_PREFIX = 'FLEETBOOK_VAR_';

/** Names that say their value is a credential: such a value is redacted wherever it appears. */
const SECRET_NAME = /SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|APIKEY|API_KEY|(?:^|_)KEY(?:_|$)/i;

/**
 * What `env` shows to expressions: the `FLEETBOOK_VAR_*` variables of `env`. The value of
 * one whose name looks secret (`FLEETBOOK_VAR_DEPLOY_TOKEN`) is registered with `secrets`,
 * so logs, the journal, outputs and errors carry `[REDACTED]` instead.
 */
export function exposedEnvironment(
  env: Record<string, string | undefined>,
  secrets: SecretRegistry,
): Record<string, string> {
  const exposed: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || value === undefined) continue;
    exposed[name] = value;
    if (SECRET_NAME.test(name.slice(ENV_PREFIX.length))) secrets.add(value);
  }
  return exposed;
}

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
  /** Told of every value an expression computes from a secret. */
  taint?: TaintTracker | undefined;
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

  /** Copies the steps and names of this scope's ancestors, then its own, into `steps` and `names`. */
  private gather(steps: Record<string, StepView>, names: Record<string, unknown>): void {
    this.parent?.gather(steps, names);
    Object.assign(steps, this.steps);
    Object.assign(names, this.names);
  }

  /** The expression context as of now: inner steps and names over outer ones. */
  context(): ExpressionContext {
    // Asked for every step of every loop item: no array of the scope chain is made for it, and
    // the names go straight into the context (a spread of a names object into a literal was 7% of
    // a loop's CPU time in a profile).
    const steps: Record<string, StepView> = {};
    const context: Record<string, unknown> = {};
    this.gather(steps, context);
    // The context's own members over any loop variable of the same name, as before.
    context.inputs = this.root.inputs;
    context.steps = steps;
    context.run = this.root.run;
    context.env = this.root.env;
    return trackTaint(context as unknown as ExpressionContext, this.root.taint);
  }
}
