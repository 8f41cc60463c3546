import {
  STEP_ID_PATTERN,
  anyTemplate,
  duration,
  stepList,
  expressionString,
  orExpression,
  type JsonSchema,
} from './schema-parts.js';

/** What a retry applies to: `transient` (network errors, 408, 429, 5xx), an HTTP status, `operationFailed`, `timeout`, `any`. */
export const retryOn: JsonSchema = {
  type: 'array',
  items: {
    anyOf: [
      { enum: ['transient', 'operationFailed', 'timeout', 'any'] },
      { type: 'integer', minimum: 100, maximum: 599 },
    ],
  },
  minItems: 1,
};

/** The retry policy as written in a playbook (`defaults.retry` or a step's `retry`). */
export const retryPolicy: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxAttempts: {
      ...orExpression({ type: 'integer', minimum: 1 }),
      description: 'Attempts in all, the first included. Default 1 (no retry). May be `${{ }}` over inputs.',
    },
    initialDelay: {
      ...orExpression(duration),
      description: 'Delay before the second attempt. Default 2s. May be `${{ }}` over inputs.',
    },
    backoffRate: {
      ...orExpression({ type: 'number', minimum: 1 }),
      description: 'Each delay is the previous one times this. Default 2. May be `${{ }}` over inputs.',
    },
    maxDelay: {
      ...orExpression(duration),
      description: 'No delay exceeds this. Default 1m. May be `${{ }}` over inputs.',
    },
    jitter: {
      enum: ['full', 'none'],
      description: '`full`: a random delay between 0 and the computed one. Default full.',
    },
    on: { ...retryOn, description: 'What is retried. Default [transient].' },
  },
};

/** Fields every step may carry, whatever its kind. */
export const commonStepFields: Record<string, JsonSchema> = {
  id: {
    type: 'string',
    pattern: STEP_ID_PATTERN,
    description: 'Identifier for `steps.<id>` in expressions; unique in the playbook.',
  },
  name: { type: 'string', description: 'A human label for logs and the summary.' },
  if: { ...anyTemplate, description: 'Runs the step only when this is true; a skipped step has status `skipped`.' },
  retry: { ...retryPolicy, description: "Retry policy, merged over the playbook's `defaults.retry`." },
  timeout: { ...duration, description: 'Deadline of the whole step, retries included.' },
  continueOnError: { type: 'boolean', description: 'A failure of this step does not fail the run. Default false.' },
  rescue: {
    ...stepList,
    description: 'Runs when the step failed after its retries; if rescue succeeds the step counts as recovered.',
  },
  always: { ...stepList, description: 'Runs after the step and its rescue, whatever happened.' },
};

/** A boolean written as is, or computed. */
export const booleanOrExpression: JsonSchema = { anyOf: [{ type: 'boolean' }, expressionString] };
