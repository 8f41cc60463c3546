/**
 * A gate's form in the approval panel, in Chromium: its declared inputs are fields (a number
 * with its default, an enum as a select, a boolean, a required text), the server checks what
 * the approver sent as the API does (nothing recorded when it is refused), and a field left as
 * it is takes the gate's default.
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
      message: "Canary fine: go on?"
      inputs:
        batchSize: { type: integer, minimum: 1, default: 5, description: systems per batch }
        mode: { type: string, enum: [rolling, all-at-once], default: rolling }
        drain: { type: boolean, default: false }
        ticket: { type: string, description: the change ticket }
  - id: report
    log: "batches of \${{ steps.gate.outputs.inputs.batchSize }}, \${{ steps.gate.outputs.inputs.mode }}, ticket \${{ steps.gate.outputs.inputs.ticket }}"
  - id: table
    log: "system   before\\nsys-1    2.1"
outputs:
  systems: '\${{ [{"system": "sys-1", "before": "2.1", "after": "2.2"}, {"system": "sys-2", "before": "2.1", "after": "2.1"}] }}'
  batchSize: \${{ steps.gate.outputs.inputs.batchSize }}
`;

let t: TestServer;
let browser: Browser;
let page: Page;
const shots = process.env.FLEETBOOK_SCREENSHOTS;

beforeAll(async () => {
  t = await startTestServer({ 'gated.yaml': GATED });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${t.url}/login`);
  await page.getByLabel('Token').fill(t.tokens.operator);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(/\/runs$/);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const decisions = async (runId: string) =>
  (await t.store.journal(runId)).map((entry) => entry.event).filter((event) => event.type === 'approval.decided');

describe("the gate's form in the approval panel", () => {
  it('shows the declared fields, refuses what the API refuses, and takes defaults only for fields left as they are', async () => {
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'gated' } });
    const runId = (started.body as { run: { id: string } }).run.id;
    await page.goto(`${t.url}/runs/${runId}`);
    await expect.poll(() => page.locator('.approval').count(), { timeout: 20_000 }).toBe(1);
    const form = page.locator('.approval form.gate-form');
    expect(await form.getByLabel('batchSize').getAttribute('type')).toBe('number');
    expect(await form.getByLabel('batchSize').inputValue()).toBe('5');
    expect(await form.locator('select[name="input.mode"] option').allTextContents()).toEqual([
      '(default)',
      'rolling',
      'all-at-once',
    ]);
    expect(await form.getByLabel('mode').inputValue()).toBe('rolling');
    expect(await form.getByLabel('drain').inputValue()).toBe('false');
    expect(await form.locator('label[for="input-ticket"]').textContent()).toContain('(required)');
    if (shots) await page.screenshot({ path: join(shots, 'gate-form.png'), fullPage: true });

    // The required ticket left empty: refused, nothing recorded, the run still waits.
    await page.getByRole('button', { name: 'Approve' }).click();
    expect(await page.locator('h1').textContent()).toBe('Not recorded');
    expect(await page.locator('.error').textContent()).toContain('ticket');
    expect(await decisions(runId)).toEqual([]);

    // Below the minimum: refused as the API refuses it.
    await page.goto(`${t.url}/runs/${runId}`);
    await form.getByLabel('batchSize').fill('0');
    await form.getByLabel('ticket').fill('CHG-7');
    await page.getByRole('button', { name: 'Approve' }).click();
    expect(await page.locator('h1').textContent()).toBe('Not recorded');
    expect(await page.locator('.error').textContent()).toContain('batchSize');
    expect(await decisions(runId)).toEqual([]);

    await page.goto(`${t.url}/runs/${runId}`);
    await form.getByLabel('batchSize').fill('3');
    await form.getByLabel('ticket').fill('CHG-7');
    await page.getByLabel('Comment (optional)').fill('canary fine');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${t.url}/runs/${runId}`);
    await expect.poll(() => page.locator('#run-status').textContent(), { timeout: 20_000 }).toContain('succeeded');
    // Only what the approver changed was sent; mode and drain took the gate's defaults.
    expect(await decisions(runId)).toEqual([
      expect.objectContaining({
        decision: 'approved',
        inputs: { batchSize: 3, ticket: 'CHG-7', mode: 'rolling', drain: false },
      }),
    ]);
    await expect.poll(() => page.locator('#log').textContent()).toContain('batches of 3, rolling, ticket CHG-7');
  });

  it('shows the result readably: who approved and why in the header, outputs as a table and a tree, the log as written', async () => {
    await page.reload();
    expect(await page.locator('#run-summary').innerText()).toMatch(/gate approved by on-call operator: canary fine/);
    const outputs = page.locator('#run-values details[data-key="outputs"]');
    expect(await outputs.locator('table.value-table th').allTextContents()).toEqual(['system', 'before', 'after']);
    expect(await outputs.locator('table.value-table tbody tr').first().locator('td').allTextContents()).toEqual([
      'sys-1',
      '2.1',
      '2.2',
    ]);
    expect(await outputs.locator('dl.kv > dt').allTextContents()).toEqual(['systems', 'batchSize']);
    // The JSON is one toggle away.
    expect(await outputs.locator('details.json pre').isVisible()).toBe(false);
    await outputs.locator('details.json > summary').click();
    expect(JSON.parse((await outputs.locator('details.json pre').textContent()) ?? '')).toMatchObject({ batchSize: 3 });
    // A message's own spaces and line breaks, and no others.
    expect(await page.locator('#log li.log .message').last().innerText()).toBe('system   before\nsys-1    2.1');
    expect(await page.locator('#log li.log').last().innerText()).toMatch(
      /^\d\d:\d\d:\d\d table system {3}before\nsys-1 {4}2\.1$/,
    );
    if (shots) await page.screenshot({ path: join(shots, 'run-results.png'), fullPage: true });
  });
});
