import type jsonata from 'jsonata';

/**
 * What a direct evaluator returns when the values it met need JSONata itself: an array on a
 * path (JSONata maps the rest of the path over it), an operand of a type the evaluator leaves
 * to JSONata (its coercions and its errors), a number result that is not finite.
 */
export const NEEDS_JSONATA: unique symbol = Symbol('needs JSONata');

/** The value of an expression on a context, or `NEEDS_JSONATA`. Never throws, never awaits. */
export type DirectEvaluator = (context: object) => unknown;

/**
 * A synchronous evaluator for the expressions most steps are made of, or undefined when the
 * expression is not one of them: paths of plain names (`system.region`), literals, arithmetic,
 * comparisons, `&`, `and`/`or`, a unary minus, `?:`, `$exists`, `$not` and `$count`, and
 * parentheses around one of these.
 *
 * JSONata evaluates every node of an expression as an `async` call (a promise per node, a frame
 * and a sequence builder per evaluation): for `n * 2`, more time than the engine's own work on a
 * `set` step. This evaluator gives JSONata's result wherever it answers at all; on any value
 * outside the narrow cases below it answers `NEEDS_JSONATA` and the caller asks JSONata, so
 * coercions, sequences and error messages stay JSONata's own.
 */
export function directEvaluator(ast: jsonata.ExprNode): DirectEvaluator | undefined {
  return compileNode(ast as unknown as AstNode);
}

/** The parts of JSONata's nodes read here (its published type has no `path`, no unary `expression`...). */
interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  expressions?: AstNode[];
  lhs?: AstNode | AstNode[];
  rhs?: AstNode;
  expression?: AstNode;
  condition?: AstNode;
  then?: AstNode;
  else?: AstNode;
  procedure?: AstNode;
  arguments?: AstNode[];
  name?: unknown;
}

/** Keys a node may have and still be compiled here; any other (`predicate`, `stages`, `group`, `keepArray`...) changes what JSONata does. */
const PLAIN_KEYS: Readonly<Record<string, ReadonlySet<string>>> = {
  path: new Set(['type', 'steps']),
  name: new Set(['type', 'value', 'position']),
  literal: new Set(['type', 'value', 'position']),
  binary: new Set(['type', 'value', 'position', 'lhs', 'rhs']),
  unary: new Set(['type', 'value', 'position', 'expression']),
  condition: new Set(['type', 'position', 'condition', 'then', 'else']),
  block: new Set(['type', 'position', 'expressions']),
  // A call's node has a `name` member, undefined, from JSONata's parser.
  function: new Set(['type', 'name', 'value', 'position', 'arguments', 'procedure']),
  variable: new Set(['type', 'value', 'position']),
};

function hasOnlyKeys(node: object, kind: string): boolean {
  const allowed = PLAIN_KEYS[kind];
  return allowed !== undefined && Object.keys(node).every((key) => allowed.has(key));
}

