import type jsonata from 'jsonata';

/** What an expression reads from its context. */
export interface ExpressionReferences {
  /** Top-level names read from the context: `inputs`, `steps`, a loop variable... */
  roots: Set<string>;
  /** Step ids read through `steps.<id>`. */
  steps: Set<string>;
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

function recordPath(steps: AstNode[], atRoot: boolean, found: ExpressionReferences): void {
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
  }
  if (rootName === undefined) return;
  found.roots.add(String(rootName.value));
  if (rootName.value === 'steps' && stepName?.type === 'name') found.steps.add(String(stepName.value));
}

/**
 * Walks a node. `atRoot` says whether the focus (the `$` context) is still the context
 * object: it is at the top, in function arguments, object constructors, blocks and lambda
 * bodies; it is not after the first step of a path, in predicates, sort terms or groups.
 */
function walk(value: unknown, atRoot: boolean, found: ExpressionReferences): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, atRoot, found);
    return;
  }
  if (!isNode(value)) return;
  if (value.type === 'path' && Array.isArray(value.steps)) {
    const steps = value.steps as AstNode[];
    recordPath(steps, atRoot, found);
    steps.forEach((step, index) => walkChildren(step, atRoot && index === 0 && step.type !== 'name', found));
    walk(value.group, false, found);
    return;
  }
  if (value.type === 'name' && atRoot) found.roots.add(String(value.value));
  walkChildren(value, atRoot, found);
}

/** Children of a node; what they are evaluated against decides `atRoot`. */
function walkChildren(node: AstNode, atRoot: boolean, found: ExpressionReferences): void {
  for (const [key, child] of Object.entries(node)) {
    if (key === 'steps' && node.type === 'path') continue;
    // Predicates, sort terms and groups are evaluated against each item, not the root.
    const relative = key === 'stages' || key === 'predicate' || key === 'group' || (node.type === 'sort' && key === 'terms');
    walk(child, atRoot && !relative, found);
  }
}

/** The names and step ids an expression reads, from its syntax tree. */
export function findReferences(ast: jsonata.ExprNode): ExpressionReferences {
  const found: ExpressionReferences = { roots: new Set(), steps: new Set() };
  walk(ast, true, found);
  return found;
}
