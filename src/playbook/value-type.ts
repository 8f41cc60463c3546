/**
 * The type of a value a playbook computes, for the load-time checks that compare it with what
 * it is given to (a `call`'s request schema). One function, `valueTypeOf`, answers for every
 * check: what it knows today is the value as written, a plain path's type (`PathTypes`), and
 * the objects JSONata constructors build (`{ 'k': v }`, `items.{ ... }`, `[ ... ]` around
 * them); whatever else an expression computes is UNKNOWN. A whole-expression type inferrer
 * replaces the body of `valueTypeOf`, nothing else.
 */
import { wholeExpressionOf, type ReferenceSite, type Template } from '../expressions/index.js';
import { fieldOf, typeOfLiteral, UNKNOWN, type JsonSchema } from '../steps/index.js';
import { inferPartType } from './infer/index.js';
import type { LoopScope, PathTypes } from './path-types.js';
import { splitPointer } from './source-document.js';

/** What a value's type is read against: the playbook's types, and the loop variables in scope there. */
export interface ValueScope {
  types: PathTypes;
  loops: LoopScope;
}

/**
 * Annotation of an object type built by a constructor: the offset of its `{` in the string
 * value, so a problem of the object points at the constructor that builds it.
 */
export const BUILT_AT = 'x-fleetbook-built-at';

/** The type of a plain read (`root.a.b`, no filter) in `scope`; UNKNOWN where a field is not known. */
function typeOfPlainRead(scope: ValueScope, site: ReferenceSite): JsonSchema {
  const root = scope.types.scopeAt(scope.loops).root(site.root);
  if (root === undefined) return UNKNOWN;
  let segments = site.path;
  let type: JsonSchema | undefined;
  if ('member' in root && typeof root.member === 'function') {
    const [first, ...rest] = segments;
    type = first === undefined ? undefined : root.member(first.name);
    segments = rest;
  } else type = root as JsonSchema;
  for (const segment of segments) {
    if (type === undefined) break;
    const lookup = fieldOf(type, segment.name);
    type = lookup.found ? lookup.type : undefined;
  }
  return type === undefined ? UNKNOWN : asSequence(type);
}

/** JSONata's node shapes are wider than its published type. */
interface AstNode {
  type: string;
  value?: unknown;
  position?: number;
  [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** A literal or a constructor: a value that is never undefined. */
function isAlwaysDefined(node: AstNode): boolean {
  if (node.type === 'string' || node.type === 'number' || node.type === 'value') return true;
  return node.type === 'unary' && (node.value === '{' || node.value === '[');
}

function isKnown(type: JsonSchema): boolean {
  return Object.keys(type).length > 0;
}

/** The value at `pointer` inside `template`'s source, or undefined when the pointer leads nowhere. */
function valueAt(template: Template, pointer: string): unknown {
  if (pointer !== template.pointer && !pointer.startsWith(`${template.pointer}/`)) return undefined;
  let value = template.source;
  for (const token of splitPointer(pointer.slice(template.pointer.length))) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[token];
  }
  return value;
}

/**
 * The type of the value at `pointer` of `template` (the template's own value by default) in
 * `scope`: UNKNOWN when it cannot be known without running. Sound: a type it gives is one the
 * value has whenever it is defined.
 */
export function valueTypeOf(template: Template, scope: ValueScope, pointer = template.pointer): JsonSchema {
  const value = valueAt(template, pointer);
  // A constructor's type says where its `{` is, for a problem located there; the inferrer's does not.
  const built =
    typeof value === 'string' && value.includes('{') ? constructorType(template, scope, pointer, value) : UNKNOWN;
  if (isKnown(built)) return built;
  const tokens = pointer === template.pointer ? [] : splitPointer(pointer.slice(template.pointer.length));
  return asSequence(inferPartType(template, tokens, scope.types.scopeAt(scope.loops)));
}

/**
 * What an inferred list may be when it runs: JSONata gives a sequence of one as its one value
 * and flattens the sequences a path maps out, so an inferred list is the list or one of its
 * items, all the way down. A value is then refused only where no such form fits (sound: no
 * alarm for `system.id` that the inferrer sees as a list of one).
 */
function asSequence(type: JsonSchema): JsonSchema {
  if (Array.isArray(type.anyOf)) return { ...type, anyOf: (type.anyOf as JsonSchema[]).map(asSequence) };
  if (type.type === 'array') {
    const items = asSequence((type.items as JsonSchema | undefined) ?? UNKNOWN);
    return isKnown(items) ? { anyOf: [items, { ...type, items }] } : UNKNOWN;
  }
  if (type.type === 'object' && typeof type.properties === 'object' && type.properties !== null) {
    const properties = Object.entries(type.properties as Record<string, JsonSchema>);
    return { ...type, properties: Object.fromEntries(properties.map(([key, value]) => [key, asSequence(value)])) };
  }
  return type;
}

function constructorType(template: Template, scope: ValueScope, pointer: string, value: string): JsonSchema {
  const whole = wholeExpressionOf(value);
  if (whole === undefined) return UNKNOWN;
  const sites = template.references.filter((site) => site.pointer === pointer);
  return new ConstructorTypes(scope, sites, whole.offset).of(whole.ast as unknown as AstNode, true);
}

/** The types of one expression's constructors; `offset` is where its text starts in the string value. */
class ConstructorTypes {
  constructor(
    private readonly scope: ValueScope,
    private readonly sites: readonly ReferenceSite[],
    private readonly offset: number,
  ) {}

