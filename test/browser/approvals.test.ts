/**
 * The approvals inbox in Chromium: the navigation counts the gates waiting for the user's
 * decision, `/approvals` lists them (run, playbook, gate, message, since, deadline, who started
 * the run), and a row leads to the run's page, where the gate is decided; once decided, the
 * count is gone. Screenshots go to FLEETBOOK_SCREENSHOTS when it is set.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const GATED = `name: gated
steps:
  - id: gate
    approval:
      message: "Roll out to the <b>fleet</b>?"
      timeout: 2h
  - log: done
`;

let t: TestServer;
let browser: Browser;
let page: Page;
const shots = process.env.FLEETBOOK_SCREENSHOTS;

beforeAll(async () => {
  t = await startTestServer({ 'gated.yaml': GATED });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the approvals inbox in Chromium', () => {
  it('counts the waiting gates in the navigation, lists them, and leads to the gate', async () => {
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'gated' } });
    const runId = (started.body as { run: { id: string } }).run.id;
    while ((await t.store.getRun(runId))?.status !== 'waiting') await t.logged(runId);

    await page.goto(`${t.url}/login`);
    await page.getByLabel('Token').fill(t.tokens.operator);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/runs$/);
    const nav = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Approvals/ });
    expect((await nav.textContent())?.replace(/\s+/g, ' ').trim()).toBe('Approvals 1');
    await nav.click();
    await page.waitForURL(/\/approvals$/);
    const row = page.locator('table.approvals tbody tr');
    expect(await row.count()).toBe(1);
    const cells = await row.locator('td').allTextContents();
    expect(cells.map((cell) => cell.replace(/\s+/g, ' ').trim())).toEqual([
      runId.slice(0, 8),
      'gated',
      'gate',
      'Roll out to the <b>fleet</b>?',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/),
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(then fail\)$/),
      'on-call operator',
    ]);
    if (shots) await page.screenshot({ path: join(shots, 'approvals-inbox.png') });
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`/runs/${runId}#approval-title$`));
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(new RegExp(`/runs/${runId}$`));
    await page.goto(`${t.url}/approvals`);
    expect(await page.getByText('No gate waits for your decision.').count()).toBe(1);
    expect((await nav.textContent())?.trim()).toBe('Approvals');
  });
});