function compileNode(node: AstNode): DirectEvaluator | undefined {
  switch (node.type) {
    case 'path':
      return compilePath(node);
    case 'string':
    case 'number':
    case 'value': {
      if (!hasOnlyKeys(node, 'literal')) return undefined;
      const { value } = node;
      return () => value;
    }
    case 'binary':
      return compileBinary(node);
    case 'unary':
      return compileNegation(node);
    case 'condition':
      return compileCondition(node);
    case 'function':
      return compileCall(node);
    case 'block': {
      // Parentheses around one expression; a block of several binds variables in a frame of its own.
      const [only, ...rest] = node.expressions ?? [];
      return hasOnlyKeys(node, 'block') && only !== undefined && rest.length === 0 ? compileNode(only) : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * A path of plain names, looked up as JSONata looks names up: own properties only, nothing on a
 * value that is not an object. An array before the last name needs JSONata (it maps the rest of
 * the path over the array); one at the end is the value, as JSONata returns it.
 */
function compilePath(node: AstNode): DirectEvaluator | undefined {
  const steps = node.steps ?? [];
  if (steps.length === 0 || !hasOnlyKeys(node, 'path')) return undefined;
  const names: string[] = [];
  for (const step of steps) {
    if (step.type !== 'name' || typeof step.value !== 'string' || !hasOnlyKeys(step, 'name')) return undefined;
    names.push(step.value);
  }
  return (context) => {
    let value: unknown = context;
    for (const name of names) {
      if (Array.isArray(value)) return NEEDS_JSONATA;
      if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return undefined;
      value = (value as Record<string, unknown>)[name];
    }
    return value;
  };
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** Values `=` compares with `===` in JSONata as here (its deep equality on two primitives). */
const isPrimitive = (value: unknown): value is string | number | boolean | null =>
  value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/**
 * An operand `&` joins as JSONata's `$string` writes it: a string as it is, an integer below
 * 10^15 in its digits. Others (fractions, which `$string` rounds to 15 significant digits, and
 * booleans, null, objects) need JSONata.
 */
function concatenable(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 1e15) return String(value);
  return undefined;
}

type Operation = (lhs: unknown, rhs: unknown) => unknown;

/** A number result that is not finite needs JSONata (its `D1001` where it refuses one). */
const arithmetic =
  (apply: (lhs: number, rhs: number) => number): Operation =>
  (lhs, rhs) => {
    if (!isFiniteNumber(lhs) || !isFiniteNumber(rhs)) return NEEDS_JSONATA;
    const result = apply(lhs, rhs);
    return Number.isFinite(result) ? result : NEEDS_JSONATA;
  };

/** JSONata compares two numbers or two strings; any other pair is its error (or undefined). */
const comparison =
  (apply: (lhs: number | string, rhs: number | string) => boolean): Operation =>
  (lhs, rhs) =>
    (isFiniteNumber(lhs) && isFiniteNumber(rhs)) || (typeof lhs === 'string' && typeof rhs === 'string')
      ? apply(lhs, rhs)
      : NEEDS_JSONATA;

const OPERATIONS: Readonly<Record<string, Operation>> = {
  '+': arithmetic((lhs, rhs) => lhs + rhs),
  '-': arithmetic((lhs, rhs) => lhs - rhs),
  '*': arithmetic((lhs, rhs) => lhs * rhs),
  '/': arithmetic((lhs, rhs) => lhs / rhs),
  '%': arithmetic((lhs, rhs) => lhs % rhs),
  '<': comparison((lhs, rhs) => lhs < rhs),
  '<=': comparison((lhs, rhs) => lhs <= rhs),
  '>': comparison((lhs, rhs) => lhs > rhs),
  '>=': comparison((lhs, rhs) => lhs >= rhs),
  // Two primitives: JSONata's deep equality is `===` on them (an object or array needs it).
  '=': (lhs, rhs) => (isPrimitive(lhs) && isPrimitive(rhs) ? lhs === rhs : NEEDS_JSONATA),
  '!=': (lhs, rhs) => (isPrimitive(lhs) && isPrimitive(rhs) ? lhs !== rhs : NEEDS_JSONATA),
  '&': (lhs, rhs) => {
    const left = concatenable(lhs);
    const right = concatenable(rhs);
    return left === undefined || right === undefined ? NEEDS_JSONATA : left + right;
  },
};

function compileBinary(node: AstNode): DirectEvaluator | undefined {
  if (!hasOnlyKeys(node, 'binary') || node.rhs === undefined || Array.isArray(node.lhs) || node.lhs === undefined)
    return undefined;
  const lhs = compileNode(node.lhs);
  const rhs = compileNode(node.rhs);
  if (lhs === undefined || rhs === undefined) return undefined;
  if (node.value === 'and' || node.value === 'or') {
    // JSONata evaluates the right side only when the left does not decide: so does this.
    const decidedBy = node.value === 'or';
    return (context) => {
      const left = lhs(context);
      if (typeof left !== 'boolean') return NEEDS_JSONATA;
      if (left === decidedBy) return left;
      const right = rhs(context);
      return typeof right === 'boolean' ? right : NEEDS_JSONATA;
    };
  }
  const operation = OPERATIONS[node.value as string];
  if (operation === undefined) return undefined;
  return (context) => {
    const left = lhs(context);
    if (left === NEEDS_JSONATA) return NEEDS_JSONATA;
    const right = rhs(context);
    return right === NEEDS_JSONATA ? NEEDS_JSONATA : operation(left, right);
  };
}

function compileNegation(node: AstNode): DirectEvaluator | undefined {
  if (node.value !== '-' || node.expression === undefined || !hasOnlyKeys(node, 'unary')) return undefined;
  const operand = compileNode(node.expression);
  if (operand === undefined) return undefined;
  return (context) => {
    const value = operand(context);
    return isFiniteNumber(value) ? -value : NEEDS_JSONATA;
  };
}

/**
 * JSONata's functions that conditions are made of, on one argument: `$exists` of anything, `$not`
 * of a boolean (JSONata casts any other value), `$count` of anything (an array's length, 0 for
 * nothing, 1 for one value). Nothing Fleetbook registers replaces them (a test checks).
 */
const FUNCTIONS: Readonly<Record<string, (value: unknown) => unknown>> = {
  exists: (value) => value !== undefined,
  not: (value) => (value === undefined ? undefined : typeof value === 'boolean' ? !value : NEEDS_JSONATA),
  count: (value) => (value === undefined ? 0 : Array.isArray(value) ? value.length : 1),
};

/** The names of the functions `directEvaluator` evaluates itself. */
export const DIRECT_FUNCTIONS: readonly string[] = Object.keys(FUNCTIONS);

function compileCall(node: AstNode): DirectEvaluator | undefined {
  const { procedure, arguments: given } = node;
  if (node.value !== '(' || node.name !== undefined || !hasOnlyKeys(node, 'function') || procedure === undefined)
    return undefined;
  if (procedure.type !== 'variable' || !hasOnlyKeys(procedure, 'variable') || given?.length !== 1) return undefined;
  const apply = Object.hasOwn(FUNCTIONS, procedure.value as string) ? FUNCTIONS[procedure.value as string] : undefined;
  const argument = given[0] === undefined ? undefined : compileNode(given[0]);
  if (apply === undefined || argument === undefined) return undefined;
  return (context) => {
    const value = argument(context);
    return value === NEEDS_JSONATA ? NEEDS_JSONATA : apply(value);
  };
}

/** `a ? b : c` on a boolean condition (JSONata casts any other value with its own rules). */
function compileCondition(node: AstNode): DirectEvaluator | undefined {
  const { condition, then, else: otherwise } = node;
  if (condition === undefined || then === undefined || !hasOnlyKeys(node, 'condition')) return undefined;
  const test = compileNode(condition);
  const whenTrue = compileNode(then);
  const whenFalse = otherwise === undefined ? () => undefined : compileNode(otherwise);
  if (test === undefined || whenTrue === undefined || whenFalse === undefined) return undefined;
  return (context) => {
    const decided = test(context);
    if (typeof decided !== 'boolean') return NEEDS_JSONATA;
    return decided ? whenTrue(context) : whenFalse(context);
  };
}
