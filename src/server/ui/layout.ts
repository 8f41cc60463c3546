/**
 * What every page shares: the shell (head, stylesheet, navigation with who is logged in and a
 * Log out form), sending it as HTML, the session's CSRF field of a state-changing form, and a
 * status badge. Values reach the markup only through `html`, which escapes them.
 */
import type { FastifyReply } from 'fastify';
import type { Caller as AdmissionCaller, Door } from '../../admission/index.js';
import type { ApiToken } from '../../store/index.js';
import { describeRole, roleAllows, roleFor, type Grant } from '../tokens.js';
import { html, type Html } from './html.js';
import type { Session } from './sessions.js';
import { statusText } from './timeline.js';

/** Who asks for a page: the session's token, and the session (its CSRF token goes into forms). */
export interface Caller {
  /**
   * The session's token, or the single sign-on's user as one (with every role their groups give,
   * `grants`, and the groups themselves, which a gate's `approvers.groups` reads).
   */
  token: ApiToken & { grants?: Grant[]; groups?: string[] };
  session: Session;
  /** How many gates wait for a decision this caller may give (the navigation's count). */
  pendingApprovals?: number;
}

/** Whether the caller may act (start, cancel, resume, approve) on runs of `playbook`. */
export const operatesOn = (caller: Caller, playbook: string): boolean =>
  roleAllows(roleFor(caller.token, playbook), 'operator');

/** The caller as admission takes it: its role for each playbook, and its address for the audit log. */
export const admissionCaller = (caller: Caller, door: Door, address?: string): AdmissionCaller => ({
  name: caller.token.name,
  role: roleFor(caller.token),
  door,
  ...(address === undefined ? {} : { address }),
  roleFor: (playbook) => roleFor(caller.token, playbook),
});

/** `operator`, or `operator on playbooks matching *-report* (viewer elsewhere)`. */
export const roleText = (caller: Caller): string => describeRole(caller.token);

/** The hidden field carrying the session's CSRF token, which every state-changing form sends. */
export const csrfField = (caller: Caller): Html =>
  html`<input type="hidden" name="_csrf" value="${caller.session.csrf}" />`;

/** The `selected` attribute of an option, when `on`. */
export const selectedIf = (on: boolean): Html | '' => (on ? html`selected` : '');

export function page(
  caller: Caller | undefined,
  title: string,
  body: Html,
  extra: { script?: string; refreshSeconds?: number } = {},
): Html {
  const nav = caller
    ? html`<nav aria-label="Main">
        <a href="/runs">Runs</a><a href="/playbooks">Playbooks</a><a href="/schedules">Schedules</a
        ><a href="/approvals" id="nav-approvals"
          >Approvals${caller.pendingApprovals ? html` <span class="count">${String(caller.pendingApprovals)}</span>` : ''}</a
        >
        <span class="who">${caller.token.name} · ${roleText(caller)}</span>
        <form method="post" action="/logout" class="inline">
          ${csrfField(caller)}
          <button type="submit" class="link">Log out</button>
        </form>
      </nav>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${extra.refreshSeconds === undefined ? '' : html`<meta http-equiv="refresh" content="${extra.refreshSeconds}" />`}
        <title>${title} · Fleetbook</title>
        <link rel="stylesheet" href="/ui/static/app.css" />
        ${extra.script ? html`<script src="/ui/static/${extra.script}" defer></script>` : ''}
      </head>
      <body>
        <header><a class="brand" href="/runs">Fleetbook</a>${nav}</header>
        <main>${body}</main>
      </body>
    </html>`;
}

export const send = (reply: FastifyReply, markup: Html, status = 200) =>
  reply.status(status).header('content-type', 'text/html; charset=utf-8').send(markup.text);

/** A page that says one thing: `title` as its heading, then `more`. */
export const sendMessage = (reply: FastifyReply, caller: Caller, title: string, more: Html, status: number) =>
  send(
    reply,
    page(
      caller,
      title,
      html`<h1>${title}</h1>
        ${more}`,
    ),
    status,
  );

/** A 404 page whose heading says what was not found. */
export const sendNotFound = (reply: FastifyReply, caller: Caller, heading: string) =>
  send(reply, page(caller, 'Not found', html`<h1>${heading}</h1>`), 404);

/** A symbol per status (in the fonts a wall screen has), beside the word. */
const STATUS_SYMBOLS: Record<string, string> = {
  succeeded: '✓',
  failed: '✗',
  running: '▶',
  queued: '…',
  interrupted: '‖',
  waiting: '○',
  cancelled: '⊘',
  skipped: '↷',
  notStarted: '·',
  simulated: '~',
};
export const symbolOf = (status: string): string => STATUS_SYMBOLS[status] ?? '•';

/** A status as a badge: its word and a symbol, the colour only on top. */
export function badge(status: string): Html {
  return html`<span class="badge status-${status}"
    ><span aria-hidden="true">${symbolOf(status)}</span> ${statusText(status)}</span
  >`;
}
