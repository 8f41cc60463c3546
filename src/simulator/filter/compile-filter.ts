/**
 * The OData filter subset of the reference, compiled once into a predicate. The parser is
 * a recursive descent over `or` → `and` → `not` → primary, so `and` binds tighter than `or`
 * and `not` applies to the primary (or parenthesised group) after it.
 */
import { createReader, type Comparable, type PropertySchema, type PropertyType } from './property-schema.js';
import { describeToken as describe, syntaxError, tokenize, type LiteralKind, type Token } from './tokenize.js';

export type FilterPredicate = (item: unknown) => boolean;

/** The comparison operators of the grammar (`and`, `or`, `not` are always available). */
export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'in'] as const;
const FUNCTIONS = ['contains', 'startswith', 'endswith'] as const;
type Comparison = Exclude<(typeof FILTER_OPERATORS)[number], 'in'>;
type LiteralToken = Extract<Token, { kind: 'literal' }>;

export interface CompileFilterOptions {
  /**
   * Comparison operators this list accepts (`and`, `or` and `not` are always accepted).
   * @default FILTER_OPERATORS (all of them)
   */
  operators?: readonly string[];
  /**
   * Accept the user area's string functions (`contains`, `startswith`, `endswith`) and its
   * substring form of `in` (`'text' in property`).
   * @default false
   */
  functions?: boolean;
}

const ORDERED_TYPES: ReadonlySet<PropertyType> = new Set(['integer', 'decimal', 'timestamp']);
const ACCEPTED_LITERALS: Record<PropertyType, ReadonlySet<LiteralKind>> = {
  string: new Set(['string', 'null']),
  integer: new Set(['integer', 'null']),
  decimal: new Set(['integer', 'decimal', 'null']),
  timestamp: new Set(['timestamp', 'null']),
  boolean: new Set(['boolean', 'null']),
};

function compare(op: Comparison, left: Comparable, right: Comparable): boolean {
  // Null equals only itself and is never ordered.
  if (left === null || right === null) {
    if (op === 'eq') return left === right;
    if (op === 'ne') return left !== right;
    return false;
  }
  switch (op) {
    case 'eq':
      return left === right;
    case 'ne':
      return left !== right;
    case 'gt':
      return left > right;
    case 'ge':
      return left >= right;
    case 'lt':
      return left < right;
    case 'le':
      return left <= right;
  }
}

class FilterParser {
  private index = 0;
  private readonly tokens: Token[];
  private readonly operators: ReadonlySet<string>;

  constructor(
    text: string,
    private readonly schema: PropertySchema,
    private readonly options: CompileFilterOptions,
  ) {
    this.tokens = tokenize(text, 'filter');
    this.operators = new Set(options.operators ?? FILTER_OPERATORS);
  }

