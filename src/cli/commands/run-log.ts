/**
 * A run's log as `fleetbook runs logs` and `runs show` print it, read back from the journal:
 * the lines of its `log:` steps, and what each step did (requests, answers, retries, async
 * operations, outcomes). The journal outlives the process that ran it, so a finished run's
 * log is there whenever it is asked for.
 */
import { stringify } from 'yaml';
import { logMessage, type JournalEntry, type LoggedLine } from '../../store/index.js';

/** `12:00:03`: the time of day of a journal entry (UTC, like the rest of `runs`). */
const timeOf = (iso: string): string => iso.slice(11, 19);

/** The paths whose steps are `log:` steps, from their `step.started` entries. */
export function logStepPaths(entries: readonly JournalEntry[]): Set<string> {
  return new Set(
    entries.flatMap((entry) =>
      // A `log:` step journals one entry, a `step.finished` with its kind (a `step.started` in older journals).
      (entry.event.type === 'step.started' || entry.event.type === 'step.finished') && entry.event.kind === 'log'
        ? [entry.event.path]
        : [],
    ),
  );
}

/** Whether `path` is `step` or inside it (`systems` takes `systems[2].update`, not `systemsOld`). */
export function isWithin(path: string, step: string): boolean {
  return path === step || path.startsWith(`${step}.`) || path.startsWith(`${step}[`);
}

/** What one journal entry says, in words; undefined for an entry that says nothing a reader needs. */
function describe(entry: JournalEntry, logPaths: ReadonlySet<string>): string | undefined {
  const { event } = entry;
  switch (event.type) {
    case 'step.started':
      return event.kind === 'log' ? undefined : `started (${event.kind})`;
    case 'request.sending':
      return `${event.method} ${event.operationId}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`;
    case 'request.answered':
      return `answered HTTP ${event.httpStatus}${event.location ? `, operation ${event.location}` : ''}`;
    case 'request.failed':
      return `request failed: ${event.error.message}${event.error.httpStatus === undefined ? '' : ` (HTTP ${event.error.httpStatus})`}${event.outcomeUnknown ? ', outcome unknown' : ''}`;
    case 'operation.progress':
      return `operation ${event.progressPercent === undefined ? '' : `${event.progressPercent}% `}${event.state ?? ''}`.trimEnd();
    case 'operation.finished':
      return `operation ended ${event.outcome}`;
    case 'retry.scheduled':
      return `retry in ${(event.delayMs / 1000).toFixed(1)}s: ${event.reason}`;
    case 'item.started':
      return `item ${event.index} started`;
    case 'item.finished':
      return `item ${event.index} ${event.status}`;
    case 'step.finished': {
      const message = logMessage(entry, logPaths);
      if (message !== undefined) return `log: ${message}`;
      return `${event.status}${event.error ? `: ${event.error.message}` : ''}`;
    }
  }
}

/** Readable lines `time  path  what`, for the entries inside `step` (all without). */
export function formatRunLog(entries: readonly JournalEntry[], logPaths: ReadonlySet<string>, step?: string): string {
  return entries
    .filter((entry) => step === undefined || isWithin(entry.event.path, step))
    .flatMap((entry) => {
      const text = describe(entry, logPaths);
      return text === undefined ? [] : [`${timeOf(entry.at)}  ${entry.event.path}  ${text}\n`];
    })
    .join('');
}

/** The `log:` lines as `runs show` prints them. */
export function formatLogLines(lines: readonly LoggedLine[]): string {
  return lines.map((line) => `${timeOf(line.at)}  ${line.path}  ${line.message}\n`).join('');
}

/** Whether a value is a list of records (plain objects): what reads best as a table. */
function isRecordList(value: unknown): value is Array<Record<string, unknown>> {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item))
  );
}

const cellText = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  // A loop, not `Math.max(...cells)`: a fleet's run has more rows than a call takes arguments.
  const widths = header.map((title, column) =>
    rows.reduce((width, row) => Math.max(width, (row[column] ?? '').length), title.length),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

function recordTable(records: Array<Record<string, unknown>>, indent: string): string {
  const columns = [...new Set(records.flatMap((record) => Object.keys(record)))];
  const text = table(
    columns.map((column) => column.toUpperCase()),
    records.map((record) => columns.map((column) => cellText(record[column]))),
  );
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => `${indent}${line}\n`)
    .join('');
}

/**
 * A run's outputs for a person: each list of records as a table (the rolling update's
 * per-system rows), everything else as YAML.
 */
export function formatOutputs(outputs: unknown, indent = '  '): string {
  if (isRecordList(outputs)) return recordTable(outputs, indent);
  if (outputs === null || typeof outputs !== 'object' || Array.isArray(outputs)) {
    return stringify(outputs)
      .split('\n')
      .filter(Boolean)
      .map((line) => `${indent}${line}\n`)
      .join('');
  }
  return Object.entries(outputs as Record<string, unknown>)
    .map(([name, value]) => {
      if (isRecordList(value)) return `${indent}${name}:\n${recordTable(value, `${indent}  `)}`;
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        return `${indent}${name}:\n${formatOutputs(value, `${indent}  `)}`;
      return stringify({ [name]: value })
        .split('\n')
        .filter(Boolean)
        .map((line) => `${indent}${line}\n`)
        .join('');
    })
    .join('');
}
