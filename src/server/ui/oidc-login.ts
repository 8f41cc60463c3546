/**
 * Single sign-on for the web UI (OpenID Connect, authorization code with PKCE, `state` and
 * `nonce`, through openid-client). `GET /login/oidc` sends the browser to the provider with a
 * fresh state, nonce and code verifier, kept in a short-lived cookie sealed (AES-GCM) under a
 * key derived from the client secret: every server of the team can finish a login another began,
 * and a restart loses none. `GET /login/oidc/callback` trades the code for the tokens; openid-client
 * checks the ID token's issuer, audience, nonce, expiry and (non-repudiation) its signature
 * against the provider's keys. The user's name, groups and role come from the ID token at each
 * login; a user whose groups give no role is refused.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as client from 'openid-client';
import type { WebSessionUser } from '../../store/index.js';
import { roleOfGroups, type OidcSettings } from '../oidc-config.js';
import { html } from './html.js';
import { page, send } from './layout.js';
import { SESSION_COOKIE } from './sessions.js';
import type { UiContext } from './ui-context.js';

const PENDING_COOKIE = 'fleetbook_oidc';
const PENDING_PATH = '/login/oidc';
/** How long a browser may stay at the provider before its login is stale. */
const PENDING_TTL_MS = 10 * 60_000;
const CALLBACK_PATH = '/login/oidc/callback';

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  expiresAtMs: number;
}

/** The provider's host, as the login page names it. */
export const issuerHost = (settings: OidcSettings): string => new URL(settings.issuer).host;

