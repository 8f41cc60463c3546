import { FleetbookError } from '../errors/index.js';

export const ExpressionErrorCode = {
  parse: 'EXPRESSION_PARSE',
  evaluation: 'EXPRESSION_EVALUATION',
  /** The expression would build a value larger than the allocation limits. */
  limit: 'EXPRESSION_LIMIT',
} as const;
export type ExpressionErrorCode = (typeof ExpressionErrorCode)[keyof typeof ExpressionErrorCode];

/** Where an expression was written: the field, and the step when it sits in one. */
export interface ExpressionWhere {
  /** JSON pointer of the field in the playbook, e.g. `/steps/1/with/id`. */
  pointer: string;
  /** Id of the step the field belongs to, for messages. */
  stepId?: string;
}

export interface ExpressionErrorOptions {
  code: ExpressionErrorCode;
  where: ExpressionWhere;
  /** The expression text between `${{` and `}}`, as written. */
  expression: string;
  /** 0-based character offset of the problem inside `expression`. */
  position: number;
  /** 0-based character offset of the problem inside the whole string value, for locating it in the file. */
  offsetInValue: number;
  /** JSONata's own error code (`S0202`, `T2001`...), when the error came from it. */
  jsonataCode?: string;
  cause?: unknown;
}

/**
 * An expression that does not parse (at load time) or fails while evaluated (at run
 * time). The message names the field, the step and the position inside the expression.
 */
export class ExpressionError extends FleetbookError {
  declare readonly code: ExpressionErrorCode;
  readonly pointer: string;
  readonly stepId: string | undefined;
  readonly expression: string;
  readonly position: number;
  readonly offsetInValue: number;
  readonly jsonataCode: string | undefined;
  /** The reason alone, without the location prefix: for messages that print the location their own way. */
  readonly reason: string;

  constructor(reason: string, options: ExpressionErrorOptions) {
    const step = options.where.stepId === undefined ? '' : ` of step '${options.where.stepId}'`;
    const verb = options.code === ExpressionErrorCode.parse ? 'does not parse' : 'failed';
    super(
      `Expression \${{ ${options.expression.trim()} }} at ${options.where.pointer || '/'}${step} ${verb} ` +
        `(position ${options.position + 1} of the expression): ${reason}`,
      {
        code: options.code,
        cause: options.cause,
        details: {
          pointer: options.where.pointer,
          stepId: options.where.stepId,
          position: options.position,
          jsonataCode: options.jsonataCode,
        },
      },
    );
    this.name = 'ExpressionError';
    this.pointer = options.where.pointer;
    this.stepId = options.where.stepId;
    this.expression = options.expression;
    this.position = options.position;
    this.offsetInValue = options.offsetInValue;
    this.jsonataCode = options.jsonataCode;
    this.reason = reason;
  }
}

export function isExpressionError(error: unknown): error is ExpressionError {
  return error instanceof ExpressionError;
}
