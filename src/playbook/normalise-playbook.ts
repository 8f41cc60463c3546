/**
 * Builds the normalised `Playbook` from a document already checked against the schema:
 * durations in milliseconds, retry defaults merged, expressions compiled (their parse
 * errors reported), sub-playbooks loaded through `loadUses`.
 */
import { createHash } from 'node:crypto';
import { compileTemplate, tryCompileTemplate } from '../expressions/index.js';
import { durationProblem, isTooLongDuration, parseDuration } from '../expressions/index.js';
import type { ExpressionError } from '../expressions/index.js';
import type { Template } from '../expressions/index.js';
import type { NormaliseTools } from '../steps/index.js';
import type { StepRegistry } from '../steps/index.js';
import { DAY_NAMES, type FreezeSpec, type WeeklyRange, type WindowSpec } from '../windows/index.js';
import { isRawObject, nestedStepLists, rawStepsOf, type RawObject, type RawStep } from './raw-steps.js';
import { givenInputsFindings, holdsExpression, inputValidator, type DeclaredInput } from './given-inputs.js';
import type { Finding } from './rules.js';
import { describePointer } from './schema-validation.js';
import type {
  InputSpec,
  NotifyRule,
  Playbook,
  RetryOn,
  RetryPolicy,
  ScheduleSpec,
  SourceLocation,
  Step,
  WaitOptions,
  InputSetting,
} from '../model/index.js';

/** The retry policy when neither the playbook nor the step says otherwise: one attempt. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 1,
  initialDelayMs: 2000,
  backoffRate: 2,
  maxDelayMs: 60_000,
  jitter: 'full',
  on: ['transient'],
};

export interface NormaliseContext {
  file: string;
  registry: StepRegistry;
  locate(pointer: string): { line: number; column: number };
  /** Loads the playbook a `uses` step names; undefined when it has problems (reported by the loader). */
  loadUses(ref: string, pointer: string): Playbook | undefined;
  findings: Finding[];
  /** Expression errors with their position inside the value, for exact columns. */
  expressionFindings: Array<Finding & { offsetInValue: number }>;
}

/** Milliseconds of the duration written at `pointer`; undefined when there is none or it is refused (and reported). */
type DurationAt = (value: unknown, pointer: string) => number | undefined;

/** A retry policy and the fields of it that are expressions over inputs (bound when the run starts). */
interface Retry {
  policy: RetryPolicy;
  settings: InputSetting[];
}

/** The retry fields that take an expression over inputs, by the name written and the name in the policy. */
const RETRY_SETTINGS = [
  ['maxAttempts', 'maxAttempts'],
  ['backoffRate', 'backoffRate'],
  ['initialDelay', 'initialDelayMs'],
  ['maxDelay', 'maxDelayMs'],
] as const;

const isExpression = (value: unknown): boolean => typeof value === 'string' && value.includes('${{');

function mergeRetry(
  base: Retry,
  raw: unknown,
  pointer: string,
  ms: DurationAt,
  template: (value: unknown, pointer: string) => Template,
): Retry {
  if (!isRawObject(raw)) return base;
  const written = (name: string): unknown => (isExpression(raw[name]) ? undefined : raw[name]);
  const policy: RetryPolicy = {
    maxAttempts: typeof raw.maxAttempts === 'number' ? raw.maxAttempts : base.policy.maxAttempts,
    initialDelayMs: ms(written('initialDelay'), `${pointer}/initialDelay`) ?? base.policy.initialDelayMs,
    backoffRate: typeof raw.backoffRate === 'number' ? raw.backoffRate : base.policy.backoffRate,
    maxDelayMs: ms(written('maxDelay'), `${pointer}/maxDelay`) ?? base.policy.maxDelayMs,
    jitter: raw.jitter === 'none' ? 'none' : raw.jitter === 'full' ? 'full' : base.policy.jitter,
    on: Array.isArray(raw.on) ? (raw.on as RetryOn[]) : base.policy.on,
  };
  // A field written here replaces the inherited one, expression or not.
  const settings = base.settings.filter((setting) =>
    RETRY_SETTINGS.every(([name, field]) => field !== setting.field || raw[name] === undefined),
  );
  for (const [name, field] of RETRY_SETTINGS)
    if (isExpression(raw[name])) settings.push({ field, template: template(raw[name], `${pointer}/${name}`) });
  return { policy, settings };
}

function waitOptions(raw: unknown, pointer: string, ms: DurationAt): WaitOptions {
  if (!isRawObject(raw)) return {};
  const options: WaitOptions = {};
  const timeoutMs = ms(raw.timeout, `${pointer}/timeout`);
  const minPollMs = ms(raw.minPoll, `${pointer}/minPoll`);
  const maxPollMs = ms(raw.maxPoll, `${pointer}/maxPoll`);
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  if (minPollMs !== undefined) options.minPollMs = minPollMs;
  if (maxPollMs !== undefined) options.maxPollMs = maxPollMs;
  return options;
}

