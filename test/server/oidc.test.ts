/**
 * Single sign-on against a real OpenID provider (oidc-provider, its own key and users, on a port
 * of its own), over HTTP as a browser follows it: the login page's "Sign in with", the provider's
 * login, the callback; the user's name, groups and role from the ID token, re-read at each
 * login; a user whose groups give no role refused; logout ending the session; and an ID token
 * with the wrong issuer, audience or nonce, expired, or signed by a key the provider does not
 * publish, refused with a message and no session.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { browser } from '../support/form-browser.js';
import { startTestProvider, type TestProvider } from '../support/oidc-test-provider.js';
import { startTestServer, type TestServer } from './harness.js';

let provider: TestProvider;
let t: TestServer;

beforeAll(async () => {
  provider = await startTestProvider({
    alice: { groups: ['sre'] },
    bob: { groups: ['platform-admins', 'sre'] },
    carol: { groups: ['auditors'] },
    dave: { groups: ['marketing'] },
  });
  t = await startTestServer(
    {},
    {
      oidc: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        groupsClaim: 'groups',
        roles: [
          { role: 'admin', groups: ['platform-admins'] },
          { role: 'operator', groups: ['sre', 'change-managers'] },
          { role: 'viewer', groups: ['auditors'] },
        ],
      },
    },
  );
  provider.allow(`${t.url}/login/oidc/callback`);
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

/** Signs `user` in through the provider (its login completed for them), landing on `next`. */
async function signIn(user: string, next = '/schedules') {
  provider.signInAs = user;
  const b = browser();
  const visited = await b.visit(`${t.url}/login/oidc?next=${encodeURIComponent(next)}`);
  return { ...b, visited };
}

describe('single sign-on', () => {
  it('offers "Sign in with" the provider beside the token login', async () => {
    const page = await browser().visit(`${t.url}/login?next=/runs`);
    expect(page.status).toBe(200);
    const host = new URL(provider.issuer).host;
    expect(page.body).toContain(`href="/login/oidc?next=%2Fruns">Sign in with ${host}</a>`);
    expect(page.body).toContain('name="token"');
  });

  it('signs alice in as an operator (group sre), with the name and role of her ID token, back where she was going', async () => {
    const { visited, jar } = await signIn('alice');
    expect(visited.status).toBe(200);
    expect(visited.url).toBe(`${t.url}/schedules`);
    // Through the provider: its authorization endpoint and the callback, with a code and the state.
    expect(visited.path.some((url) => url.startsWith(`${provider.issuer}/auth?`))).toBe(true);
    const callback = visited.path.find((url) => url.startsWith(`${t.url}/login/oidc/callback?`));
    expect(new URL(callback ?? 'http://x').searchParams.get('code')).toBeTruthy();
    const authorize = new URL(visited.path.find((url) => url.startsWith(`${provider.issuer}/auth?`)) ?? '');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(visited.body).toContain('alice · operator');
    expect(jar.has('fleetbook_session')).toBe(true);
    const line = t
      .logText()
      .split('\n')
      .filter((text) => text.includes('"audit.login"'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.by === 'alice');
    expect(line).toMatchObject({ role: 'operator', via: 'oidc' });
  });

  it('maps groups to the highest role given to any of them, re-read at each login', async () => {
    expect((await signIn('bob')).visited.body).toContain('bob · admin');
    expect((await signIn('carol')).visited.body).toContain('carol · viewer');
    provider.users.set('carol', { groups: ['change-managers'] });
    expect((await signIn('carol')).visited.body).toContain('carol · operator');
  });

  it('refuses a user none of whose groups is given a role, saying so; no session', async () => {
    const { visited, jar } = await signIn('dave');
    expect(visited.status).toBe(403);
    expect(visited.body).toContain(
      'dave is signed in at the provider with the groups marketing, none of which is given a Fleetbook role',
    );
    expect(jar.has('fleetbook_session')).toBe(false);
  });

  it('logs out: the session ends, and its pages go back to the login', async () => {
    const { visit, visited } = await signIn('alice', '/runs');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(visited.body)?.[1] ?? '';
    const out = await visit(`${t.url}/logout`, { _csrf: csrf });
    expect(out.url).toBe(`${t.url}/login`);
    const after = await visit(`${t.url}/runs`);
    expect(after.url).toBe(`${t.url}/login?next=%2Fruns`);
  });

  it('refuses a callback it did not start (no state of its own)', async () => {
    const visited = await browser().visit(`${t.url}/login/oidc/callback?code=abc&state=xyz`);
    expect(visited.status).toBe(400);
    expect(visited.body).toContain('This sign-in was not started here');
  });
});

describe('an ID token the server must not take', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const cases: Array<[string, NonNullable<TestProvider['tamper']>, RegExp]> = [
    [
      'another issuer',
      { claims: (claims) => ({ ...claims, iss: 'https://idp.evil.example' }) },
      /&quot;iss&quot; \(issuer\)/,
    ],
    ['another audience', { claims: (claims) => ({ ...claims, aud: 'someone-else' }) }, /&quot;aud&quot; \(audience\)/],
    ['another nonce', { claims: (claims) => ({ ...claims, nonce: 'replayed' }) }, /&quot;nonce&quot; claim value/],
    [
      'an expired one',
      { claims: (claims) => ({ ...claims, iat: now() - 7200, exp: now() - 3600 }) },
      /expiration is past/,
    ],
    ['one signed by a key the provider does not publish', { foreignKey: true }, /JWT signature verification failed/],
  ];
  for (const [what, tamper, reason] of cases)
    it(`refuses ${what}, with a message and no session`, async () => {
      provider.tamper = tamper;
      try {
        const { visited, jar } = await signIn('alice');
        expect(visited.status).toBe(401);
        expect(visited.body).toContain('The identity provider’s answer was refused:');
        expect(visited.body).toMatch(reason);
        expect(jar.has('fleetbook_session')).toBe(false);
      } finally {
        provider.tamper = undefined;
      }
    });
});

describe('server.oidc in fleetbook.yaml', () => {
  it('refuses a mistake at the start: located, exit 2, no stack trace, nothing listening', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-oidc-'));
    mkdirSync(join(dir, 'playbooks'));
    writeFileSync(
      join(dir, 'fleetbook.yaml'),
      'server:\n  oidc:\n    issuer: http://idp.example.com\n    clientId: fleetbook\n' +
        '    clientSecretEnv: FLEETBOOK_OIDC_SECRET\n    roles: { operator: [sre] }\n',
    );
    const cwd = process.cwd();
    process.chdir(dir);
    const cli = await runCli(['server', '--playbooks', join(dir, 'playbooks'), '--port', '0'], {
      env: { FLEETBOOK_HOME: join(dir, 'home'), FLEETBOOK_OIDC_SECRET: 'x' },
    }).finally(() => process.chdir(cwd));
    try {
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(
        `${join(dir, 'fleetbook.yaml')}:3:13: server.oidc.issuer must be an https URL (http only on 127.0.0.1 or localhost)`,
      );
      expect(cli.stderr).not.toMatch(/\n\s+at /);
      expect(cli.stdout).not.toContain('listening');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
