import type jsonata from 'jsonata';
import type { PathSegment } from '../model/index.js';

/** One read of a top-level name, where it is written in the expression. */
export interface ReferenceOccurrence {
  /** The top-level name: `inputs`, `steps`, a loop variable... */
  root: string;
  /** 0-based offset of the root name in the expression text. */
  rootOffset: number;
  /** The name read under it when written as one (`steps.<id>`, `inputs.<name>`). */
  member?: string;
  memberOffset?: number;
  /**
   * The plain path read under the root, as far as it can be typed without evaluating: names,
   * each optionally filtered (`[0]`, `[status = 'failed']`). It stops before a wildcard, a
   * sort, a function call, a computed step or a binding; `member` is its first segment.
   */
  path: PathSegment[];
  /** The expression is this path and nothing else (its value is the value read). */
  entire: boolean;
}

/** What an expression reads from its context. */
export interface ExpressionReferences {
  /** Top-level names read from the context: `inputs`, `steps`, a loop variable... */
  roots: Set<string>;
  /** Step ids read through `steps.<id>`. */
  steps: Set<string>;
  /** Every read of a top-level name, in the order found, for messages that point at it. */
  occurrences: ReferenceOccurrence[];
  /** The context is read as a whole (`$$` or a root `$` not followed by a name): any name may be read. */
  readsWholeContext: boolean;
}