/** The reason of the parse error of a `${{` that runs to the end of its value. */
const UNCLOSED_REASON = "'${{' has no closing '}}'";

/** Characters of an unclosed expression shown: enough to find it in the value. */
const UNCLOSED_ECHO_LENGTH = 30;

/**
 * The expression of a parse error as a message shows it: whole when it is closed; when it
 * is not, its start as written (not wrapped in a `}}` it lacks), on one line.
 */
function echo(error: ExpressionError): string {
  if (error.reason !== UNCLOSED_REASON) return `in \${{ ${error.expression.trim()} }}`;
  const written = `\${{${error.expression}`.replace(/\s+/g, ' ').trimEnd();
  const start = written.length > UNCLOSED_ECHO_LENGTH ? `${written.slice(0, UNCLOSED_ECHO_LENGTH)}…` : written;
  return `unclosed: '${start}'`;
}

/**
 * A duration the schema let through may still be longer than a timer can wait; said here,
 * where every duration is converted, so no field is forgotten. Malformed ones are the schema's.
 */
function durationReader(context: NormaliseContext): DurationAt {
  return (value, pointer) => {
    if (value === undefined) return undefined;
    if (isTooLongDuration(value)) {
      context.findings.push({
        code: 'INVALID_DURATION',
        message: `${describePointer(pointer)}: ${durationProblem(value) ?? ''}`,
        pointer,
      });
    }
    return parseDuration(value);
  };
}

/** The id of a step written without one: its kind and its position (1-based, nested with dots). */
function generatedId(raw: RawStep, kind: string): string {
  // Not an identifier on purpose: it can never collide with (or be read as) an id written by hand.
  const indexes = raw.pointer
    .split('/')
    .filter((token) => /^\d+$/.test(token))
    .map((token) => Number(token) + 1);
  return `${kind}#${indexes.join('.')}`;
}

function createNormaliser(context: NormaliseContext) {
  const location = (pointer: string): SourceLocation => ({ file: context.file, pointer, ...context.locate(pointer) });

  const ms = durationReader(context);

  function template(value: unknown, pointer: string, stepId?: string): Template {
    const { template: compiled, errors } = tryCompileTemplate(value, {
      pointer,
      ...(stepId === undefined ? {} : { stepId }),
    });
    for (const error of errors) {
      context.expressionFindings.push({
        code: error.code,
        message: `${error.reason} (${echo(error)})`,
        pointer: error.pointer,
        offsetInValue: error.offsetInValue,
      });
    }
    return compiled ?? compileTemplate(null, { pointer });
  }

  function steps(items: unknown, pointer: string, retry: Retry): Step[] {
    if (!Array.isArray(items)) return [];
    return rawStepsOf(items, pointer, context.registry).flatMap((raw) => {
      const step = normaliseStep(raw, retry);
      return step === undefined ? [] : [step];
    });
  }

  function normaliseStep(raw: RawStep, inherited: Retry): Step | undefined {
    const [kind] = raw.kinds;
    if (kind === undefined || raw.kinds.length !== 1) return undefined;
    const data = raw.data;
    const id = typeof data.id === 'string' ? data.id : generatedId(raw, kind);
    const at = (field: string): string => `${raw.pointer}/${field}`;
    const field = (name: string): Template => template(data[name], at(name), id);
    const retry = mergeRetry(inherited, data.retry, at('retry'), ms, (value, pointer) => template(value, pointer, id));
    const timeoutMs = ms(data.timeout, at('timeout'));
    const base = {
      id,
      ...(typeof data.name === 'string' ? { name: data.name } : {}),
      location: location(raw.pointer),
      ...(data.if === undefined ? {} : { if: field('if') }),
      retry: retry.policy,
      retryDeclared: data.retry !== undefined,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      continueOnError: data.continueOnError === true,
      ...(Array.isArray(data.rescue) ? { rescue: steps(data.rescue, at('rescue'), inherited) } : {}),
      ...(Array.isArray(data.always) ? { always: steps(data.always, at('always'), inherited) } : {}),
    };
    const lists = (name: string): Step[][] =>
      nestedStepLists(raw, context.registry)
        .filter((entry) => entry.field === name)
        .map((entry) => steps(entry.items, entry.pointer, inherited));
    const tools: NormaliseTools = {
      id,
      data,
      file: context.file,
      at,
      field,
      template: (value, pointer) => template(value, pointer, id),
      ms,
      steps: (name) => lists(name)[0] ?? [],
      branches: lists,
      usePlaybook(ref, given) {
        const playbook = context.loadUses(ref, at(kind));
        // A `with` that is one expression is known only at run time (the schema checked its form).
        if (playbook !== undefined && (given === undefined || isRawObject(given)))
          context.findings.push(...usesInputsFindings(ref, playbook, given, raw.pointer));
        return playbook;
      },
      problem: (pointer, code, message) => context.findings.push({ code, message, pointer }),
    };
    const fields = context.registry.get(kind).normalise(tools);
    if (fields === undefined) return undefined;
    // The kind's own settings over inputs (a loop's `batches`) beside the retry's.
    const own = Array.isArray(fields.inputSettings) ? (fields.inputSettings as InputSetting[]) : [];
    const inputSettings = [...retry.settings, ...own];
    return { ...base, kind, ...fields, ...(inputSettings.length > 0 ? { inputSettings } : {}) };
  }

  return { template, steps, location, ms };
}

