/**
 * The `email` step: a Markdown message rendered twice (HTML, and the text part), its
 * attachments checked and read, sent once through the run's mailer (an e-mail channel of
 * fleetbook.yaml, or a rehearsal's outbox). The send is a write: `request.sending` (with the
 * Message-ID) is journaled before it, `request.answered` after the server took it, so a resume
 * knows whether it went (see `resumeEmail`).
 */
import { copyFileSync, mkdirSync, realpathSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import MarkdownIt from 'markdown-it';
import { errorMessage } from '../../errors/index.js';
import { isTableValue, tableText, type ExpressionContext, type Template } from '../../expressions/index.js';
import { toErrorRecord } from './error-record.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { StepRuntime, LeafResult, Mailer, MailToSend } from './types.js';
import type { StepErrorCode } from '../error-codes.js';

/** The operation id an e-mail's sends are journaled under (resume knows it: the step decides by `onUnknown`). */
export const EMAIL_OPERATION = 'email';

export interface EmailArgs {
  via?: string;
  to: unknown[];
  cc: unknown[];
  bcc: unknown[];
  subject: string;
  html: string;
  text: string;
  attach: unknown[];
  maxAttachmentBytes: number;
  onUnknown: 'resend' | 'skip' | 'fail';
  playbookDir: string;
  /** `file:line` of the step, for located messages. */
  where: string;
}

const ADDRESS = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+\.[^\s@<>()[\]",;:\\]+$/;

/** An address, bare or as `Name <address>`. */
export function isEmailAddress(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const named = /^[^<>]*<([^<>]+)>$/.exec(value.trim());
  return ADDRESS.test(named?.[1] ?? value.trim());
}

const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

/** Bytes of `10MB`, `500KB`, `2048` (the schema checked the form). */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*(B|KB|MB|GB)$/.exec(String(value));
  return match ? Math.floor(Number(match[1]) * (UNITS[match[2] ?? 'B'] ?? 1)) : undefined;
}

/** `dir`'s real path, or undefined when it does not exist (a run that wrote no file has no outputs folder). */
function realDir(dir: string): string | undefined {
  try {
    return realpathSync(dir);
  } catch {
    return undefined;
  }
}

/** Whether `path` is `dir` or under it (both real paths). */
const isInside = (path: string, dir: string): boolean => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
};

/**
 * Why `path` may not be attached, or undefined: it must be a regular file whose real path (links
 * resolved) lies in the playbook's folder or one of `dirs` (the run's outputs folder). A
 * relative path is read from the playbook's folder.
 */
export function attachmentProblem(path: string, playbookDir: string, dirs: readonly string[]): string | undefined {
  const full = resolve(playbookDir, path);
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    return `'${path}' does not exist`;
  }
  if (!statSync(real).isFile()) return `'${path}' is not a regular file`;
  const allowed = [playbookDir, ...dirs].map(realDir).filter((dir): dir is string => dir !== undefined);
  if (!allowed.some((dir) => isInside(real, dir)))
    return `'${path}' lies outside the run's outputs folder and the playbook's folder (${[playbookDir, ...dirs].join(', ')})`;
  return undefined;
}

const markdown = new MarkdownIt({ html: false, linkify: false });

/** A value as Markdown that shows it as text: every ASCII punctuation character escaped. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~&"'=:$%@^,;/?]/g, (character) => `\\${character}`);
}

/** A value in the text part: as text; a `$table()` as aligned columns. */
export function renderText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (isTableValue(value)) return `\n${tableText(value)}\n`;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A value in the Markdown of the HTML part: escaped text; a `$table()` as a Markdown table (its cells escaped). */
function renderMarkdownValue(value: unknown): string {
  if (isTableValue(value)) {
    const { columns, rows } = value.fleetbookTable;
    if (columns.length === 0) return '';
    const row = (cells: readonly string[]): string =>
      `| ${cells.map((cell) => escapeMarkdown(cell.replace(/\s+/g, ' '))).join(' | ')} |`;
    return `\n\n${[row(columns), `|${columns.map(() => ' --- |').join('')}`, ...rows.map(row)].join('\n')}\n\n`;
  }
  return escapeMarkdown(renderText(value));
}

/** The body's two parts: the Markdown rendered to HTML (values escaped), and the text as written with the values. */
export async function renderBody(body: Template, context: ExpressionContext): Promise<{ html: string; text: string }> {
  const source = await body.render(context, renderMarkdownValue);
  return { html: markdown.render(source), text: await body.render(context, renderText) };
}

function fail(message: string, code: StepErrorCode, details?: Record<string, unknown>): never {
  throw new StepError(message, { kind: StepFailureKind.invalidInput, code, ...(details ? { details } : {}) });
}

/** The addresses of a field, checked: a computed value that is no address fails the step. */
function addressList(args: EmailArgs, field: 'to' | 'cc' | 'bcc'): string[] {
  return args[field].map((value, index) => {
    if (!isEmailAddress(value))
      fail(
        `${args.where}: email ${field}[${index}]: ${JSON.stringify(value)} is not an e-mail address`,
        'INVALID_EMAIL_ADDRESS',
      );
    return value.trim();
  });
}

