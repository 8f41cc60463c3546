/**
 * What type inference over a JSONata expression works with: the scope it is given (the types of
 * the context's top-level names), the values it infers (a type, and how the value is written, for
 * messages), the variables bound in a block or a lambda, and the field reads it finds impossible.
 */
import { UNKNOWN, type JsonSchema } from '../../steps/index.js';

/**
 * The type of a top-level name: a type, or members typed one at a time (`steps.<id>`,
 * `inputs.<name>`) where a member of nothing is the reference rules' to report, not inference's.
 */
export type RootType = JsonSchema | { readonly member: (name: string) => JsonSchema | undefined };

/** What an expression reads from its context, as types. */
export interface InferScope {
  /** The type of a top-level name, or undefined for a name the reference rules report (unknown, out of its loop). */
  root(name: string): RootType | undefined;
  /** The ids of the steps readable here: where a misread field may be found instead. */
  stepIds?(): Iterable<string>;
}

/** A field read that cannot exist, where its name is written in the expression. */
export interface FieldMiss {
  /** 0-based offset of the name in the expression's text (its quotes included), and its length. */
  offset: number;
  length: number;
  message: string;
}

/** JSONata's syntax tree node; its shapes are wider than the published type. */
export interface AstNode {
  type: string;
  value?: unknown;
  position?: number;
  [key: string]: unknown;
}

export function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

export function nodes(value: unknown): AstNode[] {
  return Array.isArray(value) ? value.filter(isNode) : [];
}

/** A lambda and what it closes over: its variables and the context it was written in. */
export interface Closure {
  node: AstNode;
  env: Env;
  context: Value;
}

/** An inferred value. */
export interface Value {
  type: JsonSchema;
  /** How the value is written when it is read by a path or held by a variable (`steps.a.outputs.body`, `$x`). */
  label?: string;
  /** For a value read under `steps.<id>`: the id and the field names read after it. */
  fromStep?: { id: string; names: readonly string[] };
  /** A function value (a lambda). */
  lambda?: Closure;
}

export const UNKNOWN_VALUE: Value = { type: UNKNOWN };

/** Variables of a block or a lambda, over those of the blocks around it. */
export class Env {
  private readonly own = new Map<string, Value>();

  constructor(private readonly outer?: Env) {}

  get(name: string): Value | undefined {
    return this.own.get(name) ?? this.outer?.get(name);
  }

  set(name: string, value: Value): void {
    this.own.set(name, value);
  }
}

/** Nothing is known of it: `{}`, or a schema with nothing but annotations. */
export function isUnknown(type: JsonSchema): boolean {
  for (const key in type) if (key !== 'description' && key !== 'title') return false;
  return true;
}

/** Alternatives kept by a join: beyond, the value is of unknown type (a long literal list must not make every read of it long). */
const MAX_ALTERNATIVES = 16;

/** A value of either type (a conditional's branches, a list's items); plain scalar types of the same name are one. */
export function joinTypes(types: readonly JsonSchema[]): JsonSchema {
  const distinct = new Map<unknown, JsonSchema>();
  for (const type of types) {
    if (isUnknown(type)) return UNKNOWN;
    const plain = Object.keys(type).length === 1 && typeof type.type === 'string';
    distinct.set(plain ? `type:${String(type.type)}` : type, type);
    if (distinct.size > MAX_ALTERNATIVES) return UNKNOWN;
  }
  const [first, ...others] = distinct.values();
  if (first === undefined) return UNKNOWN;
  return others.length === 0 ? first : { anyOf: [first, ...others] };
}

/** A list of `items`. */
export function listOf(items: JsonSchema): JsonSchema {
  return { type: 'array', items };
}
