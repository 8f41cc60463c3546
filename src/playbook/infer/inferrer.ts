/**
 * Type inference over one JSONata expression's syntax tree, from the types of the context's
 * names. It follows the value through paths (a field of a list is the field of its items),
 * predicates (their context is an item), object constructors (`{...}`, `.{...}`: objects of
 * exactly their literal keys), blocks and `:=` (a variable for the rest of its block), lambdas
 * and the higher-order built-ins (their parameters bound to the items' type), `@` and `#`,
 * conditionals (either branch), and the built-ins' return types. A read of a field that the
 * value's type says cannot be there is a miss, kept with its place and message.
 *
 * `$lookup` with a key written as a string is the field it names.
 *
 * Sound, or silent: what is not modelled (`$eval`, `$lookup` with a computed key, `%`, wildcards,
 * a transform, a function not typed) is of unknown type, and every read through it is accepted.
 */
import { fieldOf, itemOf, typeOfLiteral, UNKNOWN, type JsonSchema } from '../../steps/index.js';
import { builtinReturn } from './builtins.js';
import { missMessage, type MissPlace } from './miss-message.js';
import {
  Env,
  isNode,
  joinTypes,
  listOf,
  nodes,
  UNKNOWN_VALUE,
  type AstNode,
  type Closure,
  type FieldMiss,
  type InferScope,
  type Value,
} from './values.js';

/** Lambda applications followed per expression: beyond, a call is of unknown type (no blow-up on nested calls). */
const MAX_APPLICATIONS = 200;

const STRING: JsonSchema = { type: 'string' };
const NUMBER: JsonSchema = { type: 'number' };
const BOOLEAN: JsonSchema = { type: 'boolean' };
const BOOLEAN_OPERATORS = new Set(['and', 'or', '=', '!=', '<', '<=', '>', '>=', 'in']);
const NUMBER_OPERATORS = new Set(['+', '-', '*', '/', '%']);

/** A name as written in a path: back-quoted when it is not a plain name. */
function writtenName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name}\``;
}

/** A step of a path as written, for messages: `name`, `$x`, `name[0]`, `name[…]`, `(…)`. */
function writtenStep(step: AstNode): string {
  const head =
    step.type === 'name'
      ? writtenName(String(step.value))
      : step.type === 'variable'
        ? `$${String(step.value)}`
        : step.type === 'unary' && step.value === '{'
          ? '{…}'
          : '(…)';
  return head + nodes(step.stages).map(writtenFilter).join('');
}

function writtenFilter(stage: AstNode): string {
  const expr = isNode(stage.expr) ? stage.expr : undefined;
  return expr?.type === 'number' ? `[${String(expr.value)}]` : '[…]';
}

/** The value read by one item of a list of it (a single value is its own item). */
function itemValue(value: Value): Value {
  return { ...value, type: itemOf(value.type), lambda: undefined };
}

/**
 * `$lookup(object, 'key')` with the key written as a string: the field's type, as `object.key`
 * reads it (a list of objects maps to their values, flattened, as JSONata does). A computed key,
 * or a key the type leaves open, is unknown: silent.
 */
function lookupValue(node: AstNode, args: readonly Value[], chained: boolean): Value {
  const [object] = args;
  const key = nodes(node.arguments)[chained ? 0 : 1];
  if (object === undefined || key?.type !== 'string' || args.length !== 2) return UNKNOWN_VALUE;
  const lookup = fieldOf(object.type, String(key.value));
  return lookup.found ? { type: lookup.type } : UNKNOWN_VALUE;
}

/** One expression's inference: its root context, its lambdas followed, its misses. */
export class Inferrer {
  /** The root context (`$$`): a type of its own, whose fields are the scope's names. */
  private readonly rootType: JsonSchema = {};
  /** Types whose fields are looked up one by one (`steps`, `inputs`), and the name each is. */
  private readonly byMember = new Map<JsonSchema, { root: string; member: (name: string) => JsonSchema | undefined }>();
  private readonly roots = new Map<string, Value>();
  private readonly applying = new Set<Closure>();
  private applications = 0;
  /** Misses by offset: a lambda's body is walked once per call, its misses said once. */
  readonly misses = new Map<number, FieldMiss>();

  constructor(
    private readonly scope: InferScope,
    private readonly text: string,
  ) {}

  /** The type of the whole expression. */
  run(ast: AstNode): JsonSchema {
    const type = this.infer(ast, { type: this.rootType }, new Env()).type;
    // The root's own type means nothing outside this expression.
    return type === this.rootType || this.byMember.has(type) ? UNKNOWN : type;
  }

