/**
 * Semantic rules: small named functions over the document as written, each returning its
 * findings. None throws for a user's mistake.
 */
import { CronExpressionParser } from 'cron-parser';
import { didYouMean } from '../errors/index.js';
import type { PlatformDescription } from '../openapi/index.js';
import type { StepRegistry } from '../steps/index.js';
import { allRawSteps, isRawObject, type RawObject, type RawStep } from './raw-steps.js';
import { givenInputsFindings, inputValidator, pointerToken, type DeclaredInput } from './given-inputs.js';
import { compileValueSchema } from './schema-validation.js';
import { errorMessage } from '../errors/index.js';

export interface Finding {
  code: string;
  message: string;
  pointer: string;
  /** Point at the key rather than the value. */
  atKey?: boolean;
  severity?: 'error' | 'warning';
}

export interface RuleContext {
  data: unknown;
  steps: RawStep[];
  registry: StepRegistry;
  description: PlatformDescription;
}

export type Rule = (context: RuleContext) => Finding[];

/** A step carries exactly one kind key. */
export const stepKindRule: Rule = ({ steps, registry }) =>
  steps.flatMap((step): Finding[] => {
    if (step.kinds.length === 1) return [];
    if (step.kinds.length > 1) {
      return [
        {
          code: 'MULTIPLE_STEP_KINDS',
          message: `a step has one kind, this one has ${step.kinds.map((kind) => `'${kind}'`).join(' and ')}`,
          pointer: step.pointer,
        },
      ];
    }
    const common = new Set(['id', 'name', 'if', 'retry', 'timeout', 'continueOnError', 'rescue', 'always']);
    const guesses = Object.keys(step.data).filter((key) => !common.has(key));
    const hint = guesses.map((key) => didYouMean(key, registry.kinds)).find((text) => text !== '') ?? '';
    const named = guesses[0] === undefined ? '' : ` ('${guesses[0]}' is not one)`;
    return [
      {
        code: 'UNKNOWN_STEP_KIND',
        message: `the step has no known kind${named}.${hint} Known kinds: ${registry.kinds.join(', ')}.`,
        pointer: step.pointer,
      },
    ];
  });

/** A `call` names an operation of the platform. */
export const unknownOperationRule: Rule = ({ steps, description }) =>
  steps.flatMap((step): Finding[] => {
    const operationId = step.data.call;
    if (step.kinds[0] !== 'call' || typeof operationId !== 'string' || description.byId.has(operationId)) return [];
    return [
      {
        code: 'UNKNOWN_OPERATION',
        message: `unknown operation '${operationId}'.${didYouMean(operationId, description.byId.keys())} Run 'fleetbook actions' to list them.`,
        pointer: `${step.pointer}/call`,
      },
    ];
  });

/** Step ids are unique in a playbook, so `steps.<id>` means one step. */
export const duplicateStepIdRule: Rule = ({ steps }) => {
  const first = new Map<string, string>();
  return steps.flatMap((step): Finding[] => {
    const id = step.data.id;
    if (typeof id !== 'string') return [];
    const earlier = first.get(id);
    if (earlier === undefined) {
      first.set(id, step.pointer);
      return [];
    }
    return [
      {
        code: 'DUPLICATE_STEP_ID',
        message: `step id '${id}' is already used by the step at ${earlier}`,
        pointer: `${step.pointer}/id`,
      },
    ];
  });
};

/** Longer than any IANA name: Intl's lookup of a long name costs seconds (a minute for 650 KB), so none is asked. */
const MAX_TIMEZONE_LENGTH = 64;

