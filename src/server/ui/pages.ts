/**
 * The web UI: server-rendered pages (escaped by `html`), a stylesheet and two small scripts
 * served as files (the Content-Security-Policy allows no inline script or style), a login
 * that turns a token into a session cookie, and forms that carry the session's CSRF token.
 * Pages: runs (filters), a run (live timeline, step tree, log), playbooks (a start form made
 * from the input schema, next fires, trigger now), schedules (pause, resume, trigger now).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isFleetbookError } from '../../errors/index.js';
import type { Logger } from '../../logging/index.js';
import {
  buildStepTree,
  foldJournal,
  RunStatus,
  type ApiToken,
  type RunRecord,
  type RunStore,
  type StepNode,
} from '../../store/index.js';
import type { JournalHub } from '../journal-hub.js';
import { isLiveStatus } from '../journal-hub.js';
import type { ServerMetrics } from '../metrics.js';
import type { PlaybookCatalog } from '../playbook-catalog.js';
import type { RunLauncher } from '../run-launcher.js';
import { Door } from '../../admission/index.js';
import { streamRunEvents } from '../run-events.js';
import { pauseSchedule, resumeSchedule, triggerSchedule } from '../schedule-actions.js';
import { ApiError } from '../app-error.js';
import { roleAllows, verifyApiToken } from '../tokens.js';
import { logLines, playbookView, problemView, runView, scheduleViews, type InputView, type Scrub } from '../views.js';
import { html, trusted, type Html } from './html.js';
import { createSessions, SESSION_COOKIE, type Session } from './sessions.js';
import { createLoginCsrf, LOGIN_COOKIE } from './login-csrf.js';
import { progressByPath, renderTimeline, statusText, timelineRows } from './timeline.js';

export interface UiOptions {
  store: RunStore;
  catalog: PlaybookCatalog;
  launcher: RunLauncher;
  hub: JournalHub;
  metrics: ServerMetrics;
  logger: Logger;
  scrub: Scrub;
  root: string;
  sessionTtlMs: number;
}

const STATIC_DIR = new URL('./static/', import.meta.url);
const STATIC_TYPES: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'run.js': 'text/javascript; charset=utf-8',
};

/** No inline script or style, nothing from another origin, no framing. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Items of one loop listed per page of the step tree. */
const ITEMS_PER_PAGE = 50;
/** Log lines a run page shows (the newest). */
const LOG_LINES_SHOWN = 300;

interface Caller {
  token: ApiToken;
  session: Session;
}

const STATUS_FILTERS: RunStatus[] = Object.values(RunStatus);

