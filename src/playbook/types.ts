/**
 * A playbook after loading: parsed, validated, defaults applied, expressions compiled.
 * The engine runs only this form; nothing here refers to YAML anymore, except `location`
 * for messages.
 */
import type { Template } from '../expressions/index.js';
import type { FreezeSpec, WindowSpec } from '../windows/index.js';

/** Where a thing was written: for messages that point at the playbook. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
  /** JSON pointer inside the playbook document, e.g. `/steps/1/with/id`. */
  pointer: string;
}

/** What a retry applies to. Numbers are HTTP statuses. */
export type RetryOn = 'transient' | 'operationFailed' | 'timeout' | 'any' | number;

export interface RetryPolicy {
  /** Attempts in all, the first included. @default 1 (no retry) unless the playbook's defaults say otherwise */
  maxAttempts: number;
  /** @default 2000 */
  initialDelayMs: number;
  /** @default 2 */
  backoffRate: number;
  /** @default 60000 */
  maxDelayMs: number;
  /** @default 'full' */
  jitter: 'full' | 'none';
  /** @default ['transient'] */
  on: RetryOn[];
}

export interface WaitOptions {
  /** Deadline of the async operation; absent: the operation's own `timeoutMinutes` where it has one (a data-services record has none: then the step's `timeout` bounds the wait). */
  timeoutMs?: number;
  minPollMs?: number;
  maxPollMs?: number;
}

/**
 * A setting of the run's shape written as an expression over `inputs` (`retry.maxAttempts:
 * ${{ inputs.maxResumes }}`, `batches`): fixed, and checked, when the run starts, before any
 * step (`src/engine/input-settings.ts`); until then the step holds the inherited value.
 */
export interface InputSetting {
  /** A field of the step's `retry` (in milliseconds for the delays), or a loop's `batches` or `concurrency`. */
  field: 'maxAttempts' | 'backoffRate' | 'initialDelayMs' | 'maxDelayMs' | 'batches' | 'concurrency';
  template: Template;
}

/** The fields every step has; a kind adds its own (see its definition in `src/steps/definitions/`). */
export interface StepBase {
  kind: string;
  id: string;
  name?: string;
  /** Position in the playbook, e.g. `systems.update` for a nested step (ids are unique per playbook). */
  location: SourceLocation;
  if?: Template;
  /** Merged with the playbook's defaults. */
  retry: RetryPolicy;
  /** `retry` is written on the step itself, not only inherited from the playbook's defaults (a block is retried as a whole only then). */
  retryDeclared: boolean;
  /** Settings written as expressions over inputs, bound when the run starts. */
  inputSettings?: InputSetting[];
  timeoutMs?: number;
  continueOnError: boolean;
  /** Runs when the step failed after its retries; the step then counts as recovered if rescue succeeds. */
  rescue?: Step[];
  /** Runs after the step (and rescue) whatever happened. */
  always?: Step[];
}

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

export interface SetStep extends StepBase {
  kind: 'set';
  values: Template;
}

export interface LogStep extends StepBase {
  kind: 'log';
  message: Template;
  level: 'debug' | 'info' | 'warn' | 'error';
}

export interface AssertStep extends StepBase {
  kind: 'assert';
  condition: Template;
  message?: Template;
}

export interface FailStep extends StepBase {
  kind: 'fail';
  message: Template;
}

export interface ApprovalStep extends StepBase {
  kind: 'approval';
  message: Template;
  /** Who may decide (OS users or token names); absent: anyone. */
  approvers?: string[];
  /** How long the gate waits before `onTimeout` applies. */
  timeoutMs?: number;
  onTimeout: 'fail' | 'continue' | 'skip';
  /** The form the approver fills in: input declarations, as the playbook's `inputs` are written. */
  inputs?: Record<string, Record<string, unknown>>;
}

export interface SleepStep extends StepBase {
  kind: 'sleep';
  /** Milliseconds, or a template yielding a duration string or milliseconds. */
  duration: Template;
}

export interface ForEachStep extends StepBase {
  kind: 'forEach';
  items: Template;
  /** Name of the loop variable. @default 'item' */
  as: string;
  /** @default 1 */
  concurrency: Template;
  /** Rolling batches: sizes as counts or percentages of the items; the last repeats. */
  batches?: Array<number | string>;
  /** Failures allowed before no new item starts: a count, or a percentage string like `"10%"`. */
  tolerate?: { failures: Template };
  steps: Step[];
}

