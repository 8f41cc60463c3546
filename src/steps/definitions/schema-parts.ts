/**
 * JSON Schema pieces the step declarations share, so a duration or an expression is
 * written one way in every kind.
 */
import { DURATION_PATTERN_SOURCE } from '../../expressions/index.js';

export type JsonSchema = Record<string, unknown>;

/** A string that is one `${{ }}` expression: accepted wherever a value may be computed. */
export const EXPRESSION_PATTERN = '^\\s*\\$\\{\\{[\\s\\S]*\\}\\}\\s*$';

export const expressionString: JsonSchema = {
  type: 'string',
  pattern: EXPRESSION_PATTERN,
  description: 'A `${{ }}` expression computing the value at run time.',
};

/** `schema`, or an expression computing a value of it at run time. */
export function orExpression(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, expressionString] };
}

/** A duration fixed when the playbook loads: `500ms`, `30s`, `5m`, `2h`, `1h30m`, or milliseconds. */
export const duration: JsonSchema = {
  type: ['string', 'integer'],
  minimum: 0,
  pattern: DURATION_PATTERN_SOURCE,
  description: 'A duration: `500ms`, `30s`, `5m`, `2h`, `1h30m`, `1d`, or milliseconds as an integer.',
};

/** Any value; strings may hold `${{ }}` anywhere. */
export const anyTemplate: JsonSchema = { description: 'Any value; strings may hold `${{ }}` expressions.' };

/** A list of steps (the playbook's, a block's, a loop's, a branch's). */
export const stepList: JsonSchema = { type: 'array', items: { $ref: '#/$defs/step' } };

/** Step ids are identifiers so expressions can name them: `steps.<id>`. */
export const STEP_ID_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

/**
 * Input names are identifiers, as step ids are: expressions name them (`inputs.<name>`), the CLI
 * takes them in `-i name=value`, and a form puts them in its fields' ids and names.
 */
export const inputNames: JsonSchema = {
  pattern: STEP_ID_PATTERN,
  description: 'An input name: letters, digits and `_`, not starting with a digit.',
};

/** An input declaration (the playbook's `inputs`, an approval gate's form): a JSON Schema with a `type`, plus `secret` and `default`. */
export const inputDeclaration: JsonSchema = {
  type: 'object',
  description: 'An input: a JSON Schema with a `type`, plus `secret` and `default`.',
  required: ['type'],
  properties: {
    type: { enum: ['string', 'integer', 'number', 'boolean', 'array', 'object'] },
    description: { type: 'string' },
    secret: { type: 'boolean', description: 'Redacted in logs, outputs, errors and the run store. Default false.' },
    default: {},
  },
};
