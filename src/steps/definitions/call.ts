import {
  inputSchemaOf,
  type AsyncFlavour,
  type OperationDescriptor,
  type PlatformDescription,
} from '../../openapi/index.js';
import { closedObject, described, fieldOf, httpAnswerType, itemOf } from './value-types.js';
import { anyTemplate, duration, orExpression, type JsonSchema } from './schema-parts.js';
import type { RetryPolicy, StepBase, Template, WaitOptions } from '../../model/index.js';
import { executeCall, type CallOutputs } from '../executors/call.js';
import { defineLeaf, type LeafContext, type NormaliseTools, type PreparedLeaf } from './step-definition.js';

export interface CallStep extends StepBase {
  kind: 'call';
  operationId: string;
  /** Path and query parameters by name, plus `body`. */
  with: Template;
  region?: Template;
  /** Follow a 202 to its end. */
  wait?: WaitOptions;
  /** Repeat the call until this holds (condition polling). */
  until?: Template;
  poll?: { intervalMs: number; timeoutMs: number };
  paginate?: 'all';
  /** Stream the response body to this file. */
  saveTo?: Template;
}

/**
 * Whether the step's own retries repeat the transient failures the client would (network
 * errors, 408, 429, 5xx), so the client's are turned off and the two do not multiply. Only
 * `transient` and `any` do: a list of statuses covers no dropped connection, and `on` without
 * them (e.g. `[operationFailed]`) would leave a 429 or a 503 retried by neither.
 */
export function retriesTransient(policy: RetryPolicy): boolean {
  return policy.maxAttempts > 1 && policy.on.some((condition) => condition === 'transient' || condition === 'any');
}

function normaliseCall({ data, at, ms, field, template }: NormaliseTools): Record<string, unknown> {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const poll = isObject(data.poll)
    ? {
        intervalMs: ms(data.poll.interval, `${at('poll')}/interval`) ?? 0,
        timeoutMs: ms(data.poll.timeout, `${at('poll')}/timeout`) ?? 0,
      }
    : undefined;
  const waitMs = (name: string): Record<string, number> => {
    const value = isObject(data.wait) ? ms(data.wait[name], `${at('wait')}/${name}`) : undefined;
    return value === undefined ? {} : { [`${name}Ms`]: value };
  };
  return {
    operationId: String(data.call),
    with: template(data.with ?? {}, at('with')),
    ...(data.region === undefined ? {} : { region: field('region') }),
    ...(data.wait === true || isObject(data.wait)
      ? { wait: { ...waitMs('timeout'), ...waitMs('minPoll'), ...waitMs('maxPoll') } }
      : {}),
    ...(data.until === undefined ? {} : { until: field('until') }),
    ...(poll === undefined ? {} : { poll }),
    ...(data.paginate === 'all' ? { paginate: 'all' as const } : {}),
    ...(data.saveTo === undefined ? {} : { saveTo: field('saveTo') }),
  };
}

async function prepareCall({ step, context, playbook }: LeafContext<CallStep>): Promise<PreparedLeaf> {
  const input = ((await step.with.evaluate(context())) ?? {}) as Record<string, unknown>;
  const region = step.region
    ? ((await step.region.evaluate(context())) as string | undefined)
    : playbook.defaults.region;
  // A path or `{ path, sumColumns }`: the call executor checks which.
  const saveTo = step.saveTo ? await step.saveTo.evaluate(context()) : undefined;
  const wait = step.wait ? { ...playbook.defaults.wait, ...step.wait } : undefined;
  const until = step.until;
  return {
    input: { operationId: step.operationId, with: input, ...(region === undefined ? {} : { region }) },
    reconcilable: { operationId: step.operationId, wait: wait !== undefined },
    attempt: (runtime, attachTo) =>
      executeCall(
        {
          attachTo,
          operationId: step.operationId,
          input,
          region,
          wait,
          poll: step.poll,
          paginate: step.paginate,
          saveTo,
          clientRetries: !retriesTransient(step.retry),
          until:
            until &&
            (async (outputs: CallOutputs) => {
              // The condition reads the answer as `steps.<id>.outputs`, like any later step.
              const current = context();
              return Boolean(
                await until.evaluate({
                  ...current,
                  steps: { ...current.steps, [step.id]: { status: 'running', outputs } },
                }),
              );
            }),
        },
        runtime,
      ),
  };
}