function sealer(secret: string) {
  const key = Buffer.from(hkdfSync('sha256', secret, 'fleetbook', 'oidc pending login', 32));
  return {
    seal(pending: Pending): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(pending), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed: unknown): Pending | undefined {
      if (typeof sealed !== 'string' || sealed.length < 40) return undefined;
      try {
        const bytes = Buffer.from(sealed, 'base64url');
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
        decipher.setAuthTag(bytes.subarray(12, 28));
        const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
        const pending = JSON.parse(text) as Pending;
        return pending.expiresAtMs > Date.now() ? pending : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** The provider's configuration, discovered at the first login (a provider down at the server's start stops nothing). */
function discoverer(settings: OidcSettings) {
  let found: Promise<client.Configuration> | undefined;
  return () => {
    found ??= (async () => {
      const url = new URL(settings.issuer);
      const local = url.protocol === 'http:';
      const config = await client.discovery(
        url,
        settings.clientId,
        undefined,
        client.ClientSecretBasic(settings.clientSecret),
        local ? { execute: [client.allowInsecureRequests] } : undefined,
      );
      // Without it a token endpoint's ID token is taken unsigned-checked (TLS vouches for it): a key of its own is checked too.
      client.enableNonRepudiationChecks(config);
      return config;
    })().catch((error: unknown) => {
      found = undefined;
      throw error;
    });
    return found;
  };
}

/** The address this server is reached at: `server.url`, else the request's own. */
const baseOf = (settings: OidcSettings, request: FastifyRequest): string =>
  settings.serverUrl ?? `${request.protocol}://${request.host}`;

function refusedPage(issuer: string, message: string) {
  return page(
    undefined,
    'Sign-in refused',
    html`<section class="login">
      <h1>Sign-in refused</h1>
      <p class="error" role="alert">${message}</p>
      <p><a href="/login">Back to the login page</a> (sign in again, or paste an API token).</p>
      <p class="muted">Provider: ${issuer}</p>
    </section>`,
  );
}

/** The user the ID token's claims name, with the role their groups give (undefined role: none). */
function userOf(settings: OidcSettings, claims: client.IDToken) {
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const name = text(claims.preferred_username) ?? text(claims.email) ?? text(claims.name) ?? claims.sub;
  const raw = claims[settings.groupsClaim];
  const groups = Array.isArray(raw) ? raw.filter((group): group is string => typeof group === 'string') : [];
  return { name, groups, roles: roleOfGroups(settings, groups) };
}

export function registerOidcLogin(context: UiContext, settings: OidcSettings, safeNext: (next: unknown) => string) {
  const { app, logger } = context;
  const pendingSeal = sealer(settings.clientSecret);
  const configuration = discoverer(settings);
  const refuse = (reply: FastifyReply, message: string, status: number) =>
    send(reply, refusedPage(settings.issuer, message), status);

  app.get(PENDING_PATH, async (request, reply) => {
    let config: client.Configuration;
    try {
      config = await configuration();
    } catch (error) {
      logger.warn(
        { event: 'server.oidcUnreachable', issuer: settings.issuer, err: error },
        'server: OIDC discovery failed',
      );
      return refuse(
        reply,
        `The identity provider ${settings.issuer} could not be reached or described itself wrongly: ${(error as Error).message}`,
        502,
      );
    }
    const pending: Pending = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      next: safeNext((request.query as { next?: unknown }).next),
      expiresAtMs: Date.now() + PENDING_TTL_MS,
    };
    // Lax, not Strict: the provider sends the browser back with a cross-site navigation.
    void reply.setCookie(PENDING_COOKIE, pendingSeal.seal(pending), {
      httpOnly: true,
      sameSite: 'lax',
      path: PENDING_PATH,
      secure: request.protocol === 'https',
      maxAge: PENDING_TTL_MS / 1000,
    });
    const target = client.buildAuthorizationUrl(config, {
      redirect_uri: new URL(CALLBACK_PATH, baseOf(settings, request)).href,
      scope: 'openid profile email',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return reply.redirect(target.href, 303);
  });

  app.get(CALLBACK_PATH, async (request, reply) => {
    const pending = pendingSeal.open(request.cookies[PENDING_COOKIE]);
    void reply.clearCookie(PENDING_COOKIE, { path: PENDING_PATH });
    if (!pending)
      return refuse(reply, 'This sign-in was not started here, or took longer than 10 minutes. Sign in again.', 400);
    const user = await signedInUser(context, settings, { request, reply, pending, configuration, refuse });
    if (!user) return reply;
    const session = await context.sessions.createForUser(user);
    logger.info(
      { event: 'audit.login', by: user.name, role: user.role, grants: user.grants, via: 'oidc' },
      `${user.name} signed in to the web UI`,
    );
    void reply.setCookie(SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'strict',
      path: '/',
      secure: request.protocol === 'https',
      maxAge: Math.floor(context.sessionTtlMs / 1000),
    });
    return reply.redirect(pending.next, 303);
  });
}

/** openid-client's message, with its cause's when it has one (which claim, which check). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== message ? `${message} (${cause})` : message;
}

interface Callback {
  request: FastifyRequest;
  reply: FastifyReply;
  pending: Pending;
  configuration: () => Promise<client.Configuration>;
  refuse: (reply: FastifyReply, message: string, status: number) => unknown;
}

/** The user the provider's answer names, or undefined once the refusal is sent. */
async function signedInUser(
  context: UiContext,
  settings: OidcSettings,
  { request, reply, pending, configuration, refuse }: Callback,
): Promise<WebSessionUser | undefined> {
  let claims: client.IDToken | undefined;
  try {
    const current = new URL(request.url, baseOf(settings, request));
    const tokens = await client.authorizationCodeGrant(await configuration(), current, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (error) {
    const reason = reasonOf(error);
    context.logger.warn(
      { event: 'audit.loginRefused', via: 'oidc', reason },
      `server: a sign-in was refused: ${reason}`,
    );
    await refuse(reply, `The identity provider’s answer was refused: ${reason}.`, 401);
    return undefined;
  }
  if (!claims) {
    await refuse(reply, 'The identity provider sent no ID token.', 401);
    return undefined;
  }
  const user = userOf(settings, claims);
  if (user.roles === undefined) {
    const groups = user.groups.length === 0 ? 'no groups' : `the groups ${user.groups.join(', ')}`;
    context.logger.warn(
      { event: 'audit.loginRefused', via: 'oidc', by: user.name, groups: user.groups },
      `server: ${user.name} has no role`,
    );
    await refuse(
      reply,
      `${user.name} is signed in at the provider with ${groups}, none of which is given a Fleetbook role. Ask an admin to add one of your groups to server.oidc.roles.`,
      403,
    );
    return undefined;
  }
  return { name: user.name, groups: user.groups, ...user.roles };
}