function formatTime(iso: string | undefined): string {
  return iso === undefined ? '' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

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
const symbolOf = (status: string): string => STATUS_SYMBOLS[status] ?? '•';

/** A status as a badge: its word and a symbol, the colour only on top. */
function badge(status: string): Html {
  return html`<span class="badge status-${status}"
    ><span aria-hidden="true">${symbolOf(status)}</span> ${statusText(status)}</span
  >`;
}

function trigger(run: RunRecord): string {
  const { kind, scheduleId, by } = run.trigger;
  const what = kind === 'trigger' ? 'triggered by hand' : kind;
  return `${what}${scheduleId === undefined ? '' : ` (${scheduleId})`}${by === undefined ? '' : ` by ${by}`}${run.dryRun ? ', dry run' : ''}`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? '';
}

export async function registerUi(app: FastifyInstance, options: UiOptions): Promise<void> {
  const { store, catalog, launcher, hub, scrub } = options;
  const sessions = createSessions(store, options.sessionTtlMs);
  await app.register(cookie);
  await app.register(formbody);

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    return payload;
  });

  const statics = new Map<string, string>();
  app.get('/ui/static/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    const type = STATIC_TYPES[file];
    if (!type) return reply.status(404).send('not found');
    let text = statics.get(file);
    if (text === undefined) {
      text = readFileSync(fileURLToPath(new URL(file, STATIC_DIR)), 'utf8');
      statics.set(file, text);
    }
    return reply.header('content-type', type).header('cache-control', 'no-cache').send(text);
  });

  function page(
    caller: Caller | undefined,
    title: string,
    body: Html,
    extra: { script?: string; refreshSeconds?: number } = {},
  ): Html {
    const nav = caller
      ? html`<nav aria-label="Main">
          <a href="/runs">Runs</a><a href="/playbooks">Playbooks</a><a href="/schedules">Schedules</a>
          <span class="who">${caller.token.name} · ${caller.token.role}</span>
          <form method="post" action="/logout" class="inline">
            <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
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

  const send = (reply: FastifyReply, markup: Html, status = 200) =>
    reply.status(status).header('content-type', 'text/html; charset=utf-8').send(markup.text);

  /** The caller of a page, or a redirect to the login page (or 403 for a role too low). */
  async function pageCaller(request: FastifyRequest, reply: FastifyReply, role: ApiToken['role'] = 'viewer') {
    const found = await sessions.find(request.cookies[SESSION_COOKIE]);
    if (!found) {
      await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
      return undefined;
    }
    const caller = { token: found.token, session: found.session };
    if (!roleAllows(caller.token.role, role)) {
      await send(
        reply,
        page(
          caller,
          'Not allowed',
          html`<h1>Not allowed</h1>
            <p>This needs the ${role} role; you are ${caller.token.role}.</p>`,
        ),
        403,
      );
      return undefined;
    }
    return caller;
  }

  /** A state-changing form: the caller with the role, and the session's CSRF token in the body. */
  async function formCaller(request: FastifyRequest, reply: FastifyReply, role: ApiToken['role']) {
    const caller = await pageCaller(request, reply, role);
    if (!caller) return undefined;
    if (!sessions.csrfMatches(caller.session, (request.body as Record<string, unknown> | undefined)?._csrf)) {
      await send(
        reply,
        page(
          caller,
          'Refused',
          html`<h1>Refused</h1>
            <p>The form was stale or forged (CSRF token missing or wrong). Go back, reload and try again.</p>`,
        ),
        403,
      );
      return undefined;
    }
    return caller;
  }

  /** "Trigger now" for a schedule (operator and up): a form with the session's CSRF token. */
  const triggerForm = (caller: Caller, key: string) =>
    roleAllows(caller.token.role, 'operator')
      ? html`<form method="post" action="/schedules/${encodeURIComponent(key)}/trigger" class="inline">
          <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
          <button type="submit">Trigger ${key} now</button>
        </form>`
      : '';

  const safeNext = (next: unknown): string =>
    typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') ? next : '/runs';

  const loginCsrf = createLoginCsrf();
  /** The login page with a fresh CSRF pair: its nonce set as a cookie on `reply`, its signature in the form. */
  const loginPage = (request: FastifyRequest, reply: FastifyReply, next: string, message?: string) => {
    const { nonce, field } = loginCsrf.issue();
    void reply.setCookie(LOGIN_COOKIE, nonce, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/login',
      secure: request.protocol === 'https',
      maxAge: 3600,
    });
    return page(
      undefined,
      'Log in',
      html`<section class="login">
        <h1>Log in</h1>
        <p>Paste an API token (<code>fleetbook tokens create --role viewer --name you</code>).</p>
        ${message ? html`<p class="error" role="alert">${message}</p>` : ''}
        <form method="post" action="/login">
          <input type="hidden" name="_csrf" value="${field}" />
          <input type="hidden" name="next" value="${next}" />
          <label for="token">Token</label>
          <input id="token" name="token" type="password" autocomplete="off" required autofocus />
          <button type="submit">Log in</button>
        </form>
      </section>`,
    );
  };

  app.get('/', async (_request, reply) => reply.redirect('/runs'));
  app.get('/login', async (request, reply) =>
    send(reply, loginPage(request, reply, safeNext((request.query as { next?: string }).next))),
  );
  app.post('/login', async (request, reply) => {
    const body = (request.body ?? {}) as { token?: unknown; next?: unknown; _csrf?: unknown };
    // Checked before the token: a forged login (another site logging a browser in as its own token) is refused.
    if (!loginCsrf.matches(request.cookies[LOGIN_COOKIE], body._csrf))
      return send(
        reply,
        loginPage(
          request,
          reply,
          safeNext(body.next),
          'Refused: this login was not sent from this server’s login form (its CSRF check failed, or the form is from before a restart). Paste the token again.',
        ),
        403,
      );
    const token = typeof body.token === 'string' ? await verifyApiToken(store, body.token.trim()) : undefined;
    if (!token)
      return send(
        reply,
        loginPage(request, reply, safeNext(body.next), 'That token is not valid (unknown, revoked or mistyped).'),
        401,
      );
    const session = await sessions.create(token);
    options.logger.info(
      { event: 'audit.login', by: token.name, role: token.role },
      `${token.name} logged in to the web UI`,
    );
    void reply.setCookie(SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      secure: request.protocol === 'https',
      maxAge: Math.floor(options.sessionTtlMs / 1000),
    });
    void reply.clearCookie(LOGIN_COOKIE, { path: '/login' });
    return reply.redirect(safeNext(body.next), 303);
  });
  app.post('/logout', async (request, reply) => {
    const caller = await formCaller(request, reply, 'viewer');
    if (!caller) return reply;
    await sessions.end(caller.session.id);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });

  app.get('/runs', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const query = request.query as { status?: string; playbook?: string };
    const status = STATUS_FILTERS.find((candidate) => candidate === query.status);
    const playbook = query.playbook?.trim() || undefined;
    const runs = await store.listRuns({ limit: 100, ...(status ? { status } : {}), ...(playbook ? { playbook } : {}) });
    const names = (await catalog.current()).playbooks.map((book) => book.name);
    const rows = runs.map((run) => {
      const view = runView(run);
      return html`<tr>
        <td>${badge(run.status)}</td>
        <td><a href="/runs/${encodeURIComponent(run.id)}">${run.playbook}</a></td>
        <td>${trigger(run)}</td>
        <td><time datetime="${run.startedAt}">${formatTime(run.startedAt)}</time></td>
        <td>
          ${view.durationMs === undefined ? (isLiveStatus(run.status) ? 'still going' : '') : formatDuration(view.durationMs)}
        </td>
        <td><code>${run.id.slice(0, 8)}</code></td>
      </tr>`;
    });
    return send(
      reply,
      page(
        caller,
        'Runs',
        html`<h1>Runs</h1>
          <form class="filters" method="get" action="/runs">
            <label for="status">Status</label>
            <select id="status" name="status">
              <option value="">any</option>
              ${STATUS_FILTERS.map((value) => html`<option value="${value}" ${value === status ? trusted('selected') : ''}>${value}</option>`)}
            </select>
            <label for="playbook">Playbook</label>
            <select id="playbook" name="playbook">
              <option value="">any</option>
              ${names.map((name) => html`<option value="${name}" ${name === playbook ? trusted('selected') : ''}>${name}</option>`)}
            </select>
            <button type="submit">Filter</button>
          </form>
          ${
            runs.length === 0
              ? html`<p class="empty">
                  No runs${status || playbook ? ' match these filters' : ' yet: start one from a playbook'}.
                </p>`
              : html`<table class="runs">
                  <thead>
                    <tr>
                      <th scope="col">Status</th>
                      <th scope="col">Playbook</th>
                      <th scope="col">Trigger</th>
                      <th scope="col">Started</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Run</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${rows}
                  </tbody>
                </table>`
          }`,
        { refreshSeconds: 10 },
      ),
    );
  });

  async function runParts(run: RunRecord, pageNumber: number) {
    // One read of the journal, folded here (the store's `steps` would read it again).
    const journal = await store.journal(run.id);
    const tree = buildStepTree(foldJournal(journal));
    const rows = timelineRows(tree, progressByPath(journal));
    return {
      timeline: trusted(renderTimeline(run, rows, Date.now())),
      // Scrubbed as rendered: a page shows 50 items of a loop, not the 5,000 of the run.
      tree: stepTree(tree, pageNumber),
      log: scrub(logLines(journal, LOG_LINES_SHOWN)),
      lastSeq: journal.at(-1)?.seq ?? 0,
    };
  }

  function stepTree(nodes: readonly StepNode[], pageNumber: number): Html {
    const isItem = (node: StepNode) => /^\[\d+\]$/.test(node.label);
    const render = (list: readonly StepNode[]): Html => {
      const items = list.filter(isItem);
      const from = items.length > ITEMS_PER_PAGE ? pageNumber * ITEMS_PER_PAGE : 0;
      const shownItems = items.slice(from, from + ITEMS_PER_PAGE);
      const shown = [...list.filter((node) => !isItem(node)), ...shownItems].map((node) => ({
        ...node,
        ...scrub({ input: node.input, outputs: node.outputs, error: node.error }),
      }));
      const more =
        items.length > ITEMS_PER_PAGE
          ? html`<li class="more">
              Items ${from}–${from + shownItems.length - 1} of ${items.length}.
              ${from > 0 ? html`<a href="?page=${pageNumber - 1}">Earlier items</a>` : ''}
              ${from + ITEMS_PER_PAGE < items.length ? html`<a href="?page=${pageNumber + 1}">Later items</a>` : ''}
            </li>`
          : '';
      return html`<ul>
        ${shown.map(
          (node) =>
            html`<li>
              <details>
                <summary>
                  ${badge(node.status)} <span class="step">${node.label}</span> <span class="kind">${node.kind}</span>
                  ${node.attempts > 1 ? html`<span class="attempts">${node.attempts} attempts</span>` : ''}
                  <span class="duration">${formatDuration(node.durationMs)}</span>
                </summary>
                <div class="step-detail">
                  ${node.error ? html`<p class="error">${node.error.message}${node.error.code ? html` <code>${node.error.code}</code>` : ''}</p>` : ''}
                  ${
                    node.input === undefined
                      ? ''
                      : html`<h4>Input</h4>
                          <pre>${json(node.input)}</pre>`
                  }
                  ${
                    node.outputs === undefined
                      ? ''
                      : html`<h4>Outputs</h4>
                          <pre>${json(node.outputs)}</pre>`
                  }
                  ${node.asyncOperationId ? html`<p>Operation <code>${node.asyncOperationId}</code> ${node.operationOutcome ?? ''}</p>` : ''}
                </div>
              </details>
              ${node.children.length > 0 ? render(node.children) : ''}
            </li>`,
        )}
        ${more}
      </ul>`;
    };
    return nodes.length === 0 ? html`<p class="empty">No steps journaled yet.</p>` : render(nodes);
  }

  app.get('/runs/:runId', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return send(reply, page(caller, 'Not found', html`<h1>No such run</h1>`), 404);
    const pageNumber = Math.max(0, Number.parseInt((request.query as { page?: string }).page ?? '0', 10) || 0);
    const parts = await runParts(run, pageNumber);
    const view = scrub(runView(run));
    const canResume = run.status === RunStatus.interrupted && roleAllows(caller.token.role, 'operator');
    return send(
      reply,
      page(
        caller,
        `${run.playbook} ${run.status}`,
        html`<section
          class="run"
          data-run-id="${run.id}"
          data-last-seq="${parts.lastSeq}"
          data-live="${isLiveStatus(run.status) ? 'yes' : 'no'}"
        >
          <h1>${run.playbook} <span id="run-status">${badge(run.status)}</span></h1>
          <dl class="facts">
            <dt>Run</dt>
            <dd><code>${run.id}</code></dd>
            <dt>Trigger</dt>
            <dd>${trigger(run)}</dd>
            <dt>Started</dt>
            <dd>${formatTime(run.startedAt)}</dd>
            <dt>Duration</dt>
            <dd id="run-duration">
              ${view.durationMs === undefined ? 'still going' : formatDuration(view.durationMs)}
            </dd>
            ${
              run.resumes > 0
                ? html`<dt>Resumed</dt>
                    <dd>${run.resumes}×</dd>`
                : ''
            }
          </dl>
          ${run.error ? html`<p class="error" role="alert">${run.error.message}</p>` : ''}
          ${
            canResume
              ? html`<form method="post" action="/runs/${encodeURIComponent(run.id)}/resume" class="actions">
                  <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
                  <button type="submit">Resume the run</button>
                </form>`
              : ''
          }
          ${approvalPanel(run, caller)}
          ${
            isLiveStatus(run.status) || run.status === RunStatus.interrupted
              ? roleAllows(caller.token.role, 'operator')
                ? html`<form method="post" action="/runs/${encodeURIComponent(run.id)}/cancel" class="actions">
                    <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
                    <button type="submit" class="danger">Cancel the run</button>
                  </form>`
                : ''
              : ''
          }
          <details class="inputs">
            <summary>Inputs</summary>
            <pre>${json(view.inputs)}</pre>
          </details>
          ${
            view.outputs === undefined
              ? ''
              : html`<details class="inputs" open>
                  <summary>Outputs</summary>
                  <pre>${json(view.outputs)}</pre>
                </details>`
          }
          <h2>Timeline</h2>
          <div id="timeline" class="timeline-box" aria-live="off">${parts.timeline}</div>
          <div class="columns">
            <div>
              <h2>Steps</h2>
              <div class="tree">${parts.tree}</div>
            </div>
            <div>
              <h2>Log</h2>
              <ol id="log" class="log">
                ${parts.log.map(
                  (line) =>
                    html`<li class="${line.level}">
                      <time>${line.at.slice(11, 19)}</time> <span class="path">${line.path}</span> ${line.message}
                    </li>`,
                )}
              </ol>
            </div>
          </div>
        </section>`,
        { script: 'run.js' },
      ),
    );
  });

  app.get('/runs/:runId/timeline', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return reply.status(404).send('');
    const journal = await store.journal(run.id);
    const tree = buildStepTree(foldJournal(journal));
    const view = runView(run);
    return reply.header('content-type', 'application/json; charset=utf-8').send({
      svg: renderTimeline(run, timelineRows(tree, progressByPath(journal)), Date.now()),
      status: run.status,
      statusText: statusText(run.status),
      symbol: symbolOf(run.status),
      live: isLiveStatus(run.status),
      duration: view.durationMs === undefined ? 'still going' : formatDuration(view.durationMs),
    });
  });

  app.get('/runs/:runId/events', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return reply.status(404).send('');
    const lastEventId = Number(
      (request.headers['last-event-id'] as string | undefined) ?? (request.query as { after?: string }).after ?? 0,
    );
    await streamRunEvents(
      reply,
      { hub, scrub, metrics: options.metrics },
      run.id,
      Number.isInteger(lastEventId) ? lastEventId : 0,
    );
    return reply;
  });

  /** A waiting approval: what it asks, and Approve / Deny for an operator (who may be refused as no approver). */
  function approvalPanel(run: RunRecord, caller: Caller): Html {
    const wait = run.wait;
    if (run.status !== RunStatus.waiting || !wait) return html``;
    if (wait.reason !== 'approval')
      return html`<p class="waiting" role="status">
        Waiting for ${wait.reason}${wait.until ? html` until <time>${formatTime(wait.until)}</time>` : ''} at
        ${wait.path}.
      </p>`;
    const base = `/runs/${encodeURIComponent(run.id)}`;
    return html`<section class="approval" aria-labelledby="approval-title">
      <h2 id="approval-title">Approval waiting at ${wait.path}</h2>
      ${wait.message ? html`<p>${scrub(wait.message)}</p>` : ''}
      <p class="meta">
        Since
        ${formatTime(wait.since)}${wait.timeoutAt ? html`, times out ${formatTime(wait.timeoutAt)}` : ''}${
          wait.approvers ? html`; approvers: ${wait.approvers.join(', ')}` : ''
        }
      </p>
      ${
        roleAllows(caller.token.role, 'operator')
          ? html`<div class="decide">
              <form method="post" action="${base}/approve">
                <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
                <label for="approve-comment">Comment (optional)</label>
                <input id="approve-comment" name="comment" type="text" />
                <button type="submit">Approve</button>
              </form>
              <form method="post" action="${base}/deny">
                <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
                <label for="deny-comment">Why deny (required)</label>
                <input id="deny-comment" name="comment" type="text" required />
                <button type="submit" class="danger">Deny</button>
              </form>
            </div>`
          : html`<p>Deciding needs the operator role.</p>`
      }
    </section>`;
  }

  for (const decision of ['approved', 'denied'] as const) {
    app.post(`/runs/:runId/${decision === 'approved' ? 'approve' : 'deny'}`, async (request, reply) => {
      const caller = await formCaller(request, reply, 'operator');
      if (!caller) return reply;
      const run = await store.getRun((request.params as { runId: string }).runId);
      if (!run) return send(reply, page(caller, 'Not found', html`<h1>No such run</h1>`), 404);
      const comment = String((request.body as Record<string, unknown>).comment ?? '').trim();
      try {
        await launcher.decide(await catalog.find(run.playbook), {
          runId: run.id,
          decision,
          by: caller.token.name,
          ...(comment === '' ? {} : { comment }),
        });
      } catch (error) {
        if (!isFleetbookError(error)) throw error;
        return send(
          reply,
          page(
            caller,
            'Not recorded',
            html`<h1>Not recorded</h1>
              <p class="error">${scrub(error.message)}</p>
              <p><a href="/runs/${encodeURIComponent(run.id)}">Back to the run</a></p>`,
          ),
          409,
        );
      }
      return reply.redirect(`/runs/${encodeURIComponent(run.id)}`, 303);
    });
  }

  app.post('/runs/:runId/cancel', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    if (!run) return send(reply, page(caller, 'Not found', html`<h1>No such run</h1>`), 404);
    await launcher.cancel(run.id, caller.token.name);
    return reply.redirect(`/runs/${encodeURIComponent(run.id)}`, 303);
  });

  app.post('/runs/:runId/resume', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const run = await store.getRun((request.params as { runId: string }).runId);
    const playbook = run && (await catalog.find(run.playbook));
    if (!run || !playbook) return send(reply, page(caller, 'Not found', html`<h1>No such run or playbook</h1>`), 404);
    try {
      await launcher.resume(playbook, run, {}, caller.token.name);
    } catch (error) {
      return send(
        reply,
        page(
          caller,
          'Not resumed',
          html`<h1>Not resumed</h1>
            <p class="error">${scrub(isFleetbookError(error) ? error.message : String(error))}</p>`,
        ),
        409,
      );
    }
    return reply.redirect(`/runs/${encodeURIComponent(run.id)}`, 303);
  });

  app.get('/playbooks', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const folder = await catalog.current();
    const problems = folder.problems.map((problem) => problemView(problem, options.root));
    return send(
      reply,
      page(
        caller,
        'Playbooks',
        html`<h1>Playbooks</h1>
          <ul class="cards">
            ${folder.playbooks.map((book) => {
              const view = scrub(playbookView(book, options.root));
              return html`<li class="card">
                <h2><a href="/playbooks/${encodeURIComponent(view.name)}">${view.name}</a></h2>
                <p>${view.description ?? ''}</p>
                <p class="meta">
                  ${view.inputs.length} input(s) · ${view.schedules.length} schedule(s) · <code>${view.file}</code>
                </p>
              </li>`;
            })}
          </ul>
          ${
            problems.length === 0
              ? ''
              : html`<h2>Problems</h2>
                  <ul class="problems">
                    ${problems.map((problem) => html`<li class="${problem.severity}"><strong>${problem.severity}</strong> <code>${problem.file}:${problem.line}</code> ${problem.code}: ${problem.message}</li>`)}
                  </ul>`
          }`,
      ),
    );
  });

  function inputField(input: InputView, given: Record<string, string>): Html {
    const id = `input-${input.name}`;
    const name = `input.${input.name}`;
    const value =
      given[input.name] ??
      (input.default === undefined
        ? ''
        : typeof input.default === 'string'
          ? input.default
          : JSON.stringify(input.default));
    const label = html`<label for="${id}"
      >${input.name}${input.required ? html` <span class="required">(required)</span>` : ''}</label
    >`;
    const help = input.description ? html`<p class="help" id="${id}-help">${input.description}</p>` : '';
    const described = input.description ? trusted(` aria-describedby="${id}-help"`) : '';
    let field: Html;
    if (input.secret) field = html`<input id="${id}" name="${name}" type="password" autocomplete="off" ${described} />`;
    else if (input.enum) {
      field = html`<select id="${id}" name="${name}" ${described}>
        ${input.required ? '' : html`<option value="">(default)</option>`}
        ${input.enum.map((option) => html`<option value="${String(option)}" ${String(option) === value ? trusted('selected') : ''}>${String(option)}</option>`)}
      </select>`;
    } else if (input.type === 'boolean')
      field = html`<select id="${id}" name="${name}" ${described}>
        <option value="true" ${value === 'true' ? trusted('selected') : ''}>true</option>
        <option value="false" ${value !== 'true' ? trusted('selected') : ''}>false</option>
      </select>`;
    else if (input.type === 'integer' || input.type === 'number')
      field = html`<input
        id="${id}"
        name="${name}"
        type="number"
        step="${input.type === 'integer' ? '1' : 'any'}"
        value="${value}"
        ${described}
      />`;
    else if (input.type === 'array' || input.type === 'object')
      field = html`<textarea id="${id}" name="${name}" rows="3" spellcheck="false" ${described}>${value}</textarea>
        <p class="help">JSON (or YAML flow) ${input.type}</p>`;
    else field = html`<input id="${id}" name="${name}" type="text" value="${value}" ${described} />`;
    return html`<div class="field">${label}${field}${help}</div>`;
  }

  async function playbookPage(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: Caller,
    message?: string,
    given: Record<string, string> = {},
  ) {
    const { name } = request.params as { name: string };
    const playbook = await catalog.find(name);
    if (!playbook) return send(reply, page(caller, 'Not found', html`<h1>No such playbook</h1>`), 404);
    const view = scrub(playbookView(playbook, options.root));
    const schedules = await scheduleViews(store, [playbook], 3, Date.now());
    const canStart = roleAllows(caller.token.role, 'operator');
    return send(
      reply,
      page(
        caller,
        view.name,
        html`<h1>${view.name}</h1>
          <p class="description">${view.description ?? ''}</p>
          <p class="meta"><code>${view.file}</code></p>
          <div class="columns">
            <section>
              <h2>Start a run</h2>
              ${message ? html`<p class="error" role="alert">${message}</p>` : ''}
              ${
                canStart
                  ? html`<form method="post" action="/playbooks/${encodeURIComponent(view.name)}/run" class="start">
                      <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
                      ${view.inputs.map((input) => inputField(input, given))}
                      <div class="field">
                        <label
                          ><input type="checkbox" name="dryRun" value="true" /> Dry run (reads only; writes are not
                          sent)</label
                        >
                      </div>
                      <button type="submit">Start run</button>
                    </form>`
                  : html`<p>Starting runs needs the operator role.</p>`
              }
            </section>
            <section>
              <h2>Schedules</h2>
              ${
                schedules.length === 0
                  ? html`<p class="empty">No schedules.</p>`
                  : html`<ul class="schedules">
                      ${schedules.map(
                        (schedule) =>
                          html`<li>
                            <strong>${schedule.key}</strong> <code>${schedule.cron}</code> ${schedule.timezone}
                            ${schedule.paused ? html`<span class="badge status-interrupted">paused</span>` : ''}
                            ${triggerForm(caller, schedule.key)}
                            <ul>
                              ${schedule.next.map((at) => html`<li>next <time datetime="${at}">${formatTime(at)}</time></li>`)}
                            </ul>
                          </li>`,
                      )}
                    </ul>`
              }
            </section>
          </div>`,
      ),
      message ? 400 : 200,
    );
  }

  app.get('/playbooks/:name', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    return playbookPage(request, reply, caller);
  });

  app.post('/playbooks/:name/run', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const playbook = await catalog.find((request.params as { name: string }).name);
    if (!playbook) return send(reply, page(caller, 'Not found', html`<h1>No such playbook</h1>`), 404);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const given: Record<string, string> = {};
    const inputs: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    try {
      for (const [key, raw] of Object.entries(body)) {
        if (!key.startsWith('input.') || typeof raw !== 'string') continue;
        const name = key.slice('input.'.length);
        const spec = Object.hasOwn(playbook.inputs, name) ? playbook.inputs[name] : undefined;
        if (!spec?.secret) given[name] = raw;
        // An empty field takes the default.
        if (raw.trim() === '') continue;
        inputs[name] = (await import('../../engine/index.js')).parseInputText(spec, raw);
      }
      const { run } = await launcher.start(
        { playbook, inputs, trigger: { kind: 'manual' }, dryRun: body.dryRun === 'true' },
        { name: caller.token.name, role: caller.token.role, door: Door.uiStart },
      );
      if (!run) throw new Error('a manual run is never queued behind another');
      options.metrics.runStarted(playbook.name);
      return reply.redirect(`/runs/${encodeURIComponent(run.id)}`, 303);
    } catch (error) {
      if (!isFleetbookError(error)) throw error;
      return playbookPage(request, reply, caller, scrub(error.message), given);
    }
  });

  app.get('/schedules', async (request, reply) => {
    const caller = await pageCaller(request, reply);
    if (!caller) return reply;
    const schedules = await scheduleViews(store, (await catalog.current()).playbooks, 3, Date.now());
    const canManage = roleAllows(caller.token.role, 'admin');
    const canTrigger = roleAllows(caller.token.role, 'operator');
    return send(
      reply,
      page(
        caller,
        'Schedules',
        html`<h1>Schedules</h1>
          ${
            schedules.length === 0
              ? html`<p class="empty">No playbook has a schedule.</p>`
              : html`<table class="schedules">
                  <thead>
                    <tr>
                      <th scope="col">Schedule</th>
                      <th scope="col">Playbook</th>
                      <th scope="col">When</th>
                      <th scope="col">State</th>
                      <th scope="col">Next fires</th>
                      <th scope="col">Last run</th>
                      ${canTrigger ? html`<th scope="col">Action</th>` : ''}
                    </tr>
                  </thead>
                  <tbody>
                    ${schedules.map(
                      (schedule) =>
                        html`<tr>
                          <td><strong>${schedule.key}</strong></td>
                          <td>
                            <a href="/playbooks/${encodeURIComponent(schedule.playbook)}">${schedule.playbook}</a>
                          </td>
                          <td><code>${schedule.cron}</code> ${schedule.timezone}</td>
                          <td>
                            ${schedule.paused ? html`<span class="badge status-interrupted">‖ paused${schedule.pausedBy ? ` by ${schedule.pausedBy}` : ''}</span>` : schedule.enabled ? html`<span class="badge status-succeeded">▶ active</span>` : html`<span class="badge status-notStarted">disabled</span>`}
                          </td>
                          <td>
                            ${
                              schedule.next.length === 0
                                ? html`<span class="meta">none while ${schedule.paused ? 'paused' : 'disabled'}</span>`
                                : schedule.next.map((at) => html`<time datetime="${at}">${formatTime(at)}</time><br />`)
                            }
                          </td>
                          <td>
                            ${schedule.lastRunId ? html`<a href="/runs/${encodeURIComponent(schedule.lastRunId)}">${schedule.lastResult ?? 'run'}</a>` : 'never'}
                          </td>
                          ${
                            canTrigger
                              ? html`<td class="actions">
                                  ${triggerForm(caller, schedule.key)}
                                  ${
                                    canManage
                                      ? html`<form
                                          method="post"
                                          action="/schedules/${encodeURIComponent(schedule.key)}/${schedule.paused ? 'resume' : 'pause'}"
                                          class="inline"
                                        >
                                          <input type="hidden" name="_csrf" value="${caller.session.csrf}" />
                                          <button type="submit">
                                            ${schedule.paused ? 'Resume' : 'Pause'} ${schedule.key}
                                          </button>
                                        </form>`
                                      : ''
                                  }
                                </td>`
                              : ''
                          }
                        </tr>`,
                    )}
                  </tbody>
                </table>`
          }`,
      ),
    );
  });

  for (const action of ['pause', 'resume'] as const) {
    app.post(`/schedules/:key/${action}`, async (request, reply) => {
      const caller = await formCaller(request, reply, 'admin');
      if (!caller) return reply;
      const key = (request.params as { key: string }).key;
      const deps = { store, catalog, logger: options.logger };
      await (action === 'pause'
        ? pauseSchedule(deps, key, caller.token.name)
        : resumeSchedule(deps, key, caller.token.name));
      return reply.redirect('/schedules', 303);
    });
  }

  app.post('/schedules/:key/trigger', async (request, reply) => {
    const caller = await formCaller(request, reply, 'operator');
    if (!caller) return reply;
    const key = (request.params as { key: string }).key;
    const answer = (status: number, title: string, message: string) =>
      send(
        reply,
        page(
          caller,
          title,
          html`<h1>${title}</h1>
            <p class="${status >= 400 ? 'error' : 'meta'}" role="alert">${scrub(message)}</p>
            <p><a href="/schedules">Back to the schedules</a></p>`,
        ),
        status,
      );
    try {
      const triggered = await triggerSchedule({ store, catalog, logger: options.logger, launcher }, key, {
        name: caller.token.name,
        role: caller.token.role,
        door: Door.uiTrigger,
      });
      if (triggered.outcome === 'queued')
        return answer(
          202,
          'Queued',
          `run ${triggered.behind} still goes and the overlap policy of ${key} is queue: the fire waits for it`,
        );
      options.metrics.runStarted(triggered.run.playbook);
      return reply.redirect(`/runs/${encodeURIComponent(triggered.run.id)}`, 303);
    } catch (error) {
      if (error instanceof ApiError) return answer(error.statusCode, 'Not triggered', error.message);
      if (isFleetbookError(error)) return answer(409, 'Not triggered', error.message);
      throw error;
    }
  });
}