  parse(): FilterPredicate {
    if (this.peek().kind === 'end') throw this.error('empty filter', this.peek());
    const predicate = this.parseOr();
    const rest = this.peek();
    if (rest.kind !== 'end') throw this.error(`unexpected ${describe(rest)}`, rest);
    return predicate;
  }

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.index += 1;
    return token;
  }

  private isWord(token: Token, value: string): boolean {
    return token.kind === 'word' && token.value === value;
  }

  private isPunct(token: Token, value: string): boolean {
    return token.kind === 'punct' && token.value === value;
  }

  private error(problem: string, token: Token): Error {
    return syntaxError('filter', problem, token.pos);
  }

  private expectPunct(value: '(' | ')' | '[' | ']' | ','): void {
    const token = this.next();
    if (!this.isPunct(token, value)) throw this.error(`expected '${value}' but found ${describe(token)}`, token);
  }

  private parseOr(): FilterPredicate {
    const parts = [this.parseAnd()];
    while (this.isWord(this.peek(), 'or')) {
      this.next();
      parts.push(this.parseAnd());
    }
    if (parts.length === 1) return parts[0] as FilterPredicate;
    return (item) => parts.some((part) => part(item));
  }

  private parseAnd(): FilterPredicate {
    const parts = [this.parseNot()];
    while (this.isWord(this.peek(), 'and')) {
      this.next();
      parts.push(this.parseNot());
    }
    if (parts.length === 1) return parts[0] as FilterPredicate;
    return (item) => parts.every((part) => part(item));
  }

  private parseNot(): FilterPredicate {
    if (this.isWord(this.peek(), 'not')) {
      this.next();
      const inner = this.parseNot();
      return (item) => !inner(item);
    }
    return this.parsePrimary();
  }

  private parsePrimary(): FilterPredicate {
    const token = this.peek();
    if (this.isPunct(token, '(')) {
      this.next();
      const inner = this.parseOr();
      this.expectPunct(')');
      return inner;
    }
    if (this.isPunct(token, '[')) return this.parseListInProperty();
    if (token.kind === 'literal') return this.parseSubstringIn();
    if (token.kind === 'word') {
      const after = this.tokens[this.index + 1];
      if (after && this.isPunct(after, '(')) return this.parseFunction();
      return this.parseComparison();
    }
    throw this.error(`expected a property name but found ${describe(token)}`, token);
  }

  private property(token: Token): { path: string; type: PropertyType } {
    if (token.kind !== 'word') throw this.error(`expected a property name but found ${describe(token)}`, token);
    const type = this.schema[token.value];
    if (type === undefined) {
      const known = Object.keys(this.schema).join(', ');
      throw this.error(`unknown property '${token.value}' (filterable: ${known || 'none'})`, token);
    }
    return { path: token.value, type };
  }

  private literalFor(prop: { path: string; type: PropertyType }): LiteralToken {
    const token = this.next();
    if (token.kind !== 'literal') throw this.error(`expected a literal but found ${describe(token)}`, token);
    if (!ACCEPTED_LITERALS[prop.type].has(token.literal)) {
      throw this.error(
        `${token.literal} literal ${token.text} does not match ${prop.type} property '${prop.path}'`,
        token,
      );
    }
    return token;
  }

  private checkOperator(name: string, token: Token): void {
    if (!this.operators.has(name)) {
      throw this.error(
        `operator '${name}' is not supported here (supported: ${[...this.operators].join(', ')})`,
        token,
      );
    }
  }

  private parseList(prop: { path: string; type: PropertyType }): Comparable[] {
    this.expectPunct('[');
    const values: Comparable[] = [];
    if (this.isPunct(this.peek(), ']')) {
      this.next();
      return values;
    }
    for (;;) {
      values.push(this.literalFor(prop).value);
      const token = this.next();
      if (this.isPunct(token, ']')) return values;
      if (!this.isPunct(token, ',')) throw this.error(`expected ',' or ']' but found ${describe(token)}`, token);
    }
  }

  private membership(prop: { path: string; type: PropertyType }, values: Comparable[]): FilterPredicate {
    const read = createReader(prop.path, prop.type);
    const set = new Set(values);
    return (item) => set.has(read(item));
  }

  /** `<property> <op> <literal>` and `<property> in [<literal>, ...]`. */
  private parseComparison(): FilterPredicate {
    const propToken = this.next();
    const prop = this.property(propToken);
    const opToken = this.next();
    if (opToken.kind !== 'word' || !(FILTER_OPERATORS as readonly string[]).includes(opToken.value)) {
      throw this.error(
        `expected an operator (${FILTER_OPERATORS.join(', ')}) after '${prop.path}' but found ${describe(opToken)}`,
        opToken,
      );
    }
    const op = opToken.value as (typeof FILTER_OPERATORS)[number];
    this.checkOperator(op, opToken);
    if (op === 'in') return this.membership(prop, this.parseList(prop));
    if (op !== 'eq' && op !== 'ne' && !ORDERED_TYPES.has(prop.type)) {
      throw this.error(`operator '${op}' does not apply to ${prop.type} property '${prop.path}'`, opToken);
    }
    const literal = this.literalFor(prop).value;
    const read = createReader(prop.path, prop.type);
    return (item) => compare(op, read(item), literal);
  }

  /** `[<literal>, ...] in <property>`: the property on the right side of `in`. */
  private parseListInProperty(): FilterPredicate {
    const listStart = this.index;
    // The literals are typed against the property, which comes after them: find it first.
    let depth = 0;
    let end = listStart;
    for (; end < this.tokens.length; end += 1) {
      const token = this.tokens[end] as Token;
      if (this.isPunct(token, '[')) depth += 1;
      if (this.isPunct(token, ']')) depth -= 1;
      if (depth === 0 || token.kind === 'end') break;
    }
    const inToken = this.tokens[end + 1];
    const propToken = this.tokens[end + 2];
    if (!inToken || !this.isWord(inToken, 'in')) {
      const found = inToken ?? (this.tokens[end] as Token);
      throw this.error(`expected 'in' after a list but found ${describe(found)}`, found);
    }
    this.checkOperator('in', inToken);
    const prop = this.property(propToken as Token);
    const values = this.parseList(prop);
    this.index = end + 3;
    return this.membership(prop, values);
  }

  /** `'<text>' in <property>`: the user area's substring form. */
  private parseSubstringIn(): FilterPredicate {
    const literal = this.next() as LiteralToken;
    const inToken = this.next();
    if (!this.isWord(inToken, 'in')) {
      throw this.error(
        `a filter starts with a property name, found ${literal.literal} literal ${literal.text}`,
        literal,
      );
    }
    this.checkOperator('in', inToken);
    if (!this.options.functions)
      throw this.error(`the substring form '<text>' in <property> is not supported here`, literal);
    const prop = this.property(this.next());
    if (prop.type !== 'string' || literal.literal !== 'string') {
      throw this.error(`the substring form of 'in' needs a string literal and a string property`, literal);
    }
    return this.stringTest(prop.path, (value) => value.includes(literal.value as string));
  }

  /** `contains|startswith|endswith(<property>, '<text>')`. */
  private parseFunction(): FilterPredicate {
    const nameToken = this.next() as Extract<Token, { kind: 'word' }>;
    const name = nameToken.value as (typeof FUNCTIONS)[number];
    if (!(FUNCTIONS as readonly string[]).includes(name)) {
      throw this.error(`unknown function '${nameToken.value}' (known: ${FUNCTIONS.join(', ')})`, nameToken);
    }
    if (!this.options.functions) throw this.error(`function '${name}' is not supported here`, nameToken);
    this.expectPunct('(');
    const propToken = this.next();
    const prop = this.property(propToken);
    if (prop.type !== 'string')
      throw this.error(`function '${name}' needs a string property, '${prop.path}' is ${prop.type}`, propToken);
    this.expectPunct(',');
    const literal = this.literalFor(prop);
    if (literal.literal !== 'string') throw this.error(`function '${name}' needs a string literal`, literal);
    this.expectPunct(')');
    const text = literal.value as string;
    switch (name) {
      case 'contains':
        return this.stringTest(prop.path, (value) => value.includes(text));
      case 'startswith':
        return this.stringTest(prop.path, (value) => value.startsWith(text));
      case 'endswith':
        return this.stringTest(prop.path, (value) => value.endsWith(text));
    }
  }

  private stringTest(path: string, test: (value: string) => boolean): FilterPredicate {
    const read = createReader(path, 'string');
    return (item) => {
      const value = read(item);
      return typeof value === 'string' && test(value);
    };
  }
}

/**
 * Compiles a filter expression of the reference's grammar into a predicate over list items.
 * Throws a 400 `SimHttpError` naming the problem and its 1-based position for malformed
 * text, unknown properties, literals whose type does not match the property, and operators
 * or functions the list does not accept.
 */
export function compileFilter(
  text: string,
  schema: PropertySchema,
  options: CompileFilterOptions = {},
): FilterPredicate {
  return new FilterParser(text, schema, options).parse();
}
