/**
 * What the web UI's route groups share: the server's parts, the sessions, and the two ways a
 * route finds its caller (a page: logged in with the role; a form: also with the session's
 * CSRF token), each sending the login redirect or the refusal itself when there is none.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../logging/index.js';
import type { ApiToken, RunStore } from '../../store/index.js';
import { pendingApprovals } from '../approvals-inbox.js';
import type { JournalHub } from '../journal-hub.js';
import type { ServerMetrics } from '../metrics.js';
import type { PlaybookCatalog } from '../playbook-catalog.js';
import type { RunLauncher } from '../run-launcher.js';
import { roleAllows } from '../tokens.js';
import type { Scrub } from '../views.js';
import { html } from './html.js';
import { sendMessage, type Caller } from './layout.js';
import { createSessions, SESSION_COOKIE, type Sessions } from './sessions.js';

export interface UiOptions {
  store: RunStore;
  catalog: PlaybookCatalog;
  launcher: RunLauncher;
  hub: JournalHub;
  metrics: ServerMetrics;
  logger: Logger;
  scrub: Scrub;
  /** Folder shown paths are relative to (the playbooks' parent). */
  root: string;
  sessionTtlMs: number;
}

export interface UiContext extends UiOptions {
  app: FastifyInstance;
  sessions: Sessions;
  /** The caller of a page, or undefined once a redirect to the login page (or 403 for a role too low) is sent. */
  pageCaller(request: FastifyRequest, reply: FastifyReply, role?: ApiToken['role']): Promise<Caller | undefined>;
  /** A state-changing form: the caller with the role, and the session's CSRF token in the body; else undefined, refused. */
  formCaller(request: FastifyRequest, reply: FastifyReply, role: ApiToken['role']): Promise<Caller | undefined>;
}

export function createUiContext(app: FastifyInstance, options: UiOptions): UiContext {
  const sessions = createSessions(options.store, options.sessionTtlMs);
  async function pageCaller(request: FastifyRequest, reply: FastifyReply, role: ApiToken['role'] = 'viewer') {
    const found = await sessions.find(request.cookies[SESSION_COOKIE]);
    if (!found) {
      await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
      return undefined;
    }
    // The navigation's count of the gates this caller may decide (the inbox's own list).
    const pending = await pendingApprovals(options.store, found.token);
    const caller = { token: found.token, session: found.session, pendingApprovals: pending.length };
    if (!roleAllows(caller.token.role, role)) {
      const more = html`<p>This needs the ${role} role; you are ${caller.token.role}.</p>`;
      await sendMessage(reply, caller, 'Not allowed', more, 403);
      return undefined;
    }
    return caller;
  }
  async function formCaller(request: FastifyRequest, reply: FastifyReply, role: ApiToken['role']) {
    const caller = await pageCaller(request, reply, role);
    if (!caller) return undefined;
    if (!sessions.csrfMatches(caller.session, (request.body as Record<string, unknown> | undefined)?._csrf)) {
      const more = html`<p>
        The form was stale or forged (CSRF token missing or wrong). Go back, reload and try again.
      </p>`;
      await sendMessage(reply, caller, 'Refused', more, 403);
      return undefined;
    }
    return caller;
  }
  return { ...options, app, sessions, pageCaller, formCaller };
}