export function isTimezone(name: string): boolean {
  if (name.length > MAX_TIMEZONE_LENGTH) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The aliases cron-parser reads (its list is not exported). */
const CRON_ALIASES = [
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@hourly',
  '@minutely',
  '@secondly',
  '@weekdays',
  '@weekends',
];

/** Schedules have a cron expression of 5 or 6 fields (or an alias) cron-parser accepts, and an IANA timezone. */
export const scheduleRule: Rule = ({ data }) => {
  if (!isRawObject(data) || !Array.isArray(data.schedules)) return [];
  return data.schedules.flatMap((schedule: unknown, index): Finding[] => {
    if (!isRawObject(schedule)) return [];
    const findings: Finding[] = [];
    const pointer = `/schedules/${index}`;
    const timezone = typeof schedule.timezone === 'string' ? schedule.timezone : 'UTC';
    const validZone = isTimezone(timezone);
    findings.push(...timezoneFinding(timezone, `${pointer}/timezone`));
    const fields =
      typeof schedule.cron === 'string'
        ? schedule.cron
            .trim()
            .split(/\s+/)
            .filter((field) => field !== '')
        : [];
    if (
      typeof schedule.cron === 'string' &&
      !schedule.cron.trim().startsWith('@') &&
      fields.length !== 5 &&
      fields.length !== 6
    ) {
      // cron-parser fills missing fields with `*` (so "5" would fire every minute): say it instead.
      findings.push({
        code: 'INVALID_CRON',
        message: `'${schedule.cron}' is not a cron expression: it has ${fields.length} field${fields.length === 1 ? '' : 's'}; write 5 (minute hour day-of-month month day-of-week), 6 (seconds first) or an alias such as @daily`,
        pointer: `${pointer}/cron`,
      });
    } else if (
      typeof schedule.cron === 'string' &&
      schedule.cron.trim().startsWith('@') &&
      !CRON_ALIASES.includes(schedule.cron.trim())
    ) {
      const alias = schedule.cron.trim();
      findings.push({
        code: 'INVALID_CRON',
        message: `'${alias}' is not a cron alias: the aliases are ${CRON_ALIASES.join(', ')}.${didYouMean(alias, CRON_ALIASES)}`,
        pointer: `${pointer}/cron`,
      });
    } else if (typeof schedule.cron === 'string') {
      try {
        CronExpressionParser.parse(schedule.cron, { tz: validZone ? timezone : 'UTC', strict: false });
      } catch (error) {
        findings.push({
          code: 'INVALID_CRON',
          message: `'${schedule.cron}' is not a cron expression: ${errorMessage(error)}`,
          pointer: `${pointer}/cron`,
        });
      }
    }
    return findings;
  });
};

/** The input declarations of the document that are mappings, as the JSON Schemas given values are checked with. */
function inputDeclarations(data: unknown): Array<{ name: string; declaration: RawObject; schema: RawObject }> {
  if (!isRawObject(data) || !isRawObject(data.inputs)) return [];
  return Object.entries(data.inputs).flatMap(([name, declaration]) => {
    if (!isRawObject(declaration)) return [];
    // `secret` is Fleetbook's, not JSON Schema's.
    const { secret: _secret, ...schema } = declaration;
    return [{ name, declaration, schema }];
  });
}

/**
 * An input's declaration is a JSON Schema given values can be checked with, and its default is
 * one of those values (else every run would stop on it).
 */
export const inputDeclarationRule: Rule = ({ data }) =>
  inputDeclarations(data).flatMap(({ name, declaration, schema }): Finding[] => {
    try {
      const validate = compileValueSchema(schema);
      if (!Object.hasOwn(declaration, 'default')) return [];
      const pointer = `/inputs/${pointerToken(name)}/default`;
      return validate(declaration.default, pointer, { hideValues: declaration.secret === true }).map(
        (finding): Finding => ({
          ...finding,
          code: 'INVALID_INPUT_DEFAULT',
          message: `${finding.message}: the default of input '${name}' must fit its own declaration, else every run without the input is refused`,
        }),
      );
    } catch (error) {
      const why = errorMessage(error);
      return [
        {
          code: 'INVALID_INPUT_SCHEMA',
          message: `input '${name}' is not a valid JSON Schema: ${why}`,
          pointer: `/inputs/${pointerToken(name)}`,
          atKey: true,
        },
      ];
    }
  });

/**
 * A schedule's inputs are those of every run it starts: names the playbook declares, values
 * of the declared types, every input without a default given. Checked when the playbook
 * loads, so `fleetbook validate` finds what would make the daemon refuse the playbook.
 */
export const scheduleInputsRule: Rule = ({ data }) => {
  if (!isRawObject(data) || !Array.isArray(data.schedules)) return [];
  const declared = inputDeclarations(data).map(({ name, declaration, schema }): DeclaredInput => {
    // An invalid declaration is reported by inputDeclarationRule; values of it cannot be checked.
    const validate = inputValidator(schema);
    return {
      name,
      ...(typeof declaration.type === 'string' ? { type: declaration.type } : {}),
      hasDefault: Object.hasOwn(declaration, 'default'),
      secret: declaration.secret === true,
      ...(validate === undefined ? {} : { validate }),
    };
  });
  return data.schedules.flatMap((schedule: unknown, index): Finding[] =>
    isRawObject(schedule)
      ? givenInputsFindings({
          code: 'INVALID_SCHEDULE_INPUTS',
          declared,
          given: isRawObject(schedule.inputs) ? schedule.inputs : undefined,
          pointer: `/schedules/${index}`,
          key: 'inputs',
          taker: 'the playbook',
          consequence: 'every run it starts would be refused',
        })
      : [],
  );
};

const CLOCK_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD` naming a day of the calendar (not 2026-02-30). */
function isCalendarDate(text: string): boolean {
  if (!CALENDAR_DATE.test(text)) return false;
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(text);
}

function timezoneFinding(timezone: string, pointer: string): Finding[] {
  if (isTimezone(timezone)) return [];
  const hint = didYouMean(timezone, Intl.supportedValuesOf('timeZone'));
  return [
    {
      code: 'INVALID_TIMEZONE',
      message: `'${timezone}' is not an IANA timezone${hint ? `.${hint}` : ' such as Europe/Berlin or UTC'}`,
      pointer,
    },
  ];
}

/** A `window:` has a known timezone and ranges of some length between times of day (day names: the schema). */
function windowFindings(window: unknown, pointer: string): Finding[] {
  if (!isRawObject(window)) return [];
  const findings: Finding[] = [];
  if (typeof window.timezone === 'string') findings.push(...timezoneFinding(window.timezone, `${pointer}/timezone`));
  if (!Array.isArray(window.weekly)) return findings;
  window.weekly.forEach((range: unknown, index) => {
    if (!isRawObject(range)) return;
    const at = `${pointer}/weekly/${index}`;
    const from = typeof range.from === 'string' ? range.from : undefined;
    const to = typeof range.to === 'string' ? range.to : undefined;
    if (from !== undefined && !CLOCK_TIME.test(from))
      findings.push({
        code: 'INVALID_WINDOW',
        message: `'${from}' is not a time of day: write HH:MM, 00:00 to 23:59`,
        pointer: `${at}/from`,
      });
    if (to !== undefined && to !== '24:00' && !CLOCK_TIME.test(to))
      findings.push({
        code: 'INVALID_WINDOW',
        message: `'${to}' is not a time of day: write HH:MM, 00:00 to 24:00 (the end of the day)`,
        pointer: `${at}/to`,
      });
    if (from !== undefined && from === to)
      findings.push({
        code: 'INVALID_WINDOW',
        message: `the range opens and closes at ${from}, so it is never open; for whole days write from: "00:00", to: "24:00"`,
        pointer: `${at}/to`,
      });
  });
  return findings;
}

/** `freeze:` dates are calendar dates, the last not before the first. */
function freezeFindings(freeze: unknown, pointer: string): Finding[] {
  if (!Array.isArray(freeze)) return [];
  return freeze.flatMap((entry: unknown, index): Finding[] => {
    if (!isRawObject(entry)) return [];
    const at = `${pointer}/${index}`;
    const findings: Finding[] = [];
    for (const key of ['from', 'to'] as const) {
      const value = entry[key];
      if (typeof value === 'string' && !isCalendarDate(value))
        findings.push({
          code: 'INVALID_FREEZE',
          message: `'${value}' is not a date: write YYYY-MM-DD, for example 2026-12-20`,
          pointer: `${at}/${key}`,
        });
    }
    const { from, to } = entry;
    if (typeof from === 'string' && typeof to === 'string' && findings.length === 0 && to < from)
      findings.push({
        code: 'INVALID_FREEZE',
        message: `the freeze ends (${to}) before it begins (${from}); the dates are inclusive, so a one-day freeze has from equal to to`,
        pointer: `${at}/to`,
      });
    return findings;
  });
}

/** The playbook's and each schedule's `window:` and `freeze:`. */
export const windowRule: Rule = ({ data }) => {
  if (!isRawObject(data)) return [];
  const schedules = Array.isArray(data.schedules) ? data.schedules : [];
  return [
    ...windowFindings(data.window, '/window'),
    ...freezeFindings(data.freeze, '/freeze'),
    ...schedules.flatMap((schedule: unknown, index) =>
      isRawObject(schedule)
        ? [
            ...windowFindings(schedule.window, `/schedules/${index}/window`),
            ...freezeFindings(schedule.freeze, `/schedules/${index}/freeze`),
          ]
        : [],
    ),
  ];
};

/** Kinds whose children run side by side: a gate there would stop its siblings mid-flight. */
const concurrentKinds: ReadonlySet<string> = new Set(['forEach', 'parallel']);

/**
 * An approval gate stops the whole run to wait, so it must sit where nothing else is in flight:
 * not inside a `forEach` or `parallel` (their other items or branches would be stopped mid-way,
 * one gate per item would ask the same person N times). Its form must be valid JSON Schema.
 */
export const approvalRule: Rule = ({ steps }) =>
  steps.flatMap((step): Finding[] => {
    if (!step.kinds.includes('approval')) return [];
    const findings: Finding[] = [];
    const enclosing = steps.find(
      (other) => other.kinds.some((kind) => concurrentKinds.has(kind)) && step.pointer.startsWith(`${other.pointer}/`),
    );
    if (enclosing) {
      const kind = enclosing.kinds.find((found) => concurrentKinds.has(found)) ?? '';
      findings.push({
        code: 'APPROVAL_IN_CONCURRENT_STEP',
        message: `an approval gate cannot be inside a ${kind} (at ${enclosing.pointer}): it stops the whole run to wait, and would stop the other ${kind === 'forEach' ? 'items' : 'branches'} mid-way. Put the gate before or after the ${kind}`,
        pointer: `${step.pointer}/approval`,
        atKey: true,
      });
    }
    const gate = step.data.approval;
    const inputs = isRawObject(gate) && isRawObject(gate.inputs) ? gate.inputs : {};
    for (const [name, declaration] of Object.entries(inputs)) {
      if (!isRawObject(declaration)) continue;
      const { secret: _secret, ...schema } = declaration;
      try {
        compileValueSchema(schema);
      } catch (error) {
        findings.push({
          code: 'INVALID_APPROVAL_FORM',
          message: `approval input '${name}' is not a valid JSON Schema: ${errorMessage(error)}`,
          pointer: `${step.pointer}/approval/inputs/${pointerToken(name)}`,
          atKey: true,
        });
      }
    }
    return findings;
  });

/** The rules over the document as written, in the order their findings are reported. */
export const documentRules: readonly Rule[] = [
  stepKindRule,
  unknownOperationRule,
  duplicateStepIdRule,
  scheduleRule,
  windowRule,
  inputDeclarationRule,
  scheduleInputsRule,
  approvalRule,
];

export function runDocumentRules(data: unknown, registry: StepRegistry, description: PlatformDescription): Finding[] {
  const context: RuleContext = { data, steps: allRawSteps(data, registry), registry, description };
  return documentRules.flatMap((rule) => rule(context));
}
