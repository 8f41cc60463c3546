import jsonata from 'jsonata';

/** A string value that is one `${{ }}` expression and nothing else: its syntax tree, and where its text starts. */
export interface WholeExpression {
  /** JSONata's syntax tree (node shapes wider than its published type). */
  ast: jsonata.ExprNode;
  /** Offset of the expression's text (just past `${{`) in the string value. */
  offset: number;
}

/**
 * The syntax tree of `value` when it is exactly one expression, or undefined (text around it,
 * several expressions, one that does not parse: the template compiler reports that). Load-time
 * checks that read more than a plain path's names use it; it parses again, so they call it only
 * on the few values whose shape they read.
 */
export function wholeExpressionOf(value: string): WholeExpression | undefined {
  const open = value.indexOf('${{');
  const close = value.lastIndexOf('}}');
  if (open === -1 || close < open + 3 || value.indexOf('${{', open + 3) !== -1) return undefined;
  if (value.slice(0, open).trim() !== '' || value.slice(close + 2).trim() !== '') return undefined;
  const offset = open + 3;
  try {
    return { ast: jsonata(value.slice(offset, close)).ast(), offset };
  } catch {
    return undefined;
  }
}