/** The record of an async operation of each flavour, in `components.schemas`. */
const OPERATION_RECORD: Record<AsyncFlavour, string> = {
  dataServices: 'DataServicesAsyncOperation',
  devices: 'DevicesAsyncOperation',
  subscriptions: 'SubscriptionsAsyncOperation',
  reporting: 'ReportingAsyncOperation',
};

/** What a successful answer's body is: one of the 2xx response schemas. */
function successBodyType(op: OperationDescriptor): JsonSchema {
  const schemas = Object.entries(op.responses)
    .filter(([status]) => /^2\d\d$/.test(status))
    .map(([, response]) => response.schema);
  if (schemas.some((schema) => schema === undefined) || schemas.length === 0) return {};
  return schemas.length === 1 ? (schemas[0] as JsonSchema) : { anyOf: schemas };
}

/** How a call step reads its operation's answer: the options that change `outputs`. */
export interface CallReading {
  wait: boolean;
  paginate: boolean;
  saveTo: boolean;
}

/** `steps.<id>.outputs` of a call of `op`: the answer (gathered pages, or the download), and the followed operation. */
export function callAnswerType(
  op: OperationDescriptor,
  description: PlatformDescription,
  reading: CallReading,
): JsonSchema {
  const answer = httpAnswerType(
    described(
      reading.saveTo
        ? DOWNLOAD_TYPE
        : reading.paginate
          ? closedObject({
              items: { type: 'array', items: listItemType(successBodyType(op)) },
              count: { type: 'integer' },
              total: { type: 'integer' },
            })
          : successBodyType(op),
      reading.saveTo
        ? 'The download (`saveTo`).'
        : reading.paginate
          ? 'Every page gathered (`paginate: all`).'
          : `The answer, HTTP ${op.successStatus}.`,
    ),
    op.isWrite,
  );
  const record = op.async === undefined ? undefined : description.schemas[OPERATION_RECORD[op.async]];
  if (!reading.wait || record === undefined) return answer;
  const properties = answer.properties as Record<string, JsonSchema>;
  return closedObject({
    ...properties,
    operation: described(record, 'The async operation as it ended (with `wait`).'),
  });
}

/** `steps.<id>.outputs` of a call step; without a step, what any call's outputs hold. */
export function callOutputType(step: CallStep | undefined, description: PlatformDescription): JsonSchema {
  const op = step === undefined ? undefined : description.byId.get(step.operationId);
  if (step === undefined || op === undefined) {
    return closedObject({
      ...(httpAnswerType(
        described(
          {},
          "The operation's success response (`fleetbook actions <operation>`); with `paginate: all` `{ items, count, total }`; " +
            'with `saveTo` the download: `{ bytesWritten, lines, filename, path, contentType, rows, sums, nonNumeric }`.',
        ),
        true,
      ).properties as Record<string, JsonSchema>),
      operation: described({}, 'With `wait` on an async operation: its record as it ended.'),
    });
  }
  return callAnswerType(op, description, {
    wait: step.wait !== undefined,
    paginate: step.paginate === 'all',
    saveTo: step.saveTo !== undefined,
  });
}

/** An item of a list operation's answer: the envelope's `items`, or the bare array's elements. */
function listItemType(body: JsonSchema): JsonSchema {
  const lookup = body.type === 'array' ? { found: true as const, type: body } : fieldOf(body, 'items');
  return lookup.found ? itemOf(lookup.type) : {};
}

const DOWNLOAD_TYPE: JsonSchema = closedObject({
  bytesWritten: { type: 'integer' },
  lines: { type: 'integer' },
  filename: { type: 'string' },
  path: { type: 'string' },
  contentType: { type: 'string' },
  rows: { type: 'integer' },
  sums: { type: 'object', additionalProperties: { type: 'number' } },
  nonNumeric: { type: 'object', additionalProperties: { type: 'integer' } },
});

