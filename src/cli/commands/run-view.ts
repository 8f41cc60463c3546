/**
 * The readable view of `fleetbook run` on a terminal: log lines (pino JSON) turned into
 * short lines with the step and its progress, and a final summary of every step.
 */
import { Writable } from 'node:stream';
import type { RunResult } from '../../engine/index.js';
import { stepLabel } from '../../playbook/index.js';
import { itemKind } from '../../store/index.js';
import { EDGE_ITEMS } from './item-summary.js';
import { countsByStatus, isInsideItem, leftOutItems } from './step-table.js';

const levelNames: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** One readable line of a parsed log line. */
export function formatLogLine(line: Record<string, unknown>): string {
  const time = typeof line.time === 'number' ? new Date(line.time).toISOString().slice(11, 19) : '';
  const level = levelNames[Number(line.level)] ?? 'info';
  const where = typeof line.path === 'string' ? line.path : typeof line.stepId === 'string' ? line.stepId : '';
  const progress =
    typeof line.progressPercent === 'number'
      ? ` [${'#'.repeat(Math.round(line.progressPercent / 10)).padEnd(10, '.')}]`
      : '';
  const error =
    line.error !== null &&
    typeof line.error === 'object' &&
    typeof (line.error as { message?: unknown }).message === 'string'
      ? `: ${(line.error as { message: string }).message}`
      : '';
  return `${time} ${level.toUpperCase().padEnd(5)} ${where ? `${where}  ` : ''}${String(line.msg ?? '')}${progress}${error}\n${line.dryRun === true ? formatDryRunRequest(line.request) : ''}`;
}

/** A body this many lines long or shorter, pretty printed, is easier to read than compact. */
const PRETTY_BODY_LINES = 20;
/** A longer body is shown compact and cut here: enough to recognise it, not a screenful. */
const BODY_CHARACTERS = 600;
const INDENT = '    ';

/**
 * The request a dry run did not send, under its log line: the headers that say something
 * (not `accept`, which every call sends) and the body. The logger has already scrubbed
 * secrets from the line, so what is printed here is redacted as the JSON is.
 */
function formatDryRunRequest(request: unknown): string {
  if (request === null || typeof request !== 'object') return '';
  const { headers, body } = request as { headers?: unknown; body?: unknown };
  const lines: string[] = [];
  if (headers !== null && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers)) {
      if (name.toLowerCase() !== 'accept') lines.push(`${INDENT}${name}: ${String(value)}`);
    }
  }
  if (body !== undefined) {
    const pretty = typeof body === 'string' ? body : JSON.stringify(body, null, 2);
    const prettyLines = pretty.split('\n');
    if (prettyLines.length <= PRETTY_BODY_LINES && pretty.length <= BODY_CHARACTERS) {
      lines.push(`${INDENT}body:`, ...prettyLines.map((text) => `${INDENT}  ${text}`));
    } else {
      const compact = typeof body === 'string' ? body.replaceAll('\n', ' ') : JSON.stringify(body);
      const cut =
        compact.length > BODY_CHARACTERS
          ? `${compact.slice(0, BODY_CHARACTERS)}… (${compact.length - BODY_CHARACTERS} more characters)`
          : compact;
      lines.push(`${INDENT}body: ${cut}`);
    }
  }
  return lines.map((text) => `${text}\n`).join('');
}

/** A destination for the logger that writes readable lines to `out`. */
export function createReadableLogStream(out: NodeJS.WritableStream): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      pending += String(chunk);
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) {
        if (text.trim() === '') continue;
        try {
          out.write(formatLogLine(JSON.parse(text) as Record<string, unknown>));
        } catch {
          out.write(`${text}\n`);
        }
      }
      done();
    },
  });
}

/** `systems[12]` → 12: a loop item's index, to list a loop's items in order (the summary has them as they ended). */
const itemIndex = (path: string): number => Number(/\[(\d+)\]$/.exec(path)?.[1] ?? 0);

/**
 * The final summary: every step with its status, duration and attempts, then the outputs. A
 * loop of more than `ITEMS_SHOWN_WHOLE` items is summarised as `runs show` does it: its rows
 * are the first and last items and those failed, running or interrupted, with their steps, and
 * a line under the loop's row counts its items by status.
 */
export function formatSummary(result: RunResult): string {
  const items = result.steps
    .filter((step) => step.kind === itemKind)
    .sort((a, b) => itemIndex(a.path) - itemIndex(b.path));
  const leftOut = leftOutItems(items);
  const loopLines = new Map<string, string>();
  for (const loop of new Set([...leftOut].map((path) => path.slice(0, path.lastIndexOf('['))))) {
    const ofLoop = items.filter((item) => item.path.slice(0, item.path.lastIndexOf('[')) === loop);
    loopLines.set(
      loop,
      `  ${ofLoop.length.toLocaleString('en-US')} items of ${stepLabel(loop)}: ${countsByStatus(ofLoop)}; ` +
        `listed: the first and last ${EDGE_ITEMS} and any failed, running or interrupted; ` +
        `all: fleetbook runs show ${result.runId} --items\n`,
    );
  }
  const shown =
    leftOut.size === 0
      ? result.steps
      : result.steps.filter((step) => !leftOut.has(step.path) && !isInsideItem(leftOut, step.path));
  const rows = shown.map((step) => [
    step.status + (step.rescued ? ' (rescued)' : ''),
    step.status === 'notStarted' || step.status === 'skipped' ? '-' : humanDuration(step.durationMs),
    step.kind === 'item' ? '' : String(step.attempts),
    stepLabel(step.path),
  ]);
  const widths = [0, 1, 2].map((column) =>
    Math.max(
      ...[['STATUS', 'DURATION', 'ATTEMPTS'][column] ?? '', ...rows.map((row) => row[column] ?? '')].map(
        (text) => text.length,
      ),
    ),
  );
  const format = (row: string[]): string =>
    `  ${row.map((cell, column) => (column < 3 ? cell.padEnd((widths[column] ?? 0) + 2) : cell)).join('')}\n`;
  const lines = [
    `\nRun ${result.runId} ${result.status} in ${humanDuration(result.durationMs)}\n`,
    format(['STATUS', 'DURATION', 'ATTEMPTS', 'STEP']),
  ];
  shown.forEach((step, index) => {
    lines.push(format(rows[index] ?? []));
    const loopLine = loopLines.get(step.path);
    if (loopLine !== undefined) lines.push(loopLine);
    loopLines.delete(step.path);
  });
  // A loop with no row of its own (a run stopped inside it): its counts all the same.
  lines.push(...loopLines.values());
  if (result.simulatedSteps.length > 0) lines.push(`Dry run: not sent: ${result.simulatedSteps.join(', ')}\n`);
  if (result.error) lines.push(`Error: ${result.error.message}\n`);
  if (result.outputs !== undefined) lines.push(`Outputs: ${JSON.stringify(result.outputs, null, 2)}\n`);
  return lines.join('');
}
