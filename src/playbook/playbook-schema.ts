/**
 * The playbook JSON Schema (2020-12), generated from the step registry and the platform
 * operations: the loader validates with it, editors complete with it
 * (`schemas/playbook.schema.json`, kept equal to this by a snapshot test).
 */
import { inputSchemaOf, type PlatformDescription } from '../openapi/index.js';
import { commonStepFields, retryPolicy } from '../steps/index.js';
import {
  anyTemplate,
  duration,
  expressionString,
  inputDeclaration,
  inputNames,
  stepList,
  type JsonSchema,
} from '../steps/index.js';
import type { StepRegistry } from '../steps/index.js';
import { DAY_NAMES } from '../windows/index.js';
import { NotificationEvent } from '../model/index.js';

export const PLAYBOOK_SCHEMA_ID = 'https://fleetbook.dev/schemas/playbook.schema.json';

/** Keywords that hold one subschema / a list of them / a map of them. */
const SUBSCHEMA = ['items', 'additionalProperties', 'unevaluatedProperties', 'propertyNames', 'not'] as const;
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs'] as const;

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when any string passes the schema, so an expression string passes it as written. */
function acceptsAnyString(schema: JsonSchema): boolean {
  const constrained = [
    'enum',
    'const',
    'pattern',
    'format',
    'minLength',
    'maxLength',
    'allOf',
    'anyOf',
    'oneOf',
    'not',
  ];
  const types = schema.type === undefined ? undefined : [schema.type].flat();
  return (types === undefined || types.includes('string')) && !constrained.some((keyword) => keyword in schema);
}

/**
 * `schema` where every position also accepts a `${{ }}` string, because `with:` values may be
 * computed: the rendered value is checked against the operation's own schema at run time.
 */
export function allowExpressions(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  for (const keyword of SUBSCHEMA) if (isSchema(copy[keyword])) copy[keyword] = allowExpressions(copy[keyword]);
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = copy[keyword];
    if (Array.isArray(list))
      copy[keyword] = list.map((item: unknown) => (isSchema(item) ? allowExpressions(item) : item));
  }
  for (const keyword of SUBSCHEMA_MAPS) {
    const map = copy[keyword];
    if (isSchema(map))
      copy[keyword] = Object.fromEntries(
        Object.entries(map).map(([key, item]) => [key, isSchema(item) ? allowExpressions(item) : item]),
      );
  }
  if (acceptsAnyString(copy)) return copy;
  const { description, ...rest } = copy;
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, expressionString] };
}

/** `window:`: weekly time ranges in a timezone (docs/windows.md). */
function maintenanceWindow(timezoneDefault: string): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['weekly'],
    description: 'Runs start (and loop items start) only while this window is open.',
    properties: {
      timezone: { type: 'string', description: `IANA timezone the ranges are read in. Default ${timezoneDefault}.` },
      weekly: {
        type: 'array',
        minItems: 1,
        description:
          'The ranges: open on each of `days` from `from` to `to` (the next day when `to` is not after `from`).',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['days', 'from', 'to'],
          properties: {
            days: {
              type: 'array',
              minItems: 1,
              items: { enum: Object.keys(DAY_NAMES) },
              description: 'Days the range opens on: sun, mon, ... sat (or sunday, monday, ...).',
            },
            from: { type: 'string', description: 'Opening wall time, HH:MM.' },
            to: { type: 'string', description: 'Closing wall time, HH:MM (24:00 for the end of the day).' },
          },
        },
      },
      onClose: {
        enum: ['wait', 'fail'],
        description: 'When it closes during a run: wait for the next opening (default) or fail the run.',
      },
    },
  };
}

/** `freeze:`: date ranges on which nothing starts. */
function freezeList(timezoneDefault: string): JsonSchema {
  return {
    type: 'array',
    description: `Dates on which nothing starts, read in the window's timezone (else ${timezoneDefault}).`,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to'],
      properties: {
        from: { type: 'string', description: 'First frozen date, YYYY-MM-DD.' },
        to: { type: 'string', description: 'Last frozen date (inclusive), YYYY-MM-DD.' },
        reason: { type: 'string', description: 'Said when a fire or a run is refused.' },
      },
    },
  };
}

