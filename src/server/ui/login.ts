/**
 * Logging in and out: the login form (with its own CSRF pair, there being no session yet), a
 * token turned into a session cookie, and logout ending the session.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tokenIdOf, verifyApiToken } from '../tokens.js';
import { html } from './html.js';
import { page, send } from './layout.js';
import { createLoginCsrf, LOGIN_COOKIE, type LoginCsrf } from './login-csrf.js';
import { issuerHost, registerOidcLogin } from './oidc-login.js';
import type { OidcSettings } from '../oidc-config.js';
import { SESSION_COOKIE } from './sessions.js';
import type { UiContext } from './ui-context.js';

/**
 * Where a login goes back to: a path of this server only. A second slash or a backslash after the
 * first makes a browser read another host (`//evil`, `/\evil`), and a control character (CR/LF)
 * would split the header: any of them, and anything else, lands on the runs.
 */
const safeNext = (next: unknown): string =>
  typeof next === 'string' && /^\/(?![/\\])[^\\\u0000-\u001f\u007f]*$/.test(next) ? next : '/runs';

/** The login page with a fresh CSRF pair: its nonce set as a cookie on `reply`, its signature in the form. */
function loginPage(
  loginCsrf: LoginCsrf,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { next: string; message?: string; oidc?: OidcSettings; secureCookies?: boolean | undefined },
) {
  const { next, message, oidc } = options;
  const { nonce, field } = loginCsrf.issue();
  void reply.setCookie(LOGIN_COOKIE, nonce, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/login',
    secure: request.protocol === 'https' || options.secureCookies === true,
    maxAge: 3600,
  });
  return page(
    undefined,
    'Log in',
    html`<section class="login">
      <h1>Log in</h1>
      ${message ? html`<p class="error" role="alert">${message}</p>` : ''}
      ${
        oidc
          ? html`<p>
              <a class="button" href="/login/oidc?next=${encodeURIComponent(next)}">Sign in with ${issuerHost(oidc)}</a>
            </p>`
          : ''
      }
      <p>
        ${oidc ? 'Or paste' : 'Paste'} an API token (<code>fleetbook tokens create --role viewer --name you</code>).
      </p>
      <form method="post" action="/login">
        <input type="hidden" name="_csrf" value="${field}" />
        <input type="hidden" name="next" value="${next}" />
        <label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="off" required autofocus />
        <button type="submit">Log in</button>
      </form>
    </section>`,
  );
}

export function registerLogin(context: UiContext): void {
  const { app, sessions, formCaller } = context;
  const loginCsrf = createLoginCsrf();
  app.get('/', async (_request, reply) => reply.redirect('/runs'));
  app.get('/login', async (request, reply) =>
    send(
      reply,
      loginPage(loginCsrf, request, reply, {
        next: safeNext((request.query as { next?: string }).next),
        ...(context.oidc ? { oidc: context.oidc } : {}),
        secureCookies: context.secureCookies,
      }),
    ),
  );
  if (context.oidc) registerOidcLogin(context, context.oidc, safeNext);
  app.post('/login', async (request, reply) => logIn(context, loginCsrf, request, reply));
  app.post('/logout', async (request, reply) => {
    const caller = await formCaller(request, reply, 'viewer');
    if (!caller) return reply;
    await sessions.end(caller.session.id);
    void reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });
}

async function logIn(context: UiContext, loginCsrf: LoginCsrf, request: FastifyRequest, reply: FastifyReply) {
  const body = (request.body ?? {}) as { token?: unknown; next?: unknown; _csrf?: unknown };
  const again = (message: string, status: number) =>
    send(
      reply,
      loginPage(loginCsrf, request, reply, {
        next: safeNext(body.next),
        message,
        secureCookies: context.secureCookies,
        ...(context.oidc ? { oidc: context.oidc } : {}),
      }),
      status,
    );
  // Checked before the token: a forged login (another site logging a browser in as its own token) is refused.
  if (!loginCsrf.matches(request.cookies[LOGIN_COOKIE], body._csrf))
    return again(
      'Refused: this login was not sent from this server’s login form (its CSRF check failed, or the form is from before a restart). Paste the token again.',
      403,
    );
  const presented = typeof body.token === 'string' ? body.token.trim() : '';
  const tokenId = tokenIdOf(presented);
  const address = request.ip;
  // Per address (one client guessing many tokens) and per token id (many clients guessing one secret).
  const keys = [`address:${address}`, ...(tokenId ? [`token:${tokenId}`] : [])];
  const actor = { kind: 'token' as const, name: tokenId ?? '(not a token)', ...(tokenId ? { tokenId } : {}), address };
  const waitMs = context.loginThrottle.waitMs(keys);
  if (waitMs > 0) {
    await context.store.appendAudit({
      actor,
      action: 'login.failed',
      outcome: 'refused',
      detail: { reason: 'throttled' },
    });
    const seconds = Math.ceil(waitMs / 1000);
    void reply.header('retry-after', String(seconds));
    return again(`Too many failed logins from this address or for this token: try again in ${seconds} s.`, 429);
  }
  const token = presented ? await verifyApiToken(context.store, presented) : undefined;
  if (!token) {
    context.loginThrottle.failed(keys);
    await context.store.appendAudit({
      actor,
      action: 'login.failed',
      outcome: 'refused',
      detail: { reason: 'invalid token' },
    });
    return again('That token is not valid (unknown, revoked or mistyped).', 401);
  }
  context.loginThrottle.succeeded(`token:${token.id}`);
  const session = await context.sessions.create(token);
  context.logger.info(
    { event: 'audit.login', by: token.name, role: token.role },
    `${token.name} logged in to the web UI`,
  );
  await context.store.appendAudit({
    actor: { kind: 'token', name: token.name, role: token.role, tokenId: token.id, address },
    action: 'login',
    outcome: 'ok',
  });
  void reply.setCookie(SESSION_COOKIE, session.id, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: request.protocol === 'https' || context.secureCookies === true,
    maxAge: Math.floor(context.sessionTtlMs / 1000),
  });
  void reply.clearCookie(LOGIN_COOKIE, { path: '/login' });
  return reply.redirect(safeNext(body.next), 303);
}
