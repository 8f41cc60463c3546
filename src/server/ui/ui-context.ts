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
import type { OidcSettings } from '../oidc-config.js';
import type { ServerMetrics } from '../metrics.js';
import type { PlaybookCatalog } from '../playbook-catalog.js';
import type { RunLauncher } from '../run-launcher.js';
import { highestRole, roleAllows, roleFor } from '../tokens.js';
import type { Scrub } from '../views.js';
import { html } from './html.js';
import { sendMessage, type Caller } from './layout.js';
import { systemClock, type Clock } from '../../timers/index.js';
import { createLoginThrottle, type LoginThrottle } from './login-throttle.js';
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
  /** Where runs keep their files: a run's are in `<outputsDir>/<runId>/`. */
  outputsDir: string;
  /** Single sign-on (`server.oidc`); none: token login only. */
  oidc?: OidcSettings;
  /** The time of login throttling. @default systemClock */
  clock?: Clock;
  /** Session cookies are `Secure` even over plain HTTP (a TLS proxy in front). @default only over TLS */
  secureCookies?: boolean;
}

export interface UiContext extends UiOptions {
  app: FastifyInstance;
  sessions: Sessions;
  loginThrottle: LoginThrottle;
  /** The caller of a page, or undefined once a redirect to the login page (or 403 for a role too low) is sent. */
  pageCaller(
    request: FastifyRequest,
    reply: FastifyReply,
    role?: ApiToken['role'],
    onSomePlaybook?: boolean,
  ): Promise<Caller | undefined>;
  /**
   * A state-changing form: the caller with the role, and the session's CSRF token in the body; else
   * undefined, refused. `onSomePlaybook`: the role held for some playbook will do (the form's own
   * run or playbook is checked by the route).
   */
  formCaller(
    request: FastifyRequest,
    reply: FastifyReply,
    role: ApiToken['role'],
    onSomePlaybook?: boolean,
  ): Promise<Caller | undefined>;
}

export function createUiContext(app: FastifyInstance, options: UiOptions): UiContext {
  const sessions = createSessions(options.store, options.sessionTtlMs);
  async function pageCaller(
    request: FastifyRequest,
    reply: FastifyReply,
    role: ApiToken['role'] = 'viewer',
    onSomePlaybook = false,
  ) {
    const found = await sessions.find(request.cookies[SESSION_COOKIE]);
    if (!found) {
      await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
      return undefined;
    }
    // The navigation's count of the gates this caller may decide (the inbox's own list).
    const pending = await pendingApprovals(options.store, found.token);
    const caller = { token: found.token, session: found.session, pendingApprovals: pending.length };
    const held = onSomePlaybook ? highestRole(caller.token) : roleFor(caller.token);
    if (!roleAllows(held, role)) {
      const more = html`<p>This needs the ${role} role; you are ${held}.</p>`;
      await sendMessage(reply, caller, 'Not allowed', more, 403);
      return undefined;
    }
    return caller;
  }
  async function formCaller(
    request: FastifyRequest,
    reply: FastifyReply,
    role: ApiToken['role'],
    onSomePlaybook = false,
  ) {
    const caller = await pageCaller(request, reply, role, onSomePlaybook);
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
  const loginThrottle = createLoginThrottle(options.clock ?? systemClock);
  return { ...options, app, sessions, loginThrottle, pageCaller, formCaller };
}
