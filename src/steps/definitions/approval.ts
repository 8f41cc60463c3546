import type { StepBase, Template } from '../../model/index.js';
import type { ApprovalDecision } from '../../store/index.js';
import { StepError, StepFailureKind } from '../executors/step-error.js';
import type { StepRuntime, LeafResult } from '../executors/types.js';
import { duration, inputDeclaration, inputNames } from './schema-parts.js';
import { defineLeaf, type NormaliseTools } from './step-definition.js';
import { closedObject, described } from './value-types.js';

export interface ApprovalStep extends StepBase {
  kind: 'approval';
  message: Template;
  /** Who may decide by name (OS users, token names, signed-in users); absent with `approverGroups`: anyone. */
  approvers?: string[];
  /** Who may decide by group (a signed-in user's groups at the provider). */
  approverGroups?: string[];
  /** Distinct approvals the gate needs before the run goes on. @default 1 */
  required?: number;
  /** The person who started or triggered the run may not decide. */
  notRequester?: boolean;
  /** How long the gate waits before `onTimeout` applies. */
  timeoutMs?: number;
  onTimeout: 'fail' | 'continue' | 'skip';
  /** The form the approver fills in: input declarations, as the playbook's `inputs` are written. */
  inputs?: Record<string, Record<string, unknown>>;
}

/** What `step.started` records of a gate: what the approver is asked. */
interface GateInput extends GatePolicy {
  message: unknown;
  timeoutMs?: number;
  onTimeout: ApprovalStep['onTimeout'];
  inputs?: Record<string, Record<string, unknown>>;
}

/** Who may decide the gate and how many must approve: what the wait records for the deciders. */
type GatePolicy = Pick<ApprovalStep, 'approvers' | 'approverGroups' | 'required' | 'notRequester'>;

/** The gate's policy fields that are set, to spread into the gate's input and its wait. */
function policyOf(step: GatePolicy): GatePolicy {
  return {
    ...(step.approvers ? { approvers: step.approvers } : {}),
    ...(step.approverGroups ? { approverGroups: step.approverGroups } : {}),
    ...(step.required === undefined || step.required === 1 ? {} : { required: step.required }),
    ...(step.notRequester ? { notRequester: true } : {}),
  };
}

/** One approval as the `approvals` output lists it. */
function withoutEarlier({ approvals: _approvals, ...decision }: ApprovalDecision): ApprovalDecision {
  return decision;
}

/** The form's defaults: what a gate passed without an approver's values (dry run, `onTimeout: continue`) gives. */
function defaultsOf(inputs: GateInput['inputs']): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(inputs ?? {})
      .filter(([, declaration]) => Object.hasOwn(declaration, 'default'))
      .map(([name, declaration]) => [name, declaration.default]),
  );
}

/**
 * One attempt at the gate: the decision journaled for its path decides it; without one the run
 * stops to wait (`runtime.waits.waitFor`), and this step runs again when the wait ends.
 */
async function passGate(gate: GateInput, runtime: StepRuntime): Promise<LeafResult> {
  if (runtime.dryRun) {
    runtime.logger.info({ event: 'approval.dryRun' }, `dry run: approval gate ${runtime.path} passed as approved`);
    return { outputs: { approved: true, dryRun: true, approvedBy: 'dry-run', inputs: defaultsOf(gate.inputs) } };
  }
  const decision = runtime.waits.decisionOf(runtime.path);
  if (!decision) {
    const message = typeof gate.message === 'string' ? gate.message : JSON.stringify(gate.message);
    return runtime.waits.waitFor(runtime.path, {
      reason: 'approval',
      message,
      onTimeout: gate.onTimeout,
      ...policyOf(gate),
      ...(gate.timeoutMs === undefined ? {} : { timeoutMs: gate.timeoutMs }),
      ...(gate.inputs ? { inputs: gate.inputs } : {}),
    });
  }
  const facts = {
    at: decision.at,
    ...(decision.comment === undefined ? {} : { comment: decision.comment }),
  };
  switch (decision.decision) {
    case 'approved':
      return {
        outputs: {
          approved: true,
          approvedBy: decision.by,
          ...facts,
          ...(decision.approvals ? { approvals: [...decision.approvals, withoutEarlier(decision)] } : {}),
          inputs: decision.inputs ?? defaultsOf(gate.inputs),
        },
      };
    case 'denied':
      throw new StepError(
        `approval ${runtime.path} was denied by ${decision.by}${decision.comment ? `: ${decision.comment}` : ''}`,
        {
          kind: StepFailureKind.failed,
          code: 'APPROVAL_DENIED',
          details: { deniedBy: decision.by, ...facts },
        },
      );
    case 'timedOut': {
      if (gate.onTimeout === 'fail')
        throw new StepError(`approval ${runtime.path} was not decided before its timeout (onTimeout: fail)`, {
          kind: StepFailureKind.timeout,
          code: 'APPROVAL_TIMED_OUT',
          details: facts,
        });
      const outputs = { approved: false, timedOut: true, at: decision.at, inputs: defaultsOf(gate.inputs) };
      runtime.logger.warn(
        { event: 'approval.timedOut', onTimeout: gate.onTimeout },
        `approval ${runtime.path} timed out; ${gate.onTimeout === 'skip' ? 'the step is skipped' : 'the run goes on'}`,
      );
      return gate.onTimeout === 'skip' ? { status: 'skipped', outputs } : { outputs };
    }
  }
}

/** A list of names, as `approvers` and its `groups` and `users` are written. */
const names = { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } };

