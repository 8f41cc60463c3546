/**
 * A small builder for the platform's OData filter subset. It returns the filter text to
 * pass as the `filter` input; the client URL-encodes that text as a whole on top.
 *
 * String literals are single-quoted with the reference's reserved characters
 * `! # $ & ' ( ) * + , / : ; = ? @ [ ]` percent-encoded inside, and `%` itself so the
 * encoding can be undone without ambiguity. An encoded `'` is `%27`, so no raw quote is
 * left to double: a server un-doubles `''` while reading the literal and then decodes it
 * (as the simulator's lexer does), and doubling before encoding would leave `''` behind.
 */
import { InvalidFilterError } from './errors.js';

/** A property name, or a nested path as `a/b` or `['a', 'b']`. */
export type FilterProperty = string | readonly string[];
/** Any literal the grammar knows. A `Date` is written as an RFC 3339 timestamp. */
export type FilterLiteral = string | number | boolean | null | Date;
/** What `gt`, `ge`, `lt`, `le` compare with: numbers and timestamps (a `Date` or an RFC 3339 string). */
export type OrderedLiteral = number | Date | string;

const segmentPattern = /^[A-Za-z_][A-Za-z0-9_]*$/;
const rfc3339Pattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const reservedPattern = /[!#$&'()*+,/:;=?@[\]%]/g;

function property(path: FilterProperty): string {
  const segments = typeof path === 'string' ? path.split('/') : [...path];
  if (segments.length === 0 || !segments.every((segment) => segmentPattern.test(segment))) {
    throw new InvalidFilterError(
      `'${typeof path === 'string' ? path : path.join('/')}' is not a property path: use names of letters, digits and _ separated by '/'.`,
    );
  }
  return segments.join('/');
}

function encodeString(text: string): string {
  const encoded = text.replace(
    reservedPattern,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return `'${encoded}'`;
}

function timestamp(value: Date): string {
  if (Number.isNaN(value.getTime())) throw new InvalidFilterError('An invalid Date cannot be a filter literal.');
  return value.toISOString();
}

/** The literal as the grammar writes it. */
function literal(value: FilterLiteral): string {
  if (value === null) return 'null';
  if (value instanceof Date) return timestamp(value);
  switch (typeof value) {
    case 'string':
      return encodeString(value);
    case 'boolean':
      return String(value);
    case 'number':
      if (!Number.isFinite(value))
        throw new InvalidFilterError(`${value} cannot be a filter literal: use a finite number.`);
      return String(value);
    default:
      throw new InvalidFilterError(`A ${typeof value} cannot be a filter literal.`);
  }
}

function ordered(op: string, value: OrderedLiteral): string {
  if (typeof value === 'string') {
    if (!rfc3339Pattern.test(value)) {
      throw new InvalidFilterError(`'${op}' compares numbers and timestamps; '${value}' is not an RFC 3339 timestamp.`);
    }
    return value;
  }
  return literal(value);
}

/** Whether `expression` has ` or ` outside quotes and parentheses (so it needs parentheses inside `and` / `not`). */
function hasTopLevel(expression: string, word: 'or' | ' '): boolean {
  let depth = 0;
  let quoted = false;
  for (let index = 0; index < expression.length; index += 1) {
    const char = expression[index];
    if (char === "'") quoted = !quoted;
    else if (!quoted && (char === '(' || char === '[')) depth += 1;
    else if (!quoted && (char === ')' || char === ']')) depth -= 1;
    else if (!quoted && depth === 0 && (word === ' ' ? char === ' ' : expression.startsWith(' or ', index)))
      return true;
  }
  return false;
}

function combine(joiner: 'and' | 'or', parts: readonly string[]): string {
  const present = parts.filter((part) => part.trim().length > 0);
  if (present.length === 0) throw new InvalidFilterError(`'${joiner}' needs at least one expression.`);
  return present.map((part) => (joiner === 'and' && hasTopLevel(part, 'or') ? `(${part})` : part)).join(` ${joiner} `);
}

/**
 * The filter builder.
 * @example
 * f.and(f.eq('version', '2.4.0'), f.in('state', ['ONLINE', 'OFFLINE']))
 * // "version eq '2.4.0' and state in ['ONLINE', 'OFFLINE']"
 */
export const f = {
  eq: (path: FilterProperty, value: FilterLiteral): string => `${property(path)} eq ${literal(value)}`,
  ne: (path: FilterProperty, value: FilterLiteral): string => `${property(path)} ne ${literal(value)}`,
  gt: (path: FilterProperty, value: OrderedLiteral): string => `${property(path)} gt ${ordered('gt', value)}`,
  ge: (path: FilterProperty, value: OrderedLiteral): string => `${property(path)} ge ${ordered('ge', value)}`,
  lt: (path: FilterProperty, value: OrderedLiteral): string => `${property(path)} lt ${ordered('lt', value)}`,
  le: (path: FilterProperty, value: OrderedLiteral): string => `${property(path)} le ${ordered('le', value)}`,
  /** `state in ['A', 'B']`: matches one of the values. */
  in: (path: FilterProperty, values: readonly FilterLiteral[]): string => {
    if (values.length === 0) throw new InvalidFilterError(`'in' on '${property(path)}' needs at least one value.`);
    return `${property(path)} in [${values.map(literal).join(', ')}]`;
  },
  /** `['A', 'B'] in state`: `in` with the property on the right, as the grammar also allows. */
  listIn: (values: readonly FilterLiteral[], path: FilterProperty): string => {
    if (values.length === 0) throw new InvalidFilterError(`'in' on '${property(path)}' needs at least one value.`);
    return `[${values.map(literal).join(', ')}] in ${property(path)}`;
  },
  /** `'ann' in username`: the user area's substring form, true when the property contains the text. */
  textIn: (text: string, path: FilterProperty): string => {
    if (typeof text !== 'string')
      throw new InvalidFilterError(`The substring form of 'in' takes a string, got a ${typeof text}.`);
    return `${encodeString(text)} in ${property(path)}`;
  },
  /** `not (expression)`; a single token is negated without parentheses. */
  not: (expression: string): string => (hasTopLevel(expression, ' ') ? `not (${expression})` : `not ${expression}`),
  /** Joins with `and`; an operand holding a top-level `or` is parenthesised. */
  and: (...parts: string[]): string => combine('and', parts),
  or: (...parts: string[]): string => combine('or', parts),
  contains: (path: FilterProperty, text: string): string => `contains(${property(path)}, ${encodeString(text)})`,
  startswith: (path: FilterProperty, text: string): string => `startswith(${property(path)}, ${encodeString(text)})`,
  endswith: (path: FilterProperty, text: string): string => `endswith(${property(path)}, ${encodeString(text)})`,
} as const;