/**
 * A `uses` step's `with` against the inputs the used playbook declares, so a wrong name, a
 * missing required input or a literal of the wrong type stops the run before its first step
 * rather than when the step is reached. A value holding an expression is checked for presence.
 */
function usesInputsFindings(ref: string, used: Playbook, given: RawObject | undefined, pointer: string): Finding[] {
  const declared = Object.entries(used.inputs).map(([name, spec]): DeclaredInput => {
    const validate = inputValidator(spec.schema);
    return {
      name,
      type: spec.type,
      hasDefault: !spec.required,
      secret: spec.secret,
      ...(validate === undefined ? {} : { validate }),
    };
  });
  return givenInputsFindings({
    code: 'INVALID_USES_INPUTS',
    declared,
    given,
    pointer,
    key: 'with',
    taker: `the playbook '${ref}'`,
    nameTakerWhenMissing: true,
    consequence: 'the step would fail when reached, after the steps before it have run',
    isComputed: holdsExpression,
  });
}

export function inputSpecs(raw: unknown): Record<string, InputSpec> {
  if (!isRawObject(raw)) return {};
  const specs: Record<string, InputSpec> = {};
  for (const [name, declaration] of Object.entries(raw)) {
    if (!isRawObject(declaration)) continue;
    const { secret, ...schema } = declaration;
    specs[name] = {
      type: declaration.type as InputSpec['type'],
      ...(typeof declaration.description === 'string' ? { description: declaration.description } : {}),
      ...(Object.hasOwn(declaration, 'default') ? { default: declaration.default } : {}),
      secret: secret === true,
      required: !Object.hasOwn(declaration, 'default'),
      schema,
    };
  }
  return specs;
}

function schedules(
  raw: unknown,
  name: string,
  location: (pointer: string) => SourceLocation,
  ms: DurationAt,
): ScheduleSpec[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: unknown, index): ScheduleSpec[] => {
    if (!isRawObject(entry) || typeof entry.cron !== 'string') return [];
    const catchUpWindowMs = ms(entry.catchUpWindow, `/schedules/${index}/catchUpWindow`);
    const jitterMs = ms(entry.jitter, `/schedules/${index}/jitter`);
    return [
      {
        key: typeof entry.id === 'string' ? entry.id : `${name}#${index}`,
        cron: entry.cron,
        timezone: typeof entry.timezone === 'string' ? entry.timezone : 'UTC',
        overlap: (entry.overlap as ScheduleSpec['overlap'] | undefined) ?? 'skip',
        catchUp: (entry.catchUp as ScheduleSpec['catchUp'] | undefined) ?? 'last',
        ...(catchUpWindowMs === undefined ? {} : { catchUpWindowMs }),
        inputs: isRawObject(entry.inputs) ? entry.inputs : {},
        ...(jitterMs === undefined ? {} : { jitterMs }),
        ...(typeof entry.pauseAfterFailures === 'number' ? { pauseAfterFailures: entry.pauseAfterFailures } : {}),
        enabled: entry.enabled !== false,
        ...windowAndFreezes(entry, typeof entry.timezone === 'string' ? entry.timezone : 'UTC'),
        location: location(`/schedules/${index}`),
      },
    ];
  });
}

/** The `notify:` rules as the schema let them through (events and channels are lists of names). */
function notifyRules(value: unknown, location: (pointer: string) => SourceLocation): NotifyRule[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRawObject).map((rule, index) => ({
    on: (Array.isArray(rule.on) ? rule.on : []).map(String) as NotifyRule['on'],
    channels: (Array.isArray(rule.channels) ? rule.channels : []).map(String),
    dryRun: rule.dryRun === true,
    location: location(`/notify/${index}`),
  }));
}

/**
 * `window:` and `freeze:` of a playbook or a schedule: the window's timezone defaults to
 * `timezone` (the schedule's, or UTC), and freeze dates are read in the window's timezone.
 */