  infer(node: AstNode, context: Value, env: Env): Value {
    let value = this.inferNode(node, context, env);
    if (node.type !== 'path') value = this.filter(node.predicate, value, env);
    const group = node.group as { lhs?: unknown } | undefined;
    if (typeof group === 'object' && group !== null) value = this.object(group.lhs, value, env);
    return value;
  }

  private inferNode(node: AstNode, context: Value, env: Env): Value {
    switch (node.type) {
      case 'path':
        return this.path(node, context, env);
      case 'name':
        return this.field(context, node, () => ({ before: '', after: '', afterNames: [], fromSteps: false }));
      case 'variable':
        return this.variable(String(node.value), context, env);
      case 'string':
      case 'number':
      case 'value':
        return { type: typeOfLiteral(node.value) };
      case 'block':
        return this.block(node, context, env);
      case 'bind':
        return this.bind(node, context, env);
      case 'condition':
        return this.condition(node, context, env);
      case 'binary':
        return this.binary(node, context, env);
      case 'unary':
        return this.unary(node, context, env);
      case 'function':
        return this.call(node, context, env);
      case 'apply':
        return this.applyChain(node, context, env);
      case 'lambda':
        return this.lambda(node, context, env);
      case 'partial':
        for (const argument of nodes(node.arguments)) this.infer(argument, context, env);
        return UNKNOWN_VALUE;
      default:
        // A wildcard, `**`, `%`, a regex, a transform: not followed.
        return UNKNOWN_VALUE;
    }
  }

  /** `$` the context, `$$` the root, else a variable bound in a block or a lambda's parameter. */
  private variable(name: string, context: Value, env: Env): Value {
    if (name === '') return context;
    if (name === '$') return { type: this.rootType, label: '$$' };
    return env.get(name) ?? UNKNOWN_VALUE;
  }

  /** A path: each step reads from the items of the one before; `@` keeps the context, `#` binds the index. */
  private path(node: AstNode, context: Value, outer: Env): Value {
    const steps = nodes(node.steps);
    const env = new Env(outer);
    let current = context;
    for (const [index, step] of steps.entries()) {
      let read =
        step.type === 'name'
          ? this.field(current, step, () => this.placeIn(steps, index))
          : this.pathStep(step, current, env, index === 0);
      read = this.filter(step.stages, read, env);
      if (typeof step.index === 'string') env.set(step.index, { type: { type: 'integer' } });
      if (typeof step.focus === 'string') {
        env.set(step.focus, { ...itemValue(read), label: `$${step.focus}` });
        read = current;
      }
      current = read;
    }
    return current;
  }

  /** A step that is not a name: evaluated against each item of what the path has read so far. */
  private pathStep(step: AstNode, current: Value, env: Env, first: boolean): Value {
    if (step.type === 'sort') {
      for (const term of nodes(step.terms)) {
        const expression = (term as { expression?: unknown }).expression;
        if (isNode(expression)) this.infer(expression, itemValue(current), env);
      }
      return current;
    }
    if (first) return this.infer(step, current, env);
    const read = this.infer(step, itemValue(current), env);
    if (itemOf(current.type) === current.type) return read;
    // Mapped over a list: the lists each item gives are flattened into one sequence (JSONata).
    return { type: listOf(read.type.type === 'array' ? itemOf(read.type) : read.type) };
  }

  /** Where a name at `index` of a path is written, for the message of a miss. */
  private placeIn(steps: AstNode[], index: number): MissPlace {
    const afterSteps: AstNode[] = [];
    for (const step of steps.slice(index + 1)) {
      if (step.type !== 'name') break;
      afterSteps.push(step);
    }
    const [head, second] = steps;
    const startsAtSteps =
      (head?.type === 'name' && head.value === 'steps') ||
      (head?.type === 'variable' && head.value === '$' && second?.type === 'name' && second.value === 'steps');
    return {
      before: steps.slice(0, index).map(writtenStep).join('.'),
      after: afterSteps.map((step) => `.${writtenStep(step)}`).join(''),
      afterNames: afterSteps.map((step) => String(step.value)),
      fromSteps: startsAtSteps,
    };
  }

  /** Predicates (`[...]`): evaluated against each item; a number picks one item (of the item type), any other keeps the type. */
  private filter(stages: unknown, value: Value, env: Env): Value {
    let current = value;
    for (const stage of nodes(stages)) {
      if (stage.type !== 'filter' || !isNode(stage.expr)) continue;
      if (stage.expr.type !== 'number') this.infer(stage.expr, itemValue(current), env);
      const picksOne = stage.expr.type === 'number';
      const suffix = picksOne ? `[${String(stage.expr.value)}]` : '[…]';
      current = {
        ...current,
        // `items[0]` is the first item, not a list of one: `items[0].id` is one id.
        ...(picksOne ? { type: itemOf(current.type) } : {}),
        ...(current.label === undefined ? {} : { label: current.label + suffix }),
      };
    }
    return current;
  }

