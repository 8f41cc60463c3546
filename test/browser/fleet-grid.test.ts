/**
 * A fleet at a glance: a loop of 1,203 systems, every seventh failing its check, seen in
 * Chromium on the loop's grid: one cell per system with its name and status, counts per status
 * that filter the grid, pages of 500, and the run page's link to it.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const COUNT = 1203;
const FAILING = Math.floor(COUNT / 7);
const PLAYBOOK = `name: fleet-grid
inputs:
  count: { type: integer, default: ${COUNT} }
steps:
  - id: systems
    forEach: "\${{ [1..inputs.count].{ 'name': 'sys-' & $pad($string($), -4, '0') } }}"
    as: system
    concurrency: 50
    tolerate: { failures: "100%" }
    steps:
      - id: check
        assert: "\${{ $number($substring(system.name, 4)) % 7 != 0 }}"
        message: "\${{ system.name }} is unwell"
`;

let t: TestServer;
let browser: Browser;
let page: Page;
let runId: string;

beforeAll(async () => {
  t = await startTestServer({ 'fleet-grid.yaml': PLAYBOOK });
  const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'fleet-grid' } });
  runId = (started.body as { run: { id: string } }).run.id;
  for (;;) {
    const { body } = await t.api('GET', `/api/v1/runs/${runId}`, { token: t.tokens.viewer });
    const status = (body as { run: { status: string } }).run.status;
    if (status !== 'running' && status !== 'queued') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${t.url}/login`);
  await page.getByLabel('Token').fill(t.tokens.viewer);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/runs$/);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const cells = () => page.locator('ol.grid > li');
const shots = process.env.FLEETBOOK_SCREENSHOTS;

describe('the fleet grid of a loop', () => {
  it('is linked from the run page with the loop and its item count', async () => {
    await page.goto(`${t.url}/runs/${runId}`);
    await page.getByRole('link', { name: `systems (${COUNT})` }).click();
    await page.waitForURL(/\/items\?loop=systems$/);
    expect(await page.locator('h1').textContent()).toContain('systems');
  });

  it('shows a page of 500 cells, each with its system name and status, and the counts per status', async () => {
    await page.goto(`${t.url}/runs/${runId}/items?loop=systems`);
    expect(await cells().count()).toBe(500);
    expect(await cells().first().textContent()).toContain('sys-0001');
    expect(await cells().nth(6).getAttribute('class')).toContain('status-failed');
    expect(await cells().nth(6).textContent()).toMatch(/sys-0007\s+failed/);
    expect(await cells().nth(5).getAttribute('class')).toContain('status-succeeded');
    const filters = page.getByRole('navigation', { name: 'Filter items by status' });
    expect(await filters.textContent()).toMatch(
      new RegExp(`all ${COUNT}[\\s\\S]*succeeded ${COUNT - FAILING}[\\s\\S]*failed ${FAILING}`),
    );
    expect(await page.locator('.grid-range').textContent()).toContain(`Items 1–500 of ${COUNT}`);
    if (shots) await page.screenshot({ path: join(shots, 'fleet-grid.png') });
  });

  it('pages to the last items', async () => {
    await page.goto(`${t.url}/runs/${runId}/items?loop=systems`);
    await page.getByRole('link', { name: 'Next' }).click();
    await page.getByRole('link', { name: 'Next' }).click();
    expect(await cells().count()).toBe(COUNT - 1000);
    expect(await cells().last().textContent()).toContain(`sys-${COUNT}`);
    expect(await page.getByRole('link', { name: 'Next' }).count()).toBe(0);
  });

  it('filters by status: only the failed systems, every seventh', async () => {
    await page.goto(`${t.url}/runs/${runId}/items?loop=systems`);
    await page.getByRole('link', { name: new RegExp(`failed ${FAILING}`) }).click();
    expect(await cells().count()).toBe(FAILING);
    const names = await cells().locator('.cell-label').allTextContents();
    expect(names.slice(0, 3)).toEqual(['sys-0007', 'sys-0014', 'sys-0021']);
    expect(await page.locator('ol.grid > li.status-succeeded').count()).toBe(0);
  });

  it('answers a run without loops, and an unknown run, as a person would expect', async () => {
    expect((await page.goto(`${t.url}/runs/no-such-run/items`))?.status()).toBe(404);
    await page.goto(`${t.url}/runs/${runId}/items?loop=nothing&status=bogus&page=99`);
    // An unknown loop falls back to the run's loop, an unknown status to all, a page past the end to the last.
    expect(await page.locator('.grid-range').textContent()).toContain(`Items 1001–${COUNT} of ${COUNT}`);
  });
});