/** `approvers` as written (a list of users, or groups and users) read into the step's policy, its impossible counts reported. */
function normalisePolicy(tools: NormaliseTools, gate: Record<string, unknown>): GatePolicy {
  const written = gate.approvers;
  const listed = Array.isArray(written) ? { users: written as string[] } : (written as GroupsAndUsers | undefined);
  const required = typeof gate.required === 'number' ? gate.required : undefined;
  const policy = policyOf({
    ...(listed?.users ? { approvers: [...new Set(listed.users)] } : {}),
    ...(listed?.groups ? { approverGroups: [...new Set(listed.groups)] } : {}),
    ...(required === undefined ? {} : { required }),
    ...(gate.notRequester === true ? { notRequester: true } : {}),
  });
  // Only named users can be counted: a group may hold any number of people.
  if (required !== undefined && policy.approvers && !policy.approverGroups && required > policy.approvers.length)
    tools.problem(
      `${tools.at('approval')}/required`,
      'INVALID_APPROVAL_POLICY',
      `required: ${required} distinct approvals, but approvers names only ${policy.approvers.length} (${policy.approvers.join(', ')}): the gate could never pass`,
    );
  return policy;
}

interface GroupsAndUsers {
  groups?: string[];
  users?: string[];
}

export const approvalStep = defineLeaf<ApprovalStep>({
  kind: 'approval',
  description:
    'Waits for a person: the run ends `waiting` (no process kept) until `fleetbook approve` or `deny`, or its timeout. ' +
    'Outputs: `approved`, `approvedBy`, `at`, `comment`, `inputs` (the form the approver filled in), `timedOut`.',
  fields: {
    approval: {
      type: 'object',
      additionalProperties: false,
      required: ['message'],
      description: 'The gate: what the approver is asked, who may decide, how long it waits.',
      properties: {
        message: { type: 'string', description: 'What the approver is asked; may hold `${{ }}`.' },
        approvers: {
          oneOf: [
            names,
            {
              type: 'object',
              additionalProperties: false,
              minProperties: 1,
              properties: {
                groups: { ...names, description: "Groups whose members may decide (a signed-in user's groups)." },
                users: {
                  ...names,
                  description: 'Users who may decide (OS user names, API token names, signed-in users).',
                },
              },
            },
          ],
          description: 'Who may decide: a list of user names, or `{ groups: [...], users: [...] }`. Default: anyone.',
        },
        required: {
          type: 'integer',
          minimum: 1,
          description: 'How many distinct approvers must approve before the run goes on. Default 1.',
        },
        notRequester: {
          type: 'boolean',
          description: 'When true, the person who started or triggered the run may not decide. Default false.',
        },
        timeout: {
          ...duration,
          description: 'How long the gate waits before `onTimeout` applies. Default: no timeout.',
        },
        onTimeout: {
          enum: ['fail', 'continue', 'skip'],
          description:
            'After the timeout: `fail` the step, `continue` (outputs `timedOut: true`), or `skip` the step. Default fail.',
        },
        inputs: {
          type: 'object',
          propertyNames: inputNames,
          additionalProperties: inputDeclaration,
          description: 'A form the approver fills in (`-i name=value`), declared as playbook inputs are.',
        },
      },
    },
  },
  canWrite: false,
  normalise: (tools) => {
    const gate = tools.data.approval as Record<string, unknown>;
    const timeoutMs = tools.ms(gate.timeout, `${tools.at('approval')}/timeout`);
    return {
      message: tools.template(gate.message, `${tools.at('approval')}/message`),
      ...normalisePolicy(tools, gate),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      onTimeout: (gate.onTimeout as ApprovalStep['onTimeout'] | undefined) ?? 'fail',
      ...(gate.inputs === undefined ? {} : { inputs: gate.inputs as ApprovalStep['inputs'] }),
    };
  },
  outputType: (step) =>
    closedObject({
      approved: described(
        { type: 'boolean' },
        'True when approved; false when it timed out (`onTimeout: continue` or `skip`).',
      ),
      approvedBy: described({ type: 'string' }, 'Who approved (with `required` above 1: who gave the last approval).'),
      approvals: described(
        { type: 'array', items: { type: 'object' } },
        'With `required` above 1: each approval (`by`, `at`, `comment`, `inputs`), in order.',
      ),
      at: described({ type: 'string' }, 'When it was decided (ISO 8601).'),
      comment: described({ type: 'string' }, "The approver's comment, if any."),
      timedOut: described({ type: 'boolean' }, 'Present, true, when no decision came before the timeout.'),
      dryRun: described({ type: 'boolean' }, 'Present, true, in a dry run (passed as approved).'),
      inputs: described(
        step === undefined
          ? { type: 'object' }
          : closedObject(
              Object.fromEntries(
                Object.entries(step.inputs ?? {}).map(([name, { secret: _secret, ...declaration }]) => [
                  name,
                  declaration,
                ]),
              ),
            ),
        'The form the approver filled in (its defaults when nobody did), by name.',
      ),
    }),
  async prepare({ step, context }) {
    const gate: GateInput = {
      message: await step.message.evaluate(context()),
      onTimeout: step.onTimeout,
      ...policyOf(step),
      ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
      ...(step.inputs ? { inputs: step.inputs } : {}),
    };
    return { input: gate, attempt: (runtime) => passGate(gate, runtime) };
  },
  examples: [
    {
      description: 'Let a person look at the canary before the rest of the fleet.',
      yaml: `name: approval-example
steps:
  - id: canaryLooksGood
    approval:
      message: The canary is updated; approve to update the rest of the fleet.
      approvers: [alice, bob]
      timeout: 4h
      onTimeout: fail
      inputs:
        batchSize: { type: integer, minimum: 1, default: 5 }
  - log: "approved by \${{ steps.canaryLooksGood.outputs.approvedBy }}, batches of \${{ steps.canaryLooksGood.outputs.inputs.batchSize }}"
`,
    },
  ],
});
