/**
 * The login's defences against the attacks of issue 41: 700 wrong tokens from one address are
 * throttled after a few (429 with a growing Retry-After, never a request held open), so are wrong
 * secrets for one token id from many addresses; every failed and successful login is in the
 * audit log with its address; the session cookie is Secure when `secureCookies` is set (behind
 * a TLS proxy). Time is the server's virtual clock, moved by arming a timer on it.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVirtualClock, type VirtualClock } from '../../src/timers/index.js';
import { startTestServer, type TestServer } from './harness.js';

let clock: VirtualClock;
let t: TestServer;
beforeAll(async () => {
  clock = createVirtualClock(Date.parse('2026-03-01T10:00:00.000Z'));
  // No sweep timer: the clock moves only when a test moves it.
  t = await startTestServer({}, { clock, waitSweepMs: Infinity });
});
afterAll(async () => {
  await t.close();
});

const pass = (ms: number) => new Promise<void>((resolve) => clock.setTimer(resolve, ms));

async function attempt(app: FastifyInstance, token: string, remoteAddress: string, next = '/runs') {
  const form = await app.inject({ method: 'GET', url: '/login', remoteAddress });
  const nonce = form.cookies.find((cookie) => cookie.name === 'fleetbook_login')?.value ?? '';
  const field = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  return app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `fleetbook_login=${nonce}` },
    payload: new URLSearchParams({ token, _csrf: field, next }).toString(),
  });
}

const wrongToken = (n: number) => `fbk_${n.toString(16).padStart(12, '0')}_${'x'.repeat(43)}`;

describe('failed logins', () => {
  it('throttles 700 wrong tokens from one address after a few, with a growing Retry-After, and audits them', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 700; n++)
      statuses.push((await attempt(t.server.app, wrongToken(n), '198.51.100.7')).statusCode);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.filter((status) => status === 401)).toHaveLength(4);
    expect(statuses.slice(4).every((status) => status === 429)).toBe(true);

    const refused = await attempt(t.server.app, wrongToken(1000), '198.51.100.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toContain('Too many failed logins from this address or for this token: try again in 1 s.');
    // Even the right token waits: the address is held off, whatever it sends.
    expect((await attempt(t.server.app, t.tokens.viewer, '198.51.100.7')).statusCode).toBe(429);
    await pass(1000);
    expect((await attempt(t.server.app, wrongToken(1001), '198.51.100.7')).statusCode).toBe(401);
    expect((await attempt(t.server.app, wrongToken(1002), '198.51.100.7')).headers['retry-after']).toBe('2');
    // Another address is not held off by this one.
    expect((await attempt(t.server.app, t.tokens.viewer, '203.0.113.5')).statusCode).toBe(303);

    const failed = await t.store.listAudit({ action: 'login.failed' });
    expect(failed.length).toBeGreaterThanOrEqual(700);
    expect(failed[0]).toMatchObject({
      actor: { kind: 'token', name: '000000000000', tokenId: '000000000000', address: '198.51.100.7' },
      outcome: 'refused',
      detail: { reason: 'invalid token' },
    });
    expect(failed[5]).toMatchObject({ detail: { reason: 'throttled' } });
    const [login] = await t.store.listAudit({ action: 'login', actor: 'wall screen' });
    expect(login).toMatchObject({
      actor: { kind: 'token', name: 'wall screen', role: 'viewer', address: '203.0.113.5' },
      outcome: 'ok',
    });
  });

  it('throttles wrong secrets for one token id from many addresses', async () => {
    const id = /^fbk_([0-9a-f]{12})_/.exec(t.tokens.operator)?.[1] ?? '';
    const guess = `fbk_${id}_${'y'.repeat(43)}`;
    const statuses: number[] = [];
    for (let n = 0; n < 10; n++) statuses.push((await attempt(t.server.app, guess, `192.0.2.${n + 1}`)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429, 429, 429, 429]);
    await pass(60 * 60_000 + 1);
    expect((await attempt(t.server.app, t.tokens.operator, '192.0.2.200')).statusCode).toBe(303);
  });
});

describe('next', () => {
  it('a CR/LF in next gives a redirect to a page of this server, never a 500', async () => {
    const answer = await attempt(t.server.app, t.tokens.admin, '192.0.2.250', '/runs\r\nSet-Cookie: evil=1');
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/runs');
    expect(answer.headers['set-cookie']).not.toEqual(expect.arrayContaining([expect.stringContaining('evil')]));
  });
});

describe('the session cookie', () => {
  it('is not Secure over plain HTTP by default, and Secure when secureCookies is set (a TLS proxy in front)', async () => {
    const plain = await attempt(t.server.app, t.tokens.admin, '192.0.2.251');
    expect(plain.cookies.find((cookie) => cookie.name === 'fleetbook_session')?.secure).toBeUndefined();
    const proxied = await startTestServer({}, { secureCookies: true });
    try {
      const login = await attempt(proxied.server.app, proxied.tokens.admin, '192.0.2.252');
      expect(login.statusCode).toBe(303);
      expect(login.cookies.find((cookie) => cookie.name === 'fleetbook_session')?.secure).toBe(true);
      const form = await proxied.server.app.inject({ method: 'GET', url: '/login' });
      expect(form.cookies.find((cookie) => cookie.name === 'fleetbook_login')?.secure).toBe(true);
    } finally {
      await proxied.close();
    }
  });
});