/** The kind's own fields, as the playbook schema describes them. */
const callFields: Record<string, JsonSchema> = {
  call: {
    type: 'string',
    description: 'Operation id, e.g. `privateCloud.runSoftwarePrechecks` (see `fleetbook actions`).',
  },
  with: { ...orExpression({ type: 'object' }), description: 'Path and query parameters by name, plus `body`.' },
  region: {
    ...anyTemplate,
    description: "Region of a regional operation. Default: the playbook's `defaults.region`, then the connection's.",
  },
  wait: {
    description:
      'Follow a 202 to its end; `true` or `{ timeout, minPoll, maxPoll }`. The step fails when the operation fails.',
    anyOf: [
      { type: 'boolean' },
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          timeout: {
            ...duration,
            description: "Deadline of the operation. Default: the operation's own `timeoutMinutes`.",
          },
          minPoll: { ...duration, description: 'Shortest interval between polls, whatever the server suggests.' },
          maxPoll: { ...duration, description: 'Longest interval between polls.' },
        },
      },
    ],
  },
  until: {
    ...anyTemplate,
    description: 'Repeat the call until this holds; `steps.<this id>` is the latest answer. Needs `poll`.',
  },
  poll: {
    type: 'object',
    additionalProperties: false,
    required: ['interval', 'timeout'],
    properties: {
      interval: { ...duration, description: 'Time between calls.' },
      timeout: { ...duration, description: 'Give up (fail) after this.' },
    },
  },
  paginate: { const: 'all', description: 'Gather every page of a list into `outputs.body.items`.' },
  saveTo: {
    description:
      'Stream the response body to this file (downloads): a path, or `{ path, sumColumns: [column, ...] }` to also count ' +
      "the CSV's rows and sum those header columns as it streams (`outputs.body.rows`, `outputs.body.sums.<column>`).",
    anyOf: [
      { type: 'string' },
      {
        type: 'object',
        additionalProperties: false,
        required: ['path'],
        properties: {
          path: { type: 'string', description: 'The file written (a folder receives the name the server gives).' },
          sumColumns: {
            ...orExpression({ type: 'array', items: { type: 'string' } }),
            description: 'Header names of the CSV columns to sum.',
          },
        },
      },
    ],
  },
};

export const callStep = defineLeaf<CallStep>({
  kind: 'call',
  description:
    'Calls a platform operation by its id. `with` holds path and query parameters by name and `body`, ' +
    "checked against the operation's input schema when the playbook loads and again once rendered.",
  fields: callFields,
  canWrite: true,
  // Its executor sends reads in a dry run and simulates writes, by the operation.
  simulatesItself: true,
  // A write's and a download's `request.sending` is committed before they are sent.
  journalsItsEffects: true,
  readsItself: ['until'],
  normalise: normaliseCall,
  schemaFor: (description) => ({
    properties: { ...callFields, call: { ...callFields.call, enum: description.operations.map((op) => op.id) } },
    allOf: description.operations.map((op) => {
      const input = inputSchemaOf(op);
      const required = Array.isArray(input.required) && input.required.length > 0;
      return {
        if: { properties: { call: { const: op.id } }, required: ['call'] },
        then: {
          properties: { with: { $ref: `#/$defs/operationInput/${op.id}` } },
          ...(required ? { required: ['with'] } : {}),
        },
      };
    }),
  }),
  prepare: prepareCall,
  outputType: (step, tools) => callOutputType(step, tools.description),
  examples: [
    {
      description: 'Run prechecks on a system and wait for them to finish.',
      yaml: `name: precheck-one
inputs:
  systemId: { type: string }
steps:
  - id: precheck
    call: privateCloud.runSoftwarePrechecks
    with: { id: "\${{ inputs.systemId }}", body: { catalogVersion: "2.4.0" } }
    wait: { timeout: 2h }
`,
    },
    {
      description: 'List every system, all pages.',
      yaml: `name: all-systems
steps:
  - id: systems
    call: privateCloud.listSystems
    paginate: all
`,
    },
  ],
});