/** The channel named by `via`, or the only one. */
function channelOf(args: EmailArgs, mailer: Mailer | undefined): string {
  const channels = mailer?.channels ?? [];
  if (args.via !== undefined && (channels.includes(args.via) || mailer?.rehearsal !== undefined)) return args.via;
  if (args.via === undefined && channels.length === 1) return channels[0] as string;
  if (args.via === undefined && mailer?.rehearsal !== undefined && channels.length === 0) return 'rehearsal';
  const known = channels.length === 0 ? 'none is configured' : `channels: ${channels.join(', ')}`;
  return fail(
    args.via === undefined
      ? `${args.where}: email: no \`via:\` and not exactly one e-mail channel in fleetbook.yaml (${known})`
      : `${args.where}: email via: '${args.via}' is not an e-mail channel of fleetbook.yaml (${known})`,
    'EMAIL_CHANNEL',
  );
}

interface Attachment {
  filename: string;
  content: Buffer;
  contentType: string;
  bytes: number;
  gzipped: boolean;
}

/**
 * The download link of a file too large to attach: `<server.url>/runs/<id>/files/<path>`, which
 * serves only the run's outputs folder, so a file of the playbook's folder is copied there first.
 */
function downloadLink(serverUrl: string, runtime: StepRuntime, real: string, filename: string): string {
  const { outputsDir, runId } = runtime.mail;
  const folder = realDir(outputsDir);
  let path = filename;
  if (folder !== undefined && isInside(real, folder)) path = relative(folder, real).split(sep).join('/');
  else {
    mkdirSync(outputsDir, { recursive: true });
    copyFileSync(real, join(outputsDir, filename));
  }
  return `${serverUrl}/runs/${encodeURIComponent(runId)}/files/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The attachments read, gzipped when over the limit; one still over it is a download link, or the step fails. */
function readAttachments(args: EmailArgs, runtime: StepRuntime): { files: Attachment[]; links: string[] } {
  const files: Attachment[] = [];
  const links: string[] = [];
  for (const [index, value] of args.attach.entries()) {
    if (typeof value !== 'string' || value === '')
      fail(`${args.where}: email attach[${index}]: ${JSON.stringify(value)} is not a path`, 'INVALID_ATTACHMENT');
    const problem = attachmentProblem(value, args.playbookDir, [runtime.mail.outputsDir]);
    if (problem) fail(`${args.where}: email attach[${index}]: ${problem}`, 'INVALID_ATTACHMENT');
    const real = realpathSync(resolve(args.playbookDir, value));
    const content = readFileSync(real);
    const filename = basename(value);
    if (content.length <= args.maxAttachmentBytes) {
      files.push({ filename, content, contentType: 'application/octet-stream', bytes: content.length, gzipped: false });
      continue;
    }
    const gzipped = gzipSync(content);
    if (gzipped.length <= args.maxAttachmentBytes) {
      files.push({
        filename: `${filename}.gz`,
        content: gzipped,
        contentType: 'application/gzip',
        bytes: gzipped.length,
        gzipped: true,
      });
      continue;
    }
    const serverUrl = runtime.mail.mailer?.serverUrl;
    if (serverUrl === undefined)
      fail(
        `${args.where}: email attach[${index}]: '${value}' is ${content.length} bytes, ${gzipped.length} gzipped, over maxAttachment (${args.maxAttachmentBytes}); set server.url in fleetbook.yaml to send a download link instead, or raise maxAttachment`,
        'ATTACHMENT_TOO_LARGE',
      );
    links.push(downloadLink(serverUrl, runtime, real, filename));
  }
  return { files, links };
}

/** The message as sent (the same for every attempt and a resume: its Message-ID derives from run and path). */
function composeMail(args: EmailArgs, path: string, runtime: StepRuntime, channel: string) {
  const to = addressList(args, 'to');
  const cc = addressList(args, 'cc');
  const bcc = addressList(args, 'bcc');
  if (to.length + cc.length + bcc.length === 0)
    fail(`${args.where}: email: no recipient (to, cc and bcc are empty)`, 'INVALID_EMAIL_ADDRESS');
  const { files, links } = readAttachments(args, runtime);
  const key = `${runtime.mail.runId}/${path}`;
  const linkNote = links.length === 0 ? '' : `\n\nToo large to attach; download: ${links.join(' ')}\n`;
  const mail: MailToSend = {
    to,
    cc,
    bcc,
    subject: args.subject,
    text: `${args.text}${linkNote}`,
    html: `${args.html}${links.map((link) => `<p>Too large to attach; download: <a href="${link}">${link}</a></p>`).join('')}`,
    messageId: runtime.mail.mailer?.messageId(channel, key) ?? `<${key}@fleetbook.invalid>`,
    headers: { 'X-Fleetbook-Run': runtime.mail.runId, 'X-Fleetbook-Step': path },
    attachments: files.map(({ filename, content, contentType }) => ({ filename, content, contentType })),
  };
  const outputs = {
    messageId: mail.messageId,
    channel,
    to,
    cc,
    bcc,
    subject: args.subject,
    attachments: [
      ...files.map(({ filename, bytes, gzipped }) => ({ filename, bytes, gzipped })),
      ...links.map((link) => ({ filename: '', bytes: 0, gzipped: false, link })),
    ],
  };
  return { mail, outputs };
}

/** A failed send as the step's error: a permanent refusal with the server's words, else not sent after the channel's retries. */
function sendFailure(error: unknown, channel: string): StepError {
  const { responseCode, response } = error as { responseCode?: number; response?: string };
  const permanent = responseCode !== undefined && responseCode >= 500;
  return new StepError(
    permanent
      ? `email: the SMTP server of channel '${channel}' refused the message: ${response ?? responseCode}`
      : `email: channel '${channel}' did not send the message: ${errorMessage(error)}`,
    {
      kind: StepFailureKind.http,
      code: permanent ? 'EMAIL_REFUSED' : 'EMAIL_NOT_SENT',
      ...(responseCode === undefined ? {} : { details: { responseCode, response } }),
      cause: error,
    },
  );
}

export async function executeEmail(args: EmailArgs, path: string, runtime: StepRuntime): Promise<LeafResult> {
  const { mailer } = runtime.mail;
  const channel = channelOf(args, mailer);
  const { mail, outputs } = composeMail(args, path, runtime, channel);
  const recipients = [...mail.to, ...mail.cc, ...mail.bcc].join(', ');
  if (runtime.dryRun && mailer?.rehearsal === undefined) {
    runtime.logger.info({ dryRun: true, messageId: mail.messageId }, `dry run: e-mail to ${recipients} not sent`);
    return { status: 'simulated', outputs: { ...outputs, outcome: 'simulated' } };
  }
  if (mailer === undefined) return fail(`${args.where}: email: no e-mail channel is configured`, 'EMAIL_CHANNEL');
  const { attempt } = runtime;
  await runtime.journal({
    type: 'request.sending',
    path,
    attempt,
    operationId: EMAIL_OPERATION,
    method: 'SEND',
    idempotency: { messageId: mail.messageId },
  });
  let receipt;
  try {
    receipt = await mailer.send(channel, mail, {
      clock: runtime.clock,
      signal: runtime.signal,
      onRetry: (next, delayMs, reason) =>
        runtime.log('warn', { delayMs, reason }, `e-mail not taken yet; try ${next} in ${delayMs} ms (${reason})`),
    });
  } catch (error) {
    if (runtime.signal.aborted) throw error;
    const failure = sendFailure(error, channel);
    await runtime.journal({
      type: 'request.failed',
      path,
      attempt,
      error: toErrorRecord(failure),
      outcomeUnknown: false,
    });
    throw failure;
  }
  const rehearsed = mailer.rehearsal !== undefined;
  const sent = {
    ...outputs,
    outcome: rehearsed ? 'rehearsed' : 'sent',
    accepted: receipt.accepted,
    response: receipt.response,
  };
  await runtime.journal({ type: 'request.answered', path, attempt, httpStatus: 250, body: sent });
  runtime.logger.info(
    { messageId: mail.messageId, channel, ...(rehearsed ? { rehearsal: mailer.rehearsal } : {}) },
    rehearsed
      ? `e-mail to ${recipients} put in ${mailer.rehearsal}, not sent`
      : `e-mail to ${recipients} sent through ${channel}`,
  );
  return { outputs: sent };
}

/**
 * A resume's first attempt at a step whose send the journal shows in flight: taken by the server
 * (`answered`) it is not sent again; sent without a recorded answer, `onUnknown` decides.
 */
export async function resumeEmail(
  args: EmailArgs,
  path: string,
  runtime: StepRuntime,
  inFlight: { state: string; body?: unknown },
  confirmUnknown: boolean,
): Promise<LeafResult> {
  if (inFlight.state !== 'unknown') {
    runtime.logger.info({}, 'e-mail already taken by the server before the run stopped: not sent again');
    return { outputs: inFlight.body ?? { outcome: 'sent' } };
  }
  if (args.onUnknown === 'resend' || (args.onUnknown === 'fail' && confirmUnknown))
    return executeEmail(args, path, runtime);
  const channel = channelOf(args, runtime.mail.mailer);
  const messageId = runtime.mail.mailer?.messageId(channel, `${runtime.mail.runId}/${path}`);
  if (args.onUnknown === 'fail')
    throw new StepError(
      `${args.where}: email was sent before the run stopped and whether the server took it is unknown (Message-ID ${messageId ?? '?'}). Check the mailbox, then resume with --confirm-unknown to send it again.`,
      { kind: StepFailureKind.outcomeUnknown, code: 'OUTCOME_UNKNOWN' },
    );
  runtime.logger.warn(
    { event: 'email.outcomeUnknown', messageId, onUnknown: 'skip' },
    `e-mail was sent before the run stopped, its answer not recorded: taken as sent, not sent again (onUnknown: skip; Message-ID ${messageId ?? '?'})`,
  );
  return { outputs: { messageId, channel, subject: args.subject, outcome: 'unknown' } };
}