function windowOf(raw: unknown, timezone: string): { window?: WindowSpec } {
  if (!isRawObject(raw) || !Array.isArray(raw.weekly)) return {};
  const weekly = raw.weekly.flatMap((range: unknown): WeeklyRange[] =>
    isRawObject(range) && Array.isArray(range.days) && typeof range.from === 'string' && typeof range.to === 'string'
      ? [
          {
            days: range.days.flatMap((name: unknown) => (typeof name === 'string' && DAY_NAMES[name]) || []),
            from: range.from,
            to: range.to,
          },
        ]
      : [],
  );
  return {
    window: {
      timezone: typeof raw.timezone === 'string' ? raw.timezone : timezone,
      weekly,
      onClose: raw.onClose === 'fail' ? 'fail' : 'wait',
    },
  };
}

/** The `window:` and `freeze:` of a playbook or schedule mapping; freeze dates in the window's timezone. */
function windowAndFreezes(raw: RawObject, timezone: string): { window?: WindowSpec; freeze: FreezeSpec[] } {
  const { window } = windowOf(raw.window, timezone);
  return { ...(window ? { window } : {}), freeze: freezesOf(raw.freeze, window?.timezone ?? timezone) };
}

function freezesOf(raw: unknown, timezone: string): FreezeSpec[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry: unknown): FreezeSpec[] =>
    isRawObject(entry) && typeof entry.from === 'string' && typeof entry.to === 'string'
      ? [
          {
            from: entry.from,
            to: entry.to,
            ...(typeof entry.reason === 'string' ? { reason: entry.reason } : {}),
            timezone,
          },
        ]
      : [],
  );
}

/**
 * A hash of what the engine runs, which resume compares: steps, inputs, outputs, defaults and
 * lock; templates by their source, sub-playbooks by their hash, no positions. Not the name,
 * description, input descriptions or schedules: editing those (a cron moved) changes no step
 * a journal speaks of, so it must not refuse a resume.
 */
export function hashPlaybook(playbook: Omit<Playbook, 'hash'>): string {
  const inputs = Object.fromEntries(
    Object.entries(playbook.inputs).map(([name, { description: _description, schema, ...spec }]) => [
      name,
      { ...spec, schema: withoutDescription(schema) },
    ]),
  );
  const structure = {
    inputs,
    outputs: playbook.outputs,
    defaults: playbook.defaults,
    lock: playbook.lock,
    steps: playbook.steps,
  };
  const json = JSON.stringify(structure, (key, value: unknown) => {
    if (key === 'location' || (key === 'source' && typeof value === 'string')) return undefined;
    if (isRawObject(value) && typeof value.evaluate === 'function') return { template: value.source ?? null };
    if (key === 'playbook' && isRawObject(value) && typeof value.hash === 'string') return value.hash;
    return value;
  });
  return createHash('sha256').update(json).digest('hex');
}

/** An input's schema without its top-level `description` (the declaration's own words, not a constraint). */
function withoutDescription(schema: InputSpec['schema']): InputSpec['schema'] {
  if (!isRawObject(schema)) return schema;
  const { description: _description, ...rest } = schema;
  return rest as InputSpec['schema'];
}

export function normalisePlaybook(data: RawObject, source: string, context: NormaliseContext): Playbook {
  const { template, steps, location, ms } = createNormaliser(context);
  const defaults = isRawObject(data.defaults) ? data.defaults : {};
  const retry = mergeRetry(
    { policy: DEFAULT_RETRY_POLICY, settings: [] },
    defaults.retry,
    '/defaults/retry',
    ms,
    template,
  );
  const timeoutMs = ms(defaults.timeout, '/defaults/timeout');
  const name = String(data.name);
  const withoutHash: Omit<Playbook, 'hash'> = {
    name,
    ...(typeof data.description === 'string' ? { description: data.description } : {}),
    source,
    inputs: inputSpecs(data.inputs),
    ...(data.outputs === undefined ? {} : { outputs: template(data.outputs, '/outputs') }),
    defaults: {
      retry: retry.policy,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      wait: waitOptions(defaults.wait, '/defaults/wait', ms),
      ...(typeof defaults.region === 'string' ? { region: defaults.region } : {}),
    },
    schedules: schedules(data.schedules, name, location, ms),
    ...(data.lock === undefined ? {} : { lock: template(data.lock, '/lock') }),
    ...windowAndFreezes(data, 'UTC'),
    ...(data.notify === undefined ? {} : { notify: notifyRules(data.notify, location) }),
    steps: steps(data.steps, '/steps', retry),
  };
  return { ...withoutHash, hash: hashPlaybook(withoutHash) };
}
