/**
 * The web UI's login and sessions through fastify's inject: the login form's CSRF check (a
 * signed double-submit cookie bound to the form), refusing with 403 and a clear page a POST
 * without the pair the form set, or with a cookie and a field of two different showings; and
 * sessions kept in the store (the hash of their id only), so one outlives a restart of the
 * server and a logout on another server sharing the store ends it.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { issueApiToken } from '../../src/server/index.js';
import { secondServer, startTestServer, type TestServer } from './harness.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({});
});
afterAll(async () => {
  await t.close();
});

/** The login form as a browser gets it: the CSRF cookie it sets and the hidden field's value. */
async function loginForm(app: FastifyInstance): Promise<{ cookie: string; field: string }> {
  const form = await app.inject({ method: 'GET', url: '/login' });
  const cookie = form.cookies.find((candidate) => candidate.name === 'fleetbook_login');
  const field = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
  if (!cookie || !field) throw new Error(`the login form has no CSRF pair:\n${form.body}`);
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/login' });
  return { cookie: cookie.value, field };
}

const post = (app: FastifyInstance, payload: Record<string, string>, cookie?: string) =>
  app.inject({
    method: 'POST',
    url: '/login',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie ? { cookie: `fleetbook_login=${cookie}` } : {}),
    },
    payload: new URLSearchParams(payload).toString(),
  });

describe('the login form’s CSRF check', () => {
  it('logs in with the pair the form set, into a session cookie', async () => {
    const { cookie, field } = await loginForm(t.server.app);
    const answer = await post(t.server.app, { token: t.tokens.viewer, _csrf: field, next: '/schedules' }, cookie);
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/schedules');
    expect(answer.cookies.find((candidate) => candidate.name === 'fleetbook_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
  });

  it('goes back only to a page of its own: another host, a backslash or a line break in next lands on /runs', async () => {
    for (const next of [
      '/\\evil.example',
      '//evil.example',
      '/\\/evil.example',
      '/runs\r\nSet-Cookie: x=1',
      'https://evil.example',
    ]) {
      const { cookie, field } = await loginForm(t.server.app);
      const answer = await post(t.server.app, { token: t.tokens.viewer, _csrf: field, next }, cookie);
      expect(answer.statusCode, next).toBe(303);
      expect(answer.headers.location, next).toBe('/runs');
    }
  });

  it('refuses with 403 and a clear page a login without the form’s pair, and makes no session', async () => {
    const first = await loginForm(t.server.app);
    const second = await loginForm(t.server.app);
    for (const [what, answer] of [
      ['no cookie, no field', await post(t.server.app, { token: t.tokens.admin })],
      ['a field without its cookie', await post(t.server.app, { token: t.tokens.admin, _csrf: first.field })],
      ['a cookie without a field', await post(t.server.app, { token: t.tokens.admin }, first.cookie)],
      [
        'a cookie and a field of two showings',
        await post(t.server.app, { token: t.tokens.admin, _csrf: second.field }, first.cookie),
      ],
      [
        'a field that is the cookie itself',
        await post(t.server.app, { token: t.tokens.admin, _csrf: first.cookie }, first.cookie),
      ],
    ] as const) {
      expect(answer.statusCode, what).toBe(403);
      expect(answer.body, what).toContain('its CSRF check failed');
      expect(
        answer.cookies.some((candidate) => candidate.name === 'fleetbook_session'),
        what,
      ).toBe(false);
    }
    expect(t.logText()).not.toMatch(/"event":"audit.login"[^\n]*"by":"ops lead"/);
  });
});

/** Logs in through the form; the session cookie's value. */
async function logIn(app: FastifyInstance, token: string): Promise<string> {
  const { cookie, field } = await loginForm(app);
  const answer = await post(app, { token, _csrf: field }, cookie);
  const session = answer.cookies.find((candidate) => candidate.name === 'fleetbook_session');
  if (answer.statusCode !== 303 || !session) throw new Error(`login refused: ${answer.statusCode}`);
  return session.value;
}

const runsPage = (app: FastifyInstance, session: string) =>
  app.inject({ method: 'GET', url: '/runs', headers: { cookie: `fleetbook_session=${session}` } });

describe('web sessions kept in the store', () => {
  it('keeps only the hash of a session id, and the session outlives a restart of the server', async () => {
    const session = await logIn(t.server.app, t.tokens.operator);
    expect((await runsPage(t.server.app, session)).statusCode).toBe(200);
    const raw = new Database(join(t.dir, 'runs.sqlite'), { readonly: true });
    try {
      const rows = raw.prepare('SELECT * FROM web_sessions').all() as Array<Record<string, unknown>>;
      expect(rows.map((row) => row.id_hash)).toContain(createHash('sha256').update(session).digest('hex'));
      expect(JSON.stringify(rows)).not.toContain(session);
    } finally {
      raw.close();
    }

    const restarted = await secondServer(t);
    try {
      const page = await runsPage(restarted.app, session);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('on-call operator · operator');
    } finally {
      await restarted.close();
    }
  });

  it('ends a session on every server sharing the store at a logout on one', async () => {
    const session = await logIn(t.server.app, t.tokens.viewer);
    const other = await secondServer(t);
    try {
      const page = await runsPage(other.app, session);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
      const logout = await other.app.inject({
        method: 'POST',
        url: '/logout',
        headers: { cookie: `fleetbook_session=${session}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf }).toString(),
      });
      expect(logout.statusCode).toBe(303);
      expect(logout.headers.location).toBe('/login');
    } finally {
      await other.close();
    }
    const after = await runsPage(t.server.app, session);
    expect(after.statusCode).toBe(302);
    expect(after.headers.location).toMatch(/^\/login/);
  });

  it('ends the sessions of a revoked token, and refuses an unknown session id', async () => {
    const { secret, token } = await issueApiToken(t.store, { name: 'soon revoked', role: 'viewer' });
    const session = await logIn(t.server.app, secret);
    expect((await runsPage(t.server.app, session)).statusCode).toBe(200);
    await t.store.revokeApiToken(token.id);
    expect((await runsPage(t.server.app, session)).statusCode).toBe(302);
    expect(await t.store.getWebSession(createHash('sha256').update(session).digest('hex'))).toBeUndefined();
    expect((await runsPage(t.server.app, 'made-up')).statusCode).toBe(302);
  });
});
