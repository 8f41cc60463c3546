/**
 * The step tree of `fleetbook runs show` as text: one row per step with its status, attempts,
 * duration and async operation, an error under its step. A loop of more than
 * `ITEMS_SHOWN_WHOLE` items is summarised (a fleet's rolling update has 10,000 of them, some
 * 250,000 rows): a line of its items' counts by status, then in full only the first and last
 * `EDGE_ITEMS` items and those an operator acts on (failed, still running, interrupted), with a
 * line for each run of items left out. `--items` prints every item.
 */
import { stepLabel } from '../../playbook/index.js';
import { itemKind, StepStatus, type StepNode } from '../../store/index.js';
import { ATTENTION_ITEMS_SHOWN, EDGE_ITEMS, ITEMS_SHOWN_WHOLE } from './item-summary.js';
import { table } from './run-log.js';

/** Item statuses printed in full in a summarised loop: what an operator acts on. */
const needsAttention = new Set<string>([StepStatus.failed, StepStatus.running, StepStatus.interrupted]);

/** Counts by status in this order, then any other status in the order met. */
const statusOrder: readonly string[] = [
  StepStatus.succeeded,
  StepStatus.failed,
  StepStatus.running,
  StepStatus.interrupted,
  StepStatus.skipped,
  StepStatus.simulated,
  StepStatus.notStarted,
];

export interface StepTableOptions {
  /** Print every item of every loop (`--items`). */
  allItems: boolean;
  /** The run's id, for the hint line of a summarised loop. */
  runId: string;
  /** An error's one-line text. */
  errorText(error: NonNullable<StepNode['error']>): string;
  formatDuration(ms: number): string;
}

/** `9,998 succeeded, 2 failed`: an item list's counts by status. */
export function countsByStatus(items: ReadonlyArray<{ status: string }>): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.status, (counts.get(item.status) ?? 0) + 1);
  const order = [
    ...statusOrder.filter((status) => counts.has(status)),
    ...[...counts.keys()].filter((status) => !statusOrder.includes(status)),
  ];
  return order.map((status) => `${(counts.get(status) ?? 0).toLocaleString('en-US')} ${status}`).join(', ');
}

/** Which of a summarised loop's items are printed in full: positions in `items`. */
function listedItems(items: ReadonlyArray<{ status: string }>): { listed: Set<number>; attentionLeftOut: number } {
  const listed = new Set<number>();
  for (let position = 0; position < Math.min(EDGE_ITEMS, items.length); position += 1) {
    listed.add(position);
    listed.add(items.length - 1 - position);
  }
  let attention = 0;
  let attentionLeftOut = 0;
  items.forEach((item, position) => {
    if (!needsAttention.has(item.status)) return;
    if (attention < ATTENTION_ITEMS_SHOWN) listed.add(position);
    else attentionLeftOut += 1;
    attention += 1;
  });
  return { listed, attentionLeftOut };
}

/**
 * The records (or step summaries) the text view prints: without the steps of the items a summarised loop leaves
 * out (their item records stay, for the counts). A fleet's 200,000 step records become a few
 * hundred before the tree is built; the loop's items and their order are the tree's (records
 * in the order they started), so `formatStepTable` lists the same items.
 */
export function recordsShown<T extends { path: string; kind: string; status: string }>(records: readonly T[]): T[] {
  const hidden = leftOutItems(records);
  return hidden.size === 0 ? [...records] : records.filter((record) => !isInsideItem(hidden, record.path));
}

/**
 * The paths of the items a summarised loop leaves out, of `steps` (records or a run's step
 * summaries, in the order the view lists them): items are grouped by loop (the path before
 * their last `[`).
 */
