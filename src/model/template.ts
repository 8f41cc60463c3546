import type jsonata from 'jsonata';

/**
 * A value from a playbook that may hold `${{ }}` expressions, compiled once when the
 * playbook loads. A string that is exactly one expression keeps the expression's type;
 * a string with several, or with text around one, is a string. Objects and arrays are
 * templates all the way down.
 */
export interface Template {
  /** The value as written in the playbook. */
  readonly source: unknown;
  /** JSON pointer of the value in the playbook (its references' pointers are under it). */
  readonly pointer: string;
  /** True when the value holds no expression (evaluate returns `source`). */
  readonly isStatic: boolean;
  /** Step ids the expressions read through `steps.<id>`, for the load-time reference rules. */
  readonly stepReferences: readonly string[];
  /** Top-level context names the expressions read (`inputs`, `steps`, a loop variable...). */
  readonly rootReferences: readonly string[];
  /** Every read of a top-level name, with where it is written, for located load-time messages. */
  readonly references: readonly ReferenceSite[];
  /** An expression reads the context as a whole (`$$`, `$keys($)`): what it reads cannot be listed. */
  readonly readsWholeContext?: boolean;
  /** Plain JSON (arrays and objects normalised, no JSONata sequence artefacts). */
  evaluate(context: ExpressionContext): Promise<unknown>;
  /** The value as text, each expression's value written by `format` (literal text as it is). */
  render(context: ExpressionContext, format: (value: unknown) => string): Promise<string>;
  /** How the value is made of literals and expressions, with each expression's syntax tree: what type inference walks. */
  shape(): TemplateShape;
}

/** One `${{ }}` of a template: its text, where the text starts in its string value, its syntax tree. */
export interface TemplateExpression {
  readonly text: string;
  readonly offset: number;
  readonly ast: jsonata.ExprNode;
}

/**
 * A template's value, part by part: a literal; a string that is one expression (the value is the
 * expression's); a string with text around expressions (a string); a list; an object.
 */
export type TemplateShape =
  | { readonly kind: 'static'; readonly value: unknown }
  | { readonly kind: 'whole'; readonly pointer: string; readonly expression: TemplateExpression }
  | { readonly kind: 'interpolation'; readonly pointer: string; readonly expressions: readonly TemplateExpression[] }
  | { readonly kind: 'array'; readonly items: readonly TemplateShape[] }
  | { readonly kind: 'object'; readonly entries: ReadonlyArray<readonly [string, TemplateShape]> };

/** One read of a top-level context name in a template: `inputs.x`, `steps.a`, a loop variable... */
export interface ReferenceSite {
  /** The top-level name read. */
  root: string;
  /** The name read under it when written as one: the id of `steps.<id>`, the name of `inputs.<name>`. */
  member?: string;
  /** JSON pointer of the string value that holds the expression. */
  pointer: string;
  /** 0-based offsets in that string value of the root name and of the member. */
  rootOffset: number;
  memberOffset?: number;
  /** The plain path read under the root (see `PathSegment`), offsets in the string value. */
  path: readonly PathSegment[];
  /** The template is this one path and nothing else: its value is the value the path reads. */
  entire: boolean;
}

/** What expressions can read. */
export interface ExpressionContext {
  inputs: Record<string, unknown>;
  steps: Record<string, { status: string; outputs?: unknown; error?: unknown }>;
  run: {
    id: string;
    playbook: string;
    dryRun: boolean;
    startedAt: string;
    /** The run's own folder of files (`FLEETBOOK_HOME/outputs/<run id>`): a file an `email` step may attach. */
    outputsDir?: string;
  };
  env: Record<string, string | undefined>;
  /** Inside a forEach: `{ index, first, last }`. */
  loop?: { index: number; first: boolean; last: boolean };
  /** Loop variables by their `as` name, and other scoped names. */
  [name: string]: unknown;
}

/** One name of a plain path, where it is written. */
export interface PathSegment {
  name: string;
  /** 0-based offset of the name (its opening back-quote when quoted) in the expression text. */
  offset: number;
  /** Characters the name takes in the text, quotes included. */
  length: number;
  /** `[n]`: one item of an array (a number); `[...]` any other filter keeps the items' type. */
  filter?: 'index' | 'predicate';
  /** The number of an `index` filter, for messages that write the path back. */
  index?: number;
  /**
   * Of a `predicate` filter: every name written in it (a superset of the item fields it reads),
   * or absent when it may read the item whole (`$`, a wildcard, `**`).
   */
  predicateNames?: string[];
}