  /** `name` read from `from`: a miss when its type says it cannot be there. */
  private field(from: Value, node: AstNode, place: () => MissPlace): Value {
    const name = String(node.value);
    if (from.type === this.rootType) return this.root(name);
    const members = this.byMember.get(from.type);
    if (members !== undefined) {
      const type = members.member(name) ?? UNKNOWN;
      const label = `${members.root}.${writtenName(name)}`;
      return { type, label, ...(members.root === 'steps' ? { fromStep: { id: name, names: [] } } : {}) };
    }
    const lookup = fieldOf(from.type, name);
    if (lookup.found) {
      const label = from.label === undefined ? undefined : `${from.label}.${writtenName(name)}`;
      const fromStep = from.fromStep && { id: from.fromStep.id, names: [...from.fromStep.names, name] };
      return { type: lookup.type, ...(label ? { label } : {}), ...(fromStep ? { fromStep } : {}) };
    }
    if (lookup.known) this.miss(node, missMessage(from, name, lookup, place(), this.stepLookup()));
    return UNKNOWN_VALUE;
  }

  /** A top-level name of the context. */
  private root(name: string): Value {
    const known = this.roots.get(name);
    if (known !== undefined) return known;
    const type = this.scope.root(name);
    let value: Value = UNKNOWN_VALUE;
    if (type !== undefined && typeof type.member === 'function') {
      const members: JsonSchema = {};
      this.byMember.set(members, { root: name, member: type.member as (name: string) => JsonSchema | undefined });
      value = { type: members, label: name };
    } else if (type !== undefined) value = { type: type as JsonSchema, label: name };
    this.roots.set(name, value);
    return value;
  }

  private stepLookup(): { record(id: string): JsonSchema | undefined; stepIds(): Iterable<string> } {
    return {
      record: (id) => {
        const steps = this.scope.root('steps');
        return steps !== undefined && typeof steps.member === 'function'
          ? (steps.member as (name: string) => JsonSchema | undefined)(id)
          : undefined;
      },
      stepIds: () => this.scope.stepIds?.() ?? [],
    };
  }

  private miss(node: AstNode, message: string): void {
    const end = typeof node.position === 'number' ? node.position : 0;
    const quoted = ['`', '"', "'"].includes(this.text[end - 1] ?? '');
    const length = String(node.value).length + (quoted ? 2 : 0);
    const offset = Math.max(0, end - length);
    if (!this.misses.has(offset)) this.misses.set(offset, { offset, length, message });
  }

  /** `( a; b )`: its own variables; the value of its last expression. */
  private block(node: AstNode, context: Value, outer: Env): Value {
    const env = new Env(outer);
    let last = UNKNOWN_VALUE;
    for (const expression of nodes(node.expressions)) last = this.infer(expression, context, env);
    return last;
  }

  /** `$x := value`: bound for the rest of the block. */
  private bind(node: AstNode, context: Value, env: Env): Value {
    const value = isNode(node.rhs) ? this.infer(node.rhs, context, env) : UNKNOWN_VALUE;
    if (isNode(node.lhs) && node.lhs.type === 'variable') {
      const name = String(node.lhs.value);
      env.set(name, value.lambda ? value : { type: value.type, label: `$${name}` });
    }
    return value;
  }

  private condition(node: AstNode, context: Value, env: Env): Value {
    if (isNode(node.condition)) this.infer(node.condition, context, env);
    const then = isNode(node.then) ? this.infer(node.then, context, env) : undefined;
    const otherwise = isNode(node.else) ? this.infer(node.else, context, env) : undefined;
    // Without an else the value is nothing when the condition fails: the then branch's type holds.
    const branches = [then, otherwise].filter((branch): branch is Value => branch !== undefined);
    return { type: joinTypes(branches.map((branch) => branch.type)) };
  }

  private binary(node: AstNode, context: Value, env: Env): Value {
    const lhs = isNode(node.lhs) ? this.infer(node.lhs, context, env) : UNKNOWN_VALUE;
    const rhs = isNode(node.rhs) ? this.infer(node.rhs, context, env) : UNKNOWN_VALUE;
    const operator = String(node.value);
    if (BOOLEAN_OPERATORS.has(operator)) return { type: BOOLEAN };
    if (NUMBER_OPERATORS.has(operator)) return { type: NUMBER };
    if (operator === '&') return { type: STRING };
    if (operator === '..') return { type: listOf({ type: 'integer' }) };
    // `?:` and `??`: one side or the other.
    if (operator === '?:' || operator === '??') return { type: joinTypes([lhs.type, rhs.type]) };
    return UNKNOWN_VALUE;
  }

