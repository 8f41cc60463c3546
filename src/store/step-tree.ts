import type { StepPath, StepRecord } from './types.js';

/** A step record with its place in the tree: what `fleetbook runs show` prints. */
export interface StepNode extends StepRecord {
  /** The path relative to the parent node: `update`, `[3]` (or more, when a parent is missing). */
  label: string;
  /** From start to end; absent while running. */
  durationMs?: number;
  /** The async operation's id: the last segment of `location`. */
  asyncOperationId?: string;
  children: StepNode[];
}

/** `a[3].b` → `a[3]`, `a[3]` → `a`, `a` → undefined. */
function parentPath(path: StepPath): StepPath | undefined {
  const match = /^(.+?)(?:\.[^.[\]]+|\[\d+\])$/.exec(path);
  return match?.[1];
}

function operationIdOf(location: string): string | undefined {
  const segment = location.split(/[?#]/, 1)[0]?.split('/').filter(Boolean).at(-1);
  return segment === undefined ? undefined : decodeURIComponent(segment);
}

/**
 * Nests step records by their paths (`.` for child steps, `[i]` for loop items), keeping
 * the records' order among siblings. A record whose parent has no record hangs from its
 * nearest recorded ancestor, labelled with the rest of its path.
 */
export function buildStepTree(records: readonly StepRecord[]): StepNode[] {
  const nodes = new Map<StepPath, StepNode>();
  for (const record of records) {
    const node: StepNode = { ...record, label: record.path, children: [] };
    if (record.endedAt !== undefined) node.durationMs = Date.parse(record.endedAt) - Date.parse(record.startedAt);
    const operationId = record.location === undefined ? undefined : operationIdOf(record.location);
    if (operationId !== undefined) node.asyncOperationId = operationId;
    nodes.set(record.path, node);
  }
  const roots: StepNode[] = [];
  for (const node of nodes.values()) {
    let ancestor = parentPath(node.path);
    while (ancestor !== undefined && !nodes.has(ancestor)) ancestor = parentPath(ancestor);
    const parent = ancestor === undefined ? undefined : nodes.get(ancestor);
    if (parent && ancestor !== undefined) {
      node.label = node.path.slice(ancestor.length).replace(/^\./, '');
      parent.children.push(node);
    } else {
      roots.push(node);
    }
  }
  return roots;
}
