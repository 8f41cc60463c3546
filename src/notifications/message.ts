/**
 * What a notification says, made once from a run's end (and kept in the outbox), then rendered
 * per channel: plain text and HTML for e-mail, Markdown-ish text for chat, the record itself
 * for a JSON webhook. Made only from values already scrubbed of the run's secrets; keys that
 * always hold secrets and `Bearer` tokens are removed here once more.
 */
import { REDACTED, withoutSecretKeys } from '../logging/index.js';
import type { NotificationEvent } from '../playbook/index.js';

/** A run's end (or wait) as the engine reports it: what a message is made from. */
export interface RunEnding {
  runId: string;
  playbook: string;
  dryRun: boolean;
  trigger: { kind: string; scheduleId?: string };
  /** How the run ended (or `waiting`). */
  status: string;
  /** When the run first started: a resumed run's too (its record's `startedAt`). */
  startedAt: string;
  /** When it ended (or began to wait). */
  endedAt: string;
  /** The playbook's rendered outputs, secrets scrubbed. */
  outputs?: unknown;
  error?: { message: string; code?: string };
  /** Every step execution and loop item: `kind: 'item'` for loop items, paths like `systems[3]`. */
  steps: ReadonlyArray<{ path: string; kind: string; status: string; error?: { message: string } }>;
  /** Which end of the run this is: a resumed run that fails again is a new event, a recorded one is never made twice. */
  occurrence: string;
  /** A run waiting for a person: the gate it waits at. */
  waiting?: { step: string; message?: string; approvers?: string[] };
}

export type TableRow = Record<string, string | number | boolean | null>;

export interface NotificationMessage {
  event: NotificationEvent;
  playbook: string;
  runId: string;
  status: string;
  startedAt: string;
  /** The run's whole duration, from its first start to this end: time waiting at a gate and between resumes included. */
  durationMs: number;
  /** `manual`, `schedule <id>`, `resume`. */
  trigger: string;
  dryRun: boolean;
  error?: { message: string; code?: string };
  /** Loop items that failed: names from the outputs' table, else paths from the step tree. */
  failedItems: string[];
  notStartedItems: string[];
  /** The per-item table of the outputs (a rolling update's per-system rows), when they hold one. */
  table?: TableRow[];
  /** A report export's address and recipients, when the outputs name them. */
  report?: { url?: string; recipients?: string[] };
  /** The run's page (`server.url` of fleetbook.yaml). */
  runUrl?: string;
  waiting?: { step: string; message?: string; approvers?: string[] };
}

/** Rows of a table shown at most; the rest are counted. */
const MAX_TABLE_ROWS = 50;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isScalar = (value: unknown): value is string | number | boolean | null =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** A list of records of scalars: a table (the first one found in the outputs, at most two levels down). */
function findTable(outputs: unknown, depth = 0): TableRow[] | undefined {
  if (Array.isArray(outputs) && outputs.length > 0 && outputs.every(isRecord))
    return outputs.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [key, isScalar(value) ? value : JSON.stringify(value)]),
      ),
    );
  if (!isRecord(outputs) || depth >= 2) return undefined;
  for (const value of Object.values(outputs)) {
    const table = findTable(value, depth + 1);
    if (table) return table;
  }
  return undefined;
}

/** What a row is named by: its system, name or id column, else its first text. */
function rowName(row: TableRow): string {
  for (const key of ['system', 'name', 'item', 'id']) if (typeof row[key] === 'string') return row[key];
  const first = Object.values(row).find((value) => typeof value === 'string');
  return first === undefined ? JSON.stringify(row) : String(first);
}

function findReport(outputs: unknown): NotificationMessage['report'] {
  if (!isRecord(outputs)) return undefined;
  const url = Object.entries(outputs).find(
    ([key, value]) => /url$/i.test(key) && typeof value === 'string' && /^https?:\/\//.test(value),
  )?.[1] as string | undefined;
  const recipients = Array.isArray(outputs.recipients) ? outputs.recipients.map(String) : undefined;
  if (url === undefined && recipients === undefined) return undefined;
  return { ...(url === undefined ? {} : { url }), ...(recipients === undefined ? {} : { recipients }) };
}

const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** Every string of `value` without `Bearer`/`Basic` credentials. */
function withoutTokens<T>(value: T): T {
  if (typeof value === 'string') return value.replace(BEARER, `$1 ${REDACTED}`) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => withoutTokens(item)) as T;
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutTokens(item)])) as T;
}

function describeTrigger(trigger: RunEnding['trigger']): string {
  return trigger.kind === 'schedule' && trigger.scheduleId ? `schedule ${trigger.scheduleId}` : trigger.kind;
}

/**
 * From the run's first start to this end. Not the time of the process that ended it: a run
 * approved after waiting at a gate, or resumed, is told its whole duration, as `runs show` and
 * the web UI tell it.
 */
function wholeDurationMs(ending: Pick<RunEnding, 'startedAt' | 'endedAt'>): number {
  const ms = Date.parse(ending.endedAt) - Date.parse(ending.startedAt);
  return Number.isFinite(ms) ? Math.max(0, ms) : 0;
}

