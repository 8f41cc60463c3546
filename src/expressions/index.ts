export type { ExpressionContext, Template } from './types.js';
export { compileTemplate, tryCompileTemplate, EXPRESSION_LIMITS, type TemplateCompilation } from './compile-template.js';
export { ExpressionError, ExpressionErrorCode, isExpressionError, type ExpressionWhere } from './expression-error.js';
export { parseDuration, isDuration, DURATION_PATTERN_SOURCE } from './duration.js';
export { normaliseValue, FORBIDDEN_KEYS } from './normalise.js';
export { extraFunctions } from './functions.js';