  /** `atRoot`: the focus is the context (a plain name reads `inputs`, `steps`...), not an item. */
  of(node: AstNode, atRoot: boolean): JsonSchema {
    switch (node.type) {
      case 'string':
      case 'number':
      case 'value':
        return { ...typeOfLiteral(node.value), ...(node.value === null ? {} : { const: node.value }) };
      case 'unary':
        if (node.value === '{') return this.object(node, atRoot);
        if (node.value === '[') return this.array(node, atRoot);
        return UNKNOWN;
      case 'path':
        return this.path(node, atRoot);
      case 'block': {
        const expressions = Array.isArray(node.expressions) ? node.expressions : [];
        const last: unknown = expressions.at(-1);
        return isNode(last) ? this.of(last, atRoot) : UNKNOWN;
      }
      case 'condition':
        return this.condition(node, atRoot);
      default:
        return UNKNOWN;
    }
  }

  /** `{ 'k': v, ... }` with every key a string literal: an object of exactly those keys (a key whose value is undefined is left out). */
  private object(node: AstNode, atRoot: boolean): JsonSchema {
    const pairs = Array.isArray(node.lhs) ? (node.lhs as unknown[][]) : [];
    const properties: Record<string, JsonSchema> = {};
    const always: string[] = [];
    for (const [key, value] of pairs) {
      if (!isNode(key) || key.type !== 'string' || !isNode(value)) return { type: 'object' };
      properties[String(key.value)] = this.of(value, atRoot);
      // A key whose value is undefined is left out: only a literal or a constructor is always there.
      if (isAlwaysDefined(value)) always.push(String(key.value));
    }
    return {
      type: 'object',
      properties,
      required: always,
      additionalProperties: false,
      [BUILT_AT]: this.offset + Math.max(0, (node.position ?? 1) - 1),
    };
  }

  /** `[a, b]`: a value that is a list is spliced in (a nested `[...]` is kept whole), as JSONata builds it. */
  private array(node: AstNode, atRoot: boolean): JsonSchema {
    const elements = (Array.isArray(node.expressions) ? node.expressions : []).filter(isNode);
    const items = elements.map((element) => {
      const type = this.of(element, atRoot);
      if (element.type === 'unary' && element.value === '[') return type;
      if (type.type === 'array')
        return isKnown((type.items as JsonSchema | undefined) ?? {}) ? (type.items as JsonSchema) : UNKNOWN;
      if (Array.isArray(type.anyOf) && type['x-fleetbook-sequence'] === true)
        return (type.anyOf as JsonSchema[])[0] ?? UNKNOWN;
      // A value of unknown type may be a list, spliced: its items are unknown too.
      return type;
    });
    const [first] = items;
    const same = first !== undefined && items.every((item) => JSON.stringify(item) === JSON.stringify(first));
    // A literal or a constructor is always one item; any other value may be undefined (dropped) or spliced.
    const certain = elements.filter(isAlwaysDefined).length;
    return {
      type: 'array',
      items: same && first !== undefined ? first : UNKNOWN,
      ...(certain > 0 ? { minItems: certain } : {}),
    };
  }

  /**
   * `a.b.{ ... }`: the object built for each item, one object or a list of them (JSONata's
   * sequence); a plain path read from the context: its type.
   */
  private path(node: AstNode, atRoot: boolean): JsonSchema {
    const steps = (Array.isArray(node.steps) ? node.steps : []).filter(isNode);
    const last = steps.at(-1);
    if (last === undefined || node.group !== undefined) return UNKNOWN;
    if (last.type === 'unary' && last.value === '{' && last.stages === undefined && steps.length > 1) {
      const built = this.object(last, false);
      return { anyOf: [built, { type: 'array', items: built }], 'x-fleetbook-sequence': true };
    }
    const plain = steps.every(
      (step) =>
        step.type === 'name' && step.stages === undefined && step.focus === undefined && step.index === undefined,
    );
    if (!atRoot || !plain) return UNKNOWN;
    const [root] = steps;
    const start = this.offset + (root?.position ?? 0) - String(root?.value ?? '').length;
    const site = this.sites.find(
      (candidate) =>
        candidate.rootOffset === start &&
        candidate.path.length === steps.length - 1 &&
        candidate.path.every((segment) => segment.filter === undefined),
    );
    return site === undefined ? UNKNOWN : typeOfPlainRead(this.scope, site);
  }

  /** `c ? a : b`: either branch's value; without `: b`, possibly undefined, so nothing is known. */
  private condition(node: AstNode, atRoot: boolean): JsonSchema {
    if (!isNode(node.then) || !isNode(node.else)) return UNKNOWN;
    const branches = [this.of(node.then, atRoot), this.of(node.else, atRoot)];
    return branches.every(isKnown) ? { anyOf: branches } : UNKNOWN;
  }
}