/** JSONata's node shapes are wider than its published type (`path`, `sort`, `apply`...). */
interface AstNode {
  type: string;
  value?: unknown;
  [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** `$$` (variable named `$`) always means the root; `$` means it only where the focus is the root. */
function isRootVariable(node: AstNode, atRoot: boolean): boolean {
  return node.type === 'variable' && (node.value === '$' || (node.value === '' && atRoot));
}

/**
 * Where a name node starts: JSONata gives the offset just past its end, and a back-quoted
 * name (`` `my name` ``) has its quotes around it.
 */
function startOf(node: AstNode, text: string | undefined): number {
  return Math.max(0, (typeof node.position === 'number' ? node.position : 0) - lengthOf(node, text));
}

function lengthOf(node: AstNode, text: string | undefined): number {
  const end = typeof node.position === 'number' ? node.position : 0;
  const quoted = text !== undefined && text[end - 1] === '`';
  return String(node.value).length + (quoted ? 2 : 0);
}

/** The filter a name step carries, or undefined when it carries something a type cannot follow (a binding). */
function filterOf(step: AstNode): PathSegment['filter'] | 'none' | undefined {
  const stages = Array.isArray(step.stages) ? (step.stages as AstNode[]) : [];
  if (stages.length === 0) return 'none';
  if (stages.length > 1 || stages[0]?.type !== 'filter') return undefined;
  return isNode(stages[0].expr) && stages[0].expr.type === 'number' ? 'index' : 'predicate';
}

/** Every name written in a predicate, or undefined when it may read its item whole. */
function predicateNamesOf(expr: unknown): string[] | undefined {
  const names = new Set<string>();
  let opaque = false;
  const visit = (value: unknown): void => {
    if (opaque) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isNode(value)) return;
    if (value.type === 'wildcard' || value.type === 'descendant' || (value.type === 'variable' && value.value === '')) {
      opaque = true;
      return;
    }
    if (value.type === 'name') names.add(String(value.value));
    for (const child of Object.values(value)) if (typeof child === 'object') visit(child);
  };
  visit(expr);
  return opaque ? undefined : [...names];
}

/** The leading plain names of `steps` (from `from`), and whether every step was one. */
function plainSegments(
  steps: AstNode[],
  from: number,
  text: string | undefined,
): { path: PathSegment[]; all: boolean } {
  const path: PathSegment[] = [];
  for (const step of steps.slice(from)) {
    const filter =
      step.type === 'name' && step.focus === undefined && step.index === undefined ? filterOf(step) : undefined;
    if (filter === undefined) return { path, all: false };
    path.push({
      name: String(step.value),
      offset: startOf(step, text),
      length: lengthOf(step, text),
      ...(filter === 'none' ? {} : { filter }),
      ...(filter === 'index' ? { index: Number(((step.stages as AstNode[])[0]?.expr as AstNode).value) } : {}),
      ...predicateNamesField(filter === 'predicate' ? (step.stages as AstNode[])[0]?.expr : undefined),
    });
  }
  return { path, all: true };
}

function predicateNamesField(expr: unknown): { predicateNames?: string[] } {
  if (expr === undefined) return {};
  const names = predicateNamesOf(expr);
  return names === undefined ? {} : { predicateNames: names };
}

function recordPath(
  steps: AstNode[],
  atRoot: boolean,
  found: ExpressionReferences,
  text: string | undefined,
  whole: boolean,
): void {
  const [first, second, third] = steps;
  if (first === undefined) return;
  let rootName: AstNode | undefined;
  let stepName: AstNode | undefined;
  if (first.type === 'name' && atRoot) {
    rootName = first;
    stepName = second;
  } else if (isRootVariable(first, atRoot) && second?.type === 'name') {
    rootName = second;
    stepName = third;
  } else if (isRootVariable(first, atRoot)) {
    found.readsWholeContext = true;
  }
  if (rootName === undefined) return;
  const { path, all } = plainSegments(steps, steps.indexOf(rootName) + 1, text);
  found.roots.add(String(rootName.value));
  if (rootName.value === 'steps' && stepName?.type === 'name') found.steps.add(String(stepName.value));
  found.occurrences.push({
    root: String(rootName.value),
    rootOffset: startOf(rootName, text),
    ...(stepName?.type === 'name' ? { member: String(stepName.value), memberOffset: startOf(stepName, text) } : {}),
    path,
    entire: whole && all,
  });
}

/**
 * Walks a node. `atRoot` says whether the focus (the `$` context) is still the context
 * object: it is at the top, in function arguments, object constructors, blocks and lambda
 * bodies; it is not after the first step of a path, in predicates, sort terms or groups.
 */
function walk(
  value: unknown,
  atRoot: boolean,
  found: ExpressionReferences,
  text: string | undefined,
  whole = false,
): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, atRoot, found, text);
    return;
  }
  if (!isNode(value)) return;
  if (value.type === 'path' && Array.isArray(value.steps)) {
    const steps = value.steps as AstNode[];
    recordPath(steps, atRoot, found, text, whole && value.group === undefined);
    steps.forEach((step, index) => walkChildren(step, atRoot && index === 0 && step.type !== 'name', found, text));
    walk(value.group, false, found, text);
    return;
  }
  if (isRootVariable(value, atRoot)) found.readsWholeContext = true;
  if (value.type === 'name' && atRoot) {
    found.roots.add(String(value.value));
    const filter = filterOf(value);
    found.occurrences.push({
      root: String(value.value),
      rootOffset: startOf(value, text),
      path: [],
      entire: whole && filter !== undefined && value.focus === undefined && value.index === undefined,
    });
  }
  walkChildren(value, atRoot, found, text);
}

/** Children of a node; what they are evaluated against decides `atRoot`. */
function walkChildren(node: AstNode, atRoot: boolean, found: ExpressionReferences, text: string | undefined): void {
  for (const [key, child] of Object.entries(node)) {
    if (key === 'steps' && node.type === 'path') continue;
    // Predicates, sort terms and groups are evaluated against each item, not the root.
    const relative =
      key === 'stages' || key === 'predicate' || key === 'group' || (node.type === 'sort' && key === 'terms');
    walk(child, atRoot && !relative, found, text);
  }
}

/** The names and step ids an expression reads, from its syntax tree; `text` (the expression) makes offsets of back-quoted names exact. */
export function findReferences(ast: jsonata.ExprNode, text?: string): ExpressionReferences {
  const found: ExpressionReferences = { roots: new Set(), steps: new Set(), occurrences: [], readsWholeContext: false };
  walk(ast, true, found, text, true);
  return found;
}
