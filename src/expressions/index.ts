export type {
  ExpressionContext,
  PathSegment,
  ReferenceSite,
  Template,
  TemplateExpression,
  TemplateShape,
} from '../model/index.js';
export {
  compileTemplate,
  tryCompileTemplate,
  EXPRESSION_LIMITS,
  type TemplateCompilation,
} from './compile-template.js';
export { ExpressionError, ExpressionErrorCode, isExpressionError, type ExpressionWhere } from './expression-error.js';
export {
  parseDuration,
  isDuration,
  isTooLongDuration,
  durationProblem,
  MAX_DURATION_MS,
  DURATION_PATTERN_SOURCE,
  type ParseDurationOptions,
} from './duration.js';
export { normaliseValue, FORBIDDEN_KEYS } from './normalise.js';
export { extraFunctions, isTableValue, tableOf, tableText, type TableValue } from './functions.js';
export { wholeExpressionOf, type WholeExpression } from './expression-ast.js';
export { trackTaint, taintTrackerOf, type TaintTracker } from './taint.js';
