/**
 * The web UI in a real Chromium: log in with a token, start a playbook from its form on the
 * simulator, watch the live timeline grow and the run end, find a `<script>` in a description
 * and in an input value shown as text (no script runs: no dialog opens), and check the
 * security headers, the CSRF checks of a forged form and of a forged login, and trigger a
 * schedule now from the schedules page. Screenshots go to
 * FLEETBOOK_SCREENSHOTS when it is set (to look at the pages while changing them).
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const XSS = '<script>alert(1)</script>';
const DEMO = `name: canary-demo
description: "Updates the canary systems first ${XSS}"
inputs:
  systems: { type: integer, default: 12, minimum: 1, description: systems to update }
  note: { type: string, default: routine, description: shown in the log }
  mode: { type: string, enum: [rolling, all-at-once], default: rolling }
schedules:
  - id: canary-nightly
    cron: "30 2 * * *"
    timezone: Europe/Berlin
steps:
  - id: catalogs
    call: privateCloud.listSoftwareCatalogs
  - id: systems
    forEach: "\${{ [1..inputs.systems] }}"
    as: n
    concurrency: 3
    steps:
      - id: update
        sleep: 150ms
      - id: check
        log: "system \${{ n }} ok"
  - id: gate
    approval:
      message: "Canaries look healthy: go on with the report?"
  - id: report
    log: "note: \${{ inputs.note }}"
`;

let t: TestServer;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];
const shots = process.env.FLEETBOOK_SCREENSHOTS;

async function shot(name: string): Promise<void> {
  if (shots) await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

beforeAll(async () => {
  t = await startTestServer({ 'canary-demo.yaml': DEMO });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('web UI in Chromium', () => {
  it('sends a login page with a strict Content-Security-Policy, and refuses a wrong token', async () => {
    const answer = await page.goto(`${t.url}/runs`);
    expect(page.url()).toContain('/login');
    const headers = answer?.headers() ?? {};
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    await page.getByLabel('Token').fill('fbk_000000000000_wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not valid');
  });

  it('refuses a login POST without the login form’s CSRF pair (403), and shows the form again', async () => {
    // The form set its nonce as an HttpOnly, SameSite=Strict cookie scoped to /login.
    expect(await page.context().cookies()).toEqual([
      expect.objectContaining({ name: 'fleetbook_login', httpOnly: true, sameSite: 'Strict', path: '/login' }),
    ]);
    // A post made elsewhere carries the token but not the form's signed field.
    const forged = await page.request.post(`${t.url}/login`, {
      form: { token: t.tokens.admin, next: '/runs' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('its CSRF check failed');
    expect((await page.context().cookies()).some((cookie) => cookie.name === 'fleetbook_session')).toBe(false);
    await page.goto(`${t.url}/login`);
  });

  it('logs in with an operator token into an HttpOnly, SameSite=Strict session cookie', async () => {
    await page.getByLabel('Token').fill(t.tokens.operator);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/runs$/);
    const cookies = await page.context().cookies();
    expect(cookies).toEqual([
      expect.objectContaining({ name: 'fleetbook_session', httpOnly: true, sameSite: 'Strict' }),
    ]);
    expect(cookies[0]?.value).not.toContain(t.tokens.operator);
    expect(await page.getByText('on-call operator · operator').count()).toBe(1);
    await shot('runs-empty');
  });

  it('shows a playbook description holding <script> as text', async () => {
    await page.goto(`${t.url}/playbooks`);
    await expect.poll(() => page.locator('.card p').first().textContent()).toContain(XSS);
    await page.getByRole('link', { name: 'canary-demo' }).click();
    expect(await page.locator('.description').textContent()).toBe(`Updates the canary systems first ${XSS}`);
    // The schedule's next fires, from the form's page.
    expect(await page.locator('.schedules time').count()).toBe(3);
    await shot('playbook');
  });

  it('starts a run from the generated form and follows it live to its end on the timeline', async () => {
    await page.getByLabel('systems', { exact: false }).first().fill('9');
    await page.getByLabel('note').fill(XSS);
    await page.getByLabel('mode').selectOption('all-at-once');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').at(-1) ?? '';
    const bars = () => page.locator('#timeline g.row').count();
    // The timeline grows while the loop's items start (redrawn from the event stream), without a
    // reload, to every item's bars and the gate's (on a busy machine the page may open late in it).
    await expect.poll(bars, { timeout: 20_000 }).toBeGreaterThanOrEqual(1 + 1 + 9 + 18 + 1);
    await shot('run-live');
    // The run stops at the gate: the page shows it with Approve / Deny once it waits.
    await expect.poll(() => page.locator('#run-status .badge').textContent(), { timeout: 30_000 }).toContain('waiting');
    await page.reload();
    expect(await page.locator('.approval').textContent()).toContain('Canaries look healthy');
    await shot('run-waiting');
    await page.getByLabel('Comment (optional)').fill('canaries fine');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    await expect
      .poll(() => page.locator('#run-status .badge').textContent(), { timeout: 30_000 })
      .toContain('succeeded');
    await page.reload();
    // One bar per step and per loop item: catalogs, systems, its 9 items (and their steps: 9 × 2), gate, its wait, report.
    await expect.poll(bars).toBe(1 + 1 + 9 + 18 + 1 + 1 + 1);
    await expect
      .poll(() => page.locator('#log').textContent())
      .toContain('approved by on-call operator: canaries fine');
    // Status in words beside each bar, not colour alone.
    expect(await page.locator('#timeline g.row text.state').first().textContent()).toContain('succeeded');
    await expect.poll(() => page.locator('#log').textContent()).toContain(`note: ${XSS}`);
    expect(await page.locator('.inputs pre').first().textContent()).toContain(XSS);
    expect((await t.store.getRun(runId))?.inputs).toMatchObject({ systems: 9, note: XSS, mode: 'all-at-once' });
    await shot('run-done');
  });

  it('ran no script from any value (no dialog opened)', () => {
    expect(dialogs).toEqual([]);
  });

  it('lists the run with its status in words, and filters by status', async () => {
    await page.goto(`${t.url}/runs?status=succeeded`);
    expect(await page.locator('table.runs tbody tr').count()).toBe(1);
    expect(await page.locator('table.runs .badge').first().textContent()).toContain('succeeded');
    await page.goto(`${t.url}/runs?status=failed`);
    expect(await page.locator('table.runs tbody tr').count()).toBe(0);
    await shot('runs');
  });

  it('refuses a state-changing form without the session’s CSRF token', async () => {
    const answer = await page.request.post(`${t.url}/playbooks/canary-demo/run`, {
      form: { 'input.systems': '1' },
      maxRedirects: 0,
    });
    expect(answer.status()).toBe(403);
    expect(await answer.text()).toContain('CSRF');
  });

  it('triggers a schedule now from the schedules page (keyboard), and its run appears', async () => {
    await page.goto(`${t.url}/schedules`);
    const button = page.getByRole('button', { name: 'Trigger canary-nightly now' });
    await button.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').at(-1) ?? '';
    expect(await page.locator('main').textContent()).toContain(
      'triggered by hand (canary-nightly) by on-call operator',
    );
    expect((await t.store.getRun(runId))?.trigger).toEqual({
      kind: 'trigger',
      scheduleId: 'canary-nightly',
      by: 'on-call operator',
    });
    await page.goto(`${t.url}/runs`);
    expect(await page.locator('table.runs tbody tr').first().textContent()).toContain('triggered by hand');
    await shot('schedules-triggered');
  });

  it('lets only an admin pause a schedule, from the schedules page', async () => {
    await page.goto(`${t.url}/schedules`);
    expect(await page.getByRole('button', { name: /Pause/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Token').fill(t.tokens.admin);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.goto(`${t.url}/schedules`);
    await page.getByRole('button', { name: 'Pause canary-nightly' }).press('Enter');
    await page.waitForURL(/\/schedules$/);
    expect(await page.locator('table.schedules').textContent()).toContain('paused by ops lead');
    await shot('schedules');
    await page.getByRole('button', { name: 'Resume canary-nightly' }).click();
    await expect.poll(() => page.locator('table.schedules').textContent()).toContain('active');
  });
});
