/**
 * The run page's SVG timeline: one bar per step and per loop item, placed by start and end
 * on the run's time axis, coloured by status with the status also written beside it (never
 * colour alone), attempts marked, an async operation's progress drawn inside its bar. A loop
 * of more than `MAX_ITEM_BARS` items is drawn as at most `ITEM_GROUPS` bars of consecutive
 * items (each with its counts by status), so a 5,000-item loop is a hundred bars, not 5,000.
 */
import type { JournalEntry, RunRecord, StepNode } from '../../store/index.js';
import { formatDuration } from './format.js';
import { escapeHtml } from './html.js';
import type { WaitSpan } from './run-state.js';

export const MAX_ITEM_BARS = 200;
export const ITEM_GROUPS = 100;
/** Loops with at most this many items show each item's inner steps too. */
const INNER_STEPS_UP_TO = 20;

const WIDTH = 1160;
const LABEL_WIDTH = 330;
const ROW_HEIGHT = 22;
const BAR_HEIGHT = 14;

export interface TimelineRow {
  label: string;
  depth: number;
  status: string;
  startMs: number;
  endMs?: number;
  attempts: number;
  progress?: number;
  /** For a group of loop items: how many of each status. */
  counts?: Record<string, number>;
  /** A wait of the run (its own row under the step that waited): why, and how it ended. */
  wait?: { reason: string; outcome?: string };
}

/** Whether `node` is one item of a loop (`[3]`), not a step. */
export const isItem = (node: StepNode): boolean => /^\[\d+\]$/.test(node.label);

/** The last progress % journaled for each step path still running an operation. */
export function progressByPath(entries: readonly JournalEntry[]): Map<string, number> {
  const progress = new Map<string, number>();
  for (const { event } of entries) {
    if (event.type === 'operation.progress' && event.progressPercent !== undefined)
      progress.set(event.path, event.progressPercent);
    if (event.type === 'operation.finished' || event.type === 'step.finished') progress.delete(event.path);
  }
  return progress;
}

/** The worst status among `statuses`, for a group's colour. */
function worst(counts: Record<string, number>): string {
  for (const status of ['failed', 'interrupted', 'running', 'notStarted', 'skipped', 'simulated', 'succeeded'])
    if ((counts[status] ?? 0) > 0) return status;
  return 'succeeded';
}

/** The row of a wait: a span from its start to its end (to now while it lasts). */
const waitRow = (wait: WaitSpan, depth: number): TimelineRow => ({
  label: `${wait.reason} wait`,
  depth,
  status: 'waiting',
  startMs: Date.parse(wait.since),
  ...(wait.endedAt === undefined ? {} : { endMs: Date.parse(wait.endedAt) }),
  attempts: 0,
  wait: { reason: wait.reason, ...(wait.outcome === undefined ? {} : { outcome: wait.outcome }) },
});

export function timelineRows(
  tree: readonly StepNode[],
  progress: ReadonlyMap<string, number>,
  waits: readonly WaitSpan[] = [],
): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const pushWaits = (path: string, depth: number): void => {
    for (const wait of waits) if (wait.path === path) rows.push(waitRow(wait, depth));
  };
  const rowOf = (node: StepNode, depth: number): TimelineRow => ({
    label: node.label,
    depth,
    status: node.status,
    startMs: Date.parse(node.startedAt),
    ...(node.endedAt === undefined ? {} : { endMs: Date.parse(node.endedAt) }),
    attempts: node.attempts,
    ...(progress.has(node.path) ? { progress: progress.get(node.path) } : {}),
  });
  const walk = (nodes: readonly StepNode[], depth: number): void => {
    const items = nodes.filter(isItem);
    const steps = nodes.filter((node) => !isItem(node));
    for (const node of steps) {
      rows.push(rowOf(node, depth));
      pushWaits(node.path, depth + 1);
      walk(node.children, depth + 1);
    }
    if (items.length === 0) return;
    if (items.length <= MAX_ITEM_BARS) {
      for (const item of items) {
        rows.push(rowOf(item, depth));
        if (items.length <= INNER_STEPS_UP_TO) walk(item.children, depth + 1);
      }
      return;
    }
    const size = Math.ceil(items.length / ITEM_GROUPS);
    for (let from = 0; from < items.length; from += size) {
      const group = items.slice(from, from + size);
      const counts: Record<string, number> = {};
      for (const item of group) counts[item.status] = (counts[item.status] ?? 0) + 1;
      const ends = group.map((item) => (item.endedAt === undefined ? undefined : Date.parse(item.endedAt)));
      rows.push({
        label: `${group[0]?.label ?? ''}–${group.at(-1)?.label ?? ''}`,
        depth,
        status: worst(counts),
        startMs: Math.min(...group.map((item) => Date.parse(item.startedAt))),
        ...(ends.some((end) => end === undefined) ? {} : { endMs: Math.max(...(ends as number[])) }),
        attempts: Math.max(...group.map((item) => item.attempts)),
        counts,
      });
    }
  };
  walk(tree, 0);
  return rows;
}