export function leftOutItems(steps: ReadonlyArray<{ path: string; kind: string; status: string }>): Set<string> {
  const itemsByLoop = new Map<string, Array<{ path: string; status: string }>>();
  for (const step of steps) {
    if (step.kind !== itemKind) continue;
    const loop = step.path.slice(0, step.path.lastIndexOf('['));
    const items = itemsByLoop.get(loop);
    if (items) items.push(step);
    else itemsByLoop.set(loop, [step]);
  }
  const hidden = new Set<string>();
  for (const items of itemsByLoop.values()) {
    if (items.length <= ITEMS_SHOWN_WHOLE) continue;
    const { listed } = listedItems(items);
    items.forEach((item, position) => {
      if (!listed.has(position)) hidden.add(item.path);
    });
  }
  return hidden;
}

/** Whether `path` is inside one of `items` (a prefix of it ending at an item's `]`, short of the whole path). */
export function isInsideItem(items: ReadonlySet<string>, path: string): boolean {
  for (let end = path.indexOf(']'); end >= 0 && end < path.length - 1; end = path.indexOf(']', end + 1))
    if (items.has(path.slice(0, end + 1))) return true;
  return false;
}

/** A row of the table, or a line printed between rows outside the columns (an error, a summary). */
type Line = { row: string[] } | { text: string };

export function formatStepTable(tree: readonly StepNode[], options: StepTableOptions): string {
  const lines: Line[] = [];
  const indent = (depth: number) => '  '.repeat(depth);
  const addNode = (node: StepNode, depth: number) => {
    const operation =
      node.asyncOperationId === undefined
        ? ''
        : `${node.asyncOperationId}${node.operationOutcome === undefined ? '' : ` (${node.operationOutcome})`}`;
    lines.push({
      row: [
        `${indent(depth)}${stepLabel(node.label)}`,
        node.status,
        node.attempts === 0 ? '' : String(node.attempts),
        node.durationMs === undefined ? '' : options.formatDuration(node.durationMs),
        operation,
      ],
    });
    // Error lines go under their step, outside the columns so a long message does not widen them.
    if (node.error) lines.push({ text: `${indent(depth + 1)}! ${options.errorText(node.error)}` });
    addChildren(node, depth + 1);
  };
  const addChildren = (node: StepNode, depth: number) => {
    const items = node.children.filter((child) => child.kind === itemKind);
    if (options.allItems || items.length <= ITEMS_SHOWN_WHOLE) {
      for (const child of node.children) addNode(child, depth);
      return;
    }
    const { listed, attentionLeftOut } = listedItems(items);
    const attentionNote =
      attentionLeftOut === 0
        ? ''
        : ` (${attentionLeftOut.toLocaleString('en-US')} more failed, running or interrupted not listed)`;
    lines.push({
      text:
        `${indent(depth)}${items.length.toLocaleString('en-US')} items: ${countsByStatus(items)}; ` +
        `listed: the first and last ${EDGE_ITEMS} and any failed, running or interrupted${attentionNote}; ` +
        `all: fleetbook runs show ${options.runId} --items, or -o json`,
    });
    let leftOut: StepNode[] = [];
    const flushLeftOut = () => {
      if (leftOut.length > 0)
        lines.push({
          text: `${indent(depth)}… ${leftOut.length.toLocaleString('en-US')} more: ${countsByStatus(leftOut)}`,
        });
      leftOut = [];
    };
    let position = 0;
    for (const child of node.children) {
      if (child.kind !== itemKind) {
        addNode(child, depth);
        continue;
      }
      if (listed.has(position)) {
        flushLeftOut();
        addNode(child, depth);
      } else {
        leftOut.push(child);
      }
      position += 1;
    }
    flushLeftOut();
  };
  for (const node of tree) addNode(node, 0);

  const rows = lines.flatMap((line) => ('row' in line ? [line.row] : []));
  const [header = '', ...rowLines] = table(['STEP', 'STATUS', 'ATTEMPTS', 'DURATION', 'OPERATION'], rows)
    .trimEnd()
    .split('\n');
  let next = 0;
  const out = [header, ...lines.map((line) => ('row' in line ? (rowLines[next++] ?? '') : line.text))];
  return `${out.join('\n')}\n`;
}
