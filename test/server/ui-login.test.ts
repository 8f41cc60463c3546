/**
 * The web UI's login through fastify's inject: the login form's CSRF check (a signed
 * double-submit cookie bound to the form), refusing with 403 and a clear page a POST without
 * the pair the form set, or with a cookie and a field of two different showings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from './harness.js';

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
