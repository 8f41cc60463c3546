/**
 * Single sign-on in a real Chromium against a real OpenID provider (oidc-provider, its own key
 * and users): the login page's "Sign in with", the provider's own login form, back on the page
 * asked for as the user the ID token names with the role of their groups; logout ends the
 * session; a user in no group with a role is told so. Screenshots go to FLEETBOOK_SCREENSHOTS
 * when it is set.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { startTestProvider, type TestProvider } from '../support/oidc-test-provider.js';
import { launchChromium } from './chromium.js';

let provider: TestProvider;
let t: TestServer;
let browser: Browser;
const shots = process.env.FLEETBOOK_SCREENSHOTS;

beforeAll(async () => {
  provider = await startTestProvider({ alice: { groups: ['sre'] }, dave: { groups: ['marketing'] } });
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
          { role: 'operator', groups: ['sre'] },
        ],
      },
    },
  );
  provider.allow(`${t.url}/login/oidc/callback`);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await provider?.close();
});

/** From Fleetbook's login page through the provider's form as `user`. */
async function signIn(page: Page, user: string): Promise<void> {
  await page.goto(`${t.url}/schedules`);
  await page.waitForURL(`${t.url}/login?next=%2Fschedules`);
  await page.getByRole('link', { name: `Sign in with ${new URL(provider.issuer).host}` }).click();
  await page.waitForURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.getByLabel('User name').fill(user);
  await page.getByRole('button', { name: 'Sign in at the provider' }).click();
}

describe('single sign-on in Chromium', () => {
  it('signs alice in through the provider’s form, as an operator, back on the page she asked for; logout ends it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, 'alice');
    await page.waitForURL(`${t.url}/schedules`);
    expect(await page.locator('.who').textContent()).toBe('alice · operator');
    if (shots) await page.screenshot({ path: join(shots, 'oidc-signed-in.png') });
    await page.getByRole('button', { name: /log out/i }).click();
    await page.waitForURL(`${t.url}/login`);
    await page.goto(`${t.url}/runs`);
    await page.waitForURL(`${t.url}/login?next=%2Fruns`);
    await context.close();
  });

  it('tells a user in no group with a role that they are refused', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, 'dave');
    await page.waitForURL(new RegExp(`^${t.url}/login/oidc/callback`));
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'dave is signed in at the provider with the groups marketing, none of which is given a Fleetbook role',
    );
    expect((await context.cookies()).some((cookie) => cookie.name === 'fleetbook_session')).toBe(false);
    await context.close();
  });
});