export interface ParallelStep extends StepBase {
  kind: 'parallel';
  /** Each branch runs its steps in order; branches run at once. */
  branches: Step[][];
}

export interface BlockStep extends StepBase {
  kind: 'block';
  steps: Step[];
}

export interface UsesStep extends StepBase {
  kind: 'uses';
  /** As written: a bundled name or a path relative to the using playbook. */
  playbookRef: string;
  with: Template;
  /** Loaded and validated with the parent. */
  playbook: Playbook;
}

export interface HttpStep extends StepBase {
  kind: 'http';
  /** `{ method, url, headers, body }`. */
  request: Template;
}

export interface EmailStep extends StepBase {
  kind: 'email';
  /** The e-mail channel of fleetbook.yaml; unset: the only one. */
  via?: string;
  to: Template;
  cc?: Template;
  bcc?: Template;
  subject: Template;
  /** Markdown; sent as HTML and as plain text. */
  body: Template;
  attach?: Template;
  /** Bytes; a larger attachment is gzipped, then linked or refused. */
  maxAttachmentBytes: number;
  /** What a resume does with a send whose answer was not recorded. */
  onUnknown: 'resend' | 'skip' | 'fail';
}

/**
 * A loaded step of any kind. The engine and the loader reach a kind's own fields only through
 * its definition (the registry), so a kind registered from outside needs no change here; the
 * built-in kinds' shapes above type their definitions.
 */
export type Step = StepBase;
export type StepKind = string;

export interface InputSpec {
  /** JSON Schema type. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  description?: string;
  default?: unknown;
  /** Redacted everywhere it could appear; never stored. */
  secret: boolean;
  /** Required when it has no default. */
  required: boolean;
  /** The declaration as JSON Schema, for validating given values. */
  schema: Record<string, unknown>;
}

export const OverlapPolicy = { skip: 'skip', queue: 'queue', allow: 'allow', cancelRunning: 'cancel-running' } as const;
export type OverlapPolicy = (typeof OverlapPolicy)[keyof typeof OverlapPolicy];

export interface ScheduleSpec {
  /** Stable key: playbook name and index, or the schedule's `id`. */
  key: string;
  cron: string;
  /** IANA name. @default 'UTC' */
  timezone: string;
  /** @default 'skip' */
  overlap: OverlapPolicy;
  /** @default 'last' */
  catchUp: 'none' | 'last' | 'all';
  /** How far back a restarted daemon looks for missed fires. */
  catchUpWindowMs?: number;
  inputs: Record<string, unknown>;
  jitterMs?: number;
  pauseAfterFailures?: number;
  /** @default true */
  enabled: boolean;
  /** Applies in addition to the playbook's window: a fire runs only when both are open. */
  window?: WindowSpec;
  /** Added to the playbook's freezes. */
  freeze?: FreezeSpec[];
  location: SourceLocation;
}

/** What a run's notification is about (see docs/notifications.md). */
export const NotificationEvent = {
  failed: 'failed',
  succeeded: 'succeeded',
  /** A run waiting for a person (an approval gate). */
  waiting: 'waiting',
  /** A run that succeeded although a loop had failed items, within its tolerance. */
  toleranceUsed: 'toleranceUsed',
} as const;
export type NotificationEvent = (typeof NotificationEvent)[keyof typeof NotificationEvent];

/** A playbook's `notify:` rule: these events of its runs go to these channels of fleetbook.yaml. */
export interface NotifyRule {
  on: NotificationEvent[];
  channels: string[];
  /** Dry runs notify too. @default false */
  dryRun: boolean;
  location: SourceLocation;
}

export interface Playbook {
  name: string;
  description?: string;
  /** Absolute path of the file it was loaded from. */
  source: string;
  /** Hash of the normalised structure; resume refuses a changed playbook. */
  hash: string;
  inputs: Record<string, InputSpec>;
  /** Playbook outputs: a template over the final context. */
  outputs?: Template;
  defaults: { retry: RetryPolicy; timeoutMs?: number; wait: WaitOptions; region?: string };
  schedules: ScheduleSpec[];
  /** Concurrency key: runs with the same rendered key never overlap. */
  lock?: Template;
  /** When runs (and new loop items) may start; a schedule's own window narrows it further. */
  window?: WindowSpec;
  freeze?: FreezeSpec[];
  /** Who hears of its runs; with the channels' own default rules (fleetbook.yaml). */
  notify?: NotifyRule[];
  steps: Step[];
}