  private unary(node: AstNode, context: Value, env: Env): Value {
    if (node.value === '-') {
      if (isNode(node.expression)) this.infer(node.expression, context, env);
      return { type: NUMBER };
    }
    if (node.value === '[') {
      const items = nodes(node.expressions).map((item) => {
        const type = this.infer(item, context, env).type;
        // A list in a list constructor is spliced in, unless it is itself written as `[...]`.
        return item.type === 'unary' && item.value === '[' ? type : itemOf(type);
      });
      return { type: listOf(items.length === 0 ? UNKNOWN : joinTypes(items)) };
    }
    if (node.value === '{') return this.object(node.lhs, context, env);
    return UNKNOWN_VALUE;
  }

  /**
   * `{ "k": v, ... }`: an object of exactly its keys when every key is written as a string. Also
   * a grouping `path{ k: v }`, whose keys and values read the items grouped.
   */
  private object(pairs: unknown, context: Value, env: Env): Value {
    const properties: Record<string, JsonSchema> = {};
    let literalKeys = true;
    for (const pair of Array.isArray(pairs) ? (pairs as unknown[]) : []) {
      const [key, value] = Array.isArray(pair) ? (pair as unknown[]) : [];
      if (!isNode(key) || !isNode(value)) continue;
      // A computed key is evaluated (what it reads is checked); the object's keys are then unknown.
      if (key.type !== 'string' || typeof key.value !== 'string') {
        this.infer(key, context, env);
        literalKeys = false;
      }
      const valueType = this.infer(value, context, env).type;
      if (literalKeys) properties[String(key.value)] = valueType;
    }
    if (!literalKeys) return { type: { type: 'object' } };
    return { type: { type: 'object', properties, additionalProperties: false } };
  }

  /** A function call: a lambda bound to the name, else a built-in (`first` is what `~>` feeds in). */
  private call(node: AstNode, context: Value, env: Env, first?: Value): Value {
    const args = nodes(node.arguments).map((argument) => this.infer(argument, context, env));
    if (first !== undefined) args.unshift(first);
    const procedure = isNode(node.procedure) ? node.procedure : undefined;
    if (procedure?.type !== 'variable') {
      if (procedure !== undefined) this.infer(procedure, context, env);
      return UNKNOWN_VALUE;
    }
    const name = String(procedure.value);
    const bound = env.get(name);
    if (bound !== undefined) return bound.lambda ? this.apply(bound.lambda, args) : UNKNOWN_VALUE;
    if (name === 'lookup') return lookupValue(node, args, first !== undefined);
    return {
      type: builtinReturn(name, args, (fn, params) => (fn?.lambda ? this.apply(fn.lambda, params) : UNKNOWN_VALUE)),
    };
  }

  /** `value ~> $f(args)` is `$f(value, args)`; `value ~> $g` is `$g(value)`. */
  private applyChain(node: AstNode, context: Value, env: Env): Value {
    const value = isNode(node.lhs) ? this.infer(node.lhs, context, env) : UNKNOWN_VALUE;
    if (!isNode(node.rhs)) return UNKNOWN_VALUE;
    if (node.rhs.type === 'function') return this.call(node.rhs, context, env, value);
    const fn = this.infer(node.rhs, context, env);
    return fn.lambda ? this.apply(fn.lambda, [value]) : UNKNOWN_VALUE;
  }

  /** A lambda's value; its body is walked once with parameters of unknown type, so what it reads is checked even if never called. */
  private lambda(node: AstNode, context: Value, env: Env): Value {
    const closure: Closure = { node, env, context };
    this.apply(closure, []);
    return { type: UNKNOWN, lambda: closure };
  }

  /** The type a lambda returns for arguments of these types (unknown when it calls itself, or past the limit). */
  private apply(closure: Closure, args: readonly Value[]): Value {
    if (this.applying.has(closure) || this.applications >= MAX_APPLICATIONS || !isNode(closure.node.body))
      return UNKNOWN_VALUE;
    this.applications += 1;
    this.applying.add(closure);
    const env = new Env(closure.env);
    for (const [index, parameter] of nodes(closure.node.arguments).entries()) {
      const argument = args[index] ?? UNKNOWN_VALUE;
      env.set(
        String(parameter.value),
        argument.lambda ? argument : { ...argument, label: `$${String(parameter.value)}` },
      );
    }
    try {
      return this.infer(closure.node.body, closure.context, env);
    } finally {
      this.applying.delete(closure);
    }
  }
}