function schedule(): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['cron'],
    properties: {
      id: {
        type: 'string',
        description: 'Stable key of the schedule (its state survives edits). Default: its position.',
      },
      cron: { type: 'string', description: 'Five fields (minute hour day month weekday), or six with seconds first.' },
      timezone: { type: 'string', description: 'IANA timezone. Default UTC.' },
      overlap: {
        enum: ['skip', 'queue', 'allow', 'cancel-running'],
        description: 'When the previous run still runs. Default skip.',
      },
      catchUp: { enum: ['none', 'last', 'all'], description: 'Fires missed while down. Default last.' },
      catchUpWindow: { ...duration, description: 'How far back missed fires are looked for.' },
      inputs: { type: 'object', description: 'Inputs of the runs it starts.' },
      jitter: { ...duration, description: 'A random delay up to this before each fire.' },
      pauseAfterFailures: {
        type: 'integer',
        minimum: 1,
        description: 'Stop firing after this many failed runs in a row.',
      },
      enabled: { type: 'boolean', description: 'Default true.' },
      window: maintenanceWindow("the schedule's timezone"),
      freeze: freezeList("the schedule's timezone"),
    },
  };
}

function stepSchema(registry: StepRegistry, description: PlatformDescription): JsonSchema {
  const branches = registry.list().map((definition): JsonSchema => {
    const then: JsonSchema = {
      properties: definition.fields,
      ...(definition.required ? { required: definition.required } : {}),
    };
    Object.assign(then, definition.schemaFor?.(description) ?? {});
    return { if: { required: [definition.kind] }, then };
  });
  return {
    type: 'object',
    description: `A step: one of ${registry.kinds.map((kind) => `\`${kind}\``).join(', ')}, with the common fields.`,
    properties: commonStepFields,
    allOf: branches,
    unevaluatedProperties: false,
  };
}

/** The playbook JSON Schema for a registry and a platform description. */
export function createPlaybookSchema(registry: StepRegistry, description: PlatformDescription): JsonSchema {
  // Every `with` is an object whose values may be computed, or one expression yielding the whole object.
  const operationInput = Object.fromEntries(
    description.operations.map((op) => [op.id, allowExpressions(inputSchemaOf(op))]),
  );
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: PLAYBOOK_SCHEMA_ID,
    title: 'Fleetbook playbook',
    type: 'object',
    additionalProperties: false,
    required: ['name', 'steps'],
    properties: {
      name: {
        type: 'string',
        pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
        description: 'The playbook name (runs and schedules are keyed by it).',
      },
      description: { type: 'string' },
      inputs: {
        type: 'object',
        propertyNames: inputNames,
        additionalProperties: inputDeclaration,
        description: 'Inputs by name.',
      },
      outputs: { ...anyTemplate, description: 'What the run returns, computed after the last step.' },
      defaults: {
        type: 'object',
        additionalProperties: false,
        properties: {
          retry: retryPolicy,
          timeout: { ...duration, description: 'Deadline of every step that sets none.' },
          wait: {
            type: 'object',
            additionalProperties: false,
            properties: { timeout: duration, minPoll: duration, maxPoll: duration },
          },
          region: { type: 'string', description: 'Region of regional operations.' },
        },
      },
      schedules: { type: 'array', items: schedule() },
      window: maintenanceWindow('UTC'),
      freeze: freezeList('UTC'),
      lock: { ...anyTemplate, description: 'Runs whose rendered lock is equal never overlap.' },
      notify: {
        type: 'array',
        description: 'Which events of its runs go to which notification channels of fleetbook.yaml.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['on', 'channels'],
          properties: {
            on: {
              type: 'array',
              minItems: 1,
              items: { enum: Object.values(NotificationEvent) },
              description: 'The events: failed, succeeded, waiting, toleranceUsed.',
            },
            channels: {
              type: 'array',
              minItems: 1,
              items: { type: 'string', minLength: 1 },
              description: 'Channel names of `notifications.channels` in fleetbook.yaml.',
            },
            dryRun: { type: 'boolean', description: 'Dry runs notify too. Default false.' },
          },
        },
      },
      steps: { ...stepList, minItems: 1 },
    },
    $defs: { step: stepSchema(registry, description), operationInput },
  };
}

/** The published schema file's text: the built-in kinds and the package's operations, two-space JSON. */
export function playbookSchemaText(registry: StepRegistry, description: PlatformDescription): string {
  return `${JSON.stringify(createPlaybookSchema(registry, description), null, 2)}\n`;
}