const STATUS_TEXT: Record<string, string> = { notStarted: 'not started' };

export function statusText(status: string): string {
  return STATUS_TEXT[status] ?? status;
}

function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([status, count]) => `${count} ${statusText(status)}`)
    .join(', ');
}

/** What a bar says beside it: its status and counts, or for a wait how long it lasted and how it ended. */
function rowDetail(row: TimelineRow, endMs: number): string {
  if (row.wait) {
    const lasted = formatDuration(endMs - row.startMs);
    return row.endMs === undefined
      ? `waiting for ${row.wait.reason}, ${lasted}`
      : `waited for ${row.wait.reason}, ${lasted}${row.wait.outcome ? `: ${row.wait.outcome}` : ''}`;
  }
  return [
    statusText(row.status),
    row.attempts > 1 ? `${row.attempts} attempts` : '',
    row.progress === undefined ? '' : `${row.progress}%`,
    row.counts ? countsText(row.counts) : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

/** The SVG markup (every text escaped). `nowMs` ends the bars of what still runs. */
export function renderTimeline(run: RunRecord, rows: readonly TimelineRow[], nowMs: number): string {
  const startMs = Date.parse(run.startedAt);
  const endMs = Math.max(
    run.endedAt === undefined ? nowMs : Date.parse(run.endedAt),
    ...rows.map((row) => row.endMs ?? nowMs),
    startMs + 1000,
  );
  const span = endMs - startMs;
  const plot = WIDTH - LABEL_WIDTH - 10;
  const x = (ms: number): number => LABEL_WIDTH + ((ms - startMs) / span) * plot;
  const height = 24 + rows.length * ROW_HEIGHT;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="Timeline of the run's steps">`,
  ];
  // Time axis: five ticks with seconds from the start.
  for (let tick = 0; tick <= 4; tick += 1) {
    const at = LABEL_WIDTH + (plot * tick) / 4;
    parts.push(
      `<line class="tick" x1="${at.toFixed(1)}" y1="14" x2="${at.toFixed(1)}" y2="${height}"/>`,
      `<text class="axis" x="${at.toFixed(1)}" y="11" text-anchor="${tick === 4 ? 'end' : tick === 0 ? 'start' : 'middle'}">${((span * tick) / 4 / 1000).toFixed(1)}s</text>`,
    );
  }
  rows.forEach((row, index) => {
    const y = 20 + index * ROW_HEIGHT;
    const from = x(row.startMs);
    const to = Math.max(from + 3, x(row.endMs ?? nowMs));
    const label = `${'\u00a0\u00a0'.repeat(row.depth)}${row.label}`;
    const detail = rowDetail(row, row.endMs ?? nowMs);
    parts.push(
      `<g class="row status-${escapeHtml(row.status)}${row.wait ? ' wait' : ''}${row.endMs === undefined ? ' open' : ''}" data-label="${escapeHtml(row.label)}">`,
      `<title>${escapeHtml(`${row.label}: ${detail}`)}</title>`,
      `<text class="label" x="4" y="${y + 11}">${escapeHtml(label.length > 44 ? `${label.slice(0, 43)}…` : label)}</text>`,
      `<rect class="bar" x="${from.toFixed(1)}" y="${y}" width="${(to - from).toFixed(1)}" height="${BAR_HEIGHT}" rx="3"/>`,
    );
    if (row.progress !== undefined)
      parts.push(
        `<rect class="progress" x="${from.toFixed(1)}" y="${y + BAR_HEIGHT - 4}" width="${(((to - from) * row.progress) / 100).toFixed(1)}" height="4"/>`,
      );
    if (row.attempts > 1)
      parts.push(`<text class="attempts" x="${(from + 3).toFixed(1)}" y="${y + 11}">×${row.attempts}</text>`);
    // The status in words beside the bar (inside the plot's end when there is no room).
    parts.push(stateText(detail, from, to, y), '</g>');
  });
  parts.push('</svg>');
  return parts.join('');
}

/** The status in words beside the bar; with no room after it, inside a long bar, else before it. */
function stateText(detail: string, from: number, to: number, y: number): string {
  const inside = to + 6 > WIDTH - 120 && to - from > 240;
  const textAt = to + 6 <= WIDTH - 120 ? to + 6 : inside ? to - 6 : Math.max(LABEL_WIDTH, from - 6);
  return `<text class="state${inside ? ' inside' : ''}" x="${textAt.toFixed(1)}" y="${y + 11}" text-anchor="${textAt === to + 6 ? 'start' : 'end'}">${escapeHtml(detail)}</text>`;
}