/** The message of `event` about `ending`. */
export function composeMessage(
  event: NotificationEvent,
  ending: RunEnding,
  options: { serverUrl?: string | undefined } = {},
): NotificationMessage {
  const outputs = withoutSecretKeys(ending.outputs);
  const table = findTable(outputs);
  const statusColumn = table?.some((row) => typeof row.status === 'string');
  const itemsWith = (status: string): string[] =>
    table && statusColumn
      ? table.filter((row) => row.status === status).map(rowName)
      : ending.steps.filter((step) => step.kind === 'item' && step.status === status).map((step) => step.path);
  const report = findReport(outputs);
  const message: NotificationMessage = {
    event,
    playbook: ending.playbook,
    runId: ending.runId,
    status: ending.status,
    startedAt: ending.startedAt,
    durationMs: wholeDurationMs(ending),
    trigger: describeTrigger(ending.trigger),
    dryRun: ending.dryRun,
    ...(ending.error
      ? { error: { message: ending.error.message, ...(ending.error.code ? { code: ending.error.code } : {}) } }
      : {}),
    failedItems: itemsWith('failed'),
    notStartedItems: itemsWith('notStarted'),
    ...(table ? { table } : {}),
    ...(report ? { report } : {}),
    ...(options.serverUrl ? { runUrl: `${options.serverUrl}/runs/${encodeURIComponent(ending.runId)}` } : {}),
    ...(ending.waiting ? { waiting: ending.waiting } : {}),
  };
  return withoutTokens(message);
}

/** `1 h 2 min`, `3 min 4 s`, `5.2 s`, `120 ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

const headline: Record<NotificationEvent, string> = {
  failed: 'failed',
  succeeded: 'succeeded',
  toleranceUsed: 'succeeded with failed items (within its tolerance)',
  waiting: 'is waiting for approval',
};

/** `rolling-cluster-update failed (run 1f2e3d4c)`: an e-mail's subject, a chat message's title. */
export function messageTitle(message: NotificationMessage): string {
  return `${message.playbook} ${headline[message.event]}${message.dryRun ? ' (dry run)' : ''} (run ${message.runId.slice(0, 8)})`;
}

/** The facts as label and value, in the order every rendering shows them. */
export function messageFacts(message: NotificationMessage): Array<[string, string]> {
  const facts: Array<[string, string]> = [
    ['Playbook', message.playbook],
    ['Run', message.runId],
    ['Status', message.status],
    ['Duration', formatDuration(message.durationMs)],
    ['Trigger', message.trigger],
    ['Started', message.startedAt],
  ];
  if (message.error)
    facts.push(['Error', `${message.error.message}${message.error.code ? ` (${message.error.code})` : ''}`]);
  if (message.waiting)
    facts.push([
      'Waiting at',
      `${message.waiting.step}${message.waiting.message ? `: ${message.waiting.message}` : ''}${message.waiting.approvers?.length ? ` (approvers: ${message.waiting.approvers.join(', ')})` : ''}`,
    ]);
  if (message.failedItems.length > 0) facts.push(['Failed items', message.failedItems.join(', ')]);
  if (message.notStartedItems.length > 0) facts.push(['Never started', message.notStartedItems.join(', ')]);
  if (message.report?.url) facts.push(['Report', message.report.url]);
  if (message.report?.recipients) facts.push(['Recipients', message.report.recipients.join(', ')]);
  if (message.runUrl) facts.push(['Run page', message.runUrl]);
  return facts;
}

function tableColumns(table: readonly TableRow[]): string[] {
  return [...new Set(table.flatMap((row) => Object.keys(row)))];
}

const cell = (value: TableRow[string] | undefined): string =>
  value === null || value === undefined ? '' : String(value);

/** The table as lines of `|`-separated cells (at most MAX_TABLE_ROWS rows), or none. */
export function renderTable(message: NotificationMessage): string[] {
  if (!message.table) return [];
  const columns = tableColumns(message.table);
  const lines = [columns.join(' | ')];
  for (const row of message.table.slice(0, MAX_TABLE_ROWS))
    lines.push(columns.map((column) => cell(row[column])).join(' | '));
  if (message.table.length > MAX_TABLE_ROWS) lines.push(`(${message.table.length - MAX_TABLE_ROWS} more rows)`);
  return lines;
}

/** Plain text: an e-mail's text part. */
export function renderText(message: NotificationMessage): string {
  const lines = [messageTitle(message), '', ...messageFacts(message).map(([label, value]) => `${label}: ${value}`)];
  const table = renderTable(message);
  if (table.length > 0) lines.push('', ...table);
  return `${lines.join('\n')}\n`;
}

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

/** HTML: an e-mail's HTML part. */
export function renderHtml(message: NotificationMessage): string {
  const facts = messageFacts(message)
    .map(([label, value]) => {
      const shown = /^https?:\/\//.test(value)
        ? `<a href="${escapeHtml(value)}">${escapeHtml(value)}</a>`
        : escapeHtml(value);
      return `<tr><th align="left">${escapeHtml(label)}</th><td>${shown}</td></tr>`;
    })
    .join('');
  let table = '';
  if (message.table) {
    const columns = tableColumns(message.table);
    const head = columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('');
    const rows = message.table
      .slice(0, MAX_TABLE_ROWS)
      .map((row) => `<tr>${columns.map((column) => `<td>${escapeHtml(cell(row[column]))}</td>`).join('')}</tr>`)
      .join('');
    const more =
      message.table.length > MAX_TABLE_ROWS ? `<p>${message.table.length - MAX_TABLE_ROWS} more rows</p>` : '';
    table = `<table border="1" cellpadding="4" cellspacing="0"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${more}`;
  }
  return `<html><body><h2>${escapeHtml(messageTitle(message))}</h2><table>${facts}</table>${table}</body></html>`;
}

/** Markdown-ish text for chat (Slack's mrkdwn reads `*bold*`, Teams `**bold**`; both read ``` blocks). */
export function renderMarkdown(message: NotificationMessage, bold = '*'): string {
  const lines = [
    `${bold}${messageTitle(message)}${bold}`,
    ...messageFacts(message).map(([label, value]) => `${bold}${label}:${bold} ${value}`),
  ];
  const table = renderTable(message);
  if (table.length > 0) lines.push('```', ...table, '```');
  return lines.join('\n');
}
