/**
 * The playbook page in Chromium: its YAML source as written, escaped (a `<script>` in a comment
 * is text, no dialog opens), a schedule's secret input redacted, and its steps as an outline:
 * ids and kinds, a loop's and a block's steps nested under them, a rescue marked.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const SECRET = 'sched-5ecret-playbook-page-77';
const OUTLINED = `# Rolls <script>alert(1)</script> out
name: outlined
inputs:
  token: { type: string, secret: true }
schedules:
  - id: nightly-outlined
    cron: "0 2 * * *"
    inputs: { token: ${SECRET} }
steps:
  - id: systems
    forEach: "\${{ [1, 2] }}"
    as: n
    steps:
      - id: prepare
        block:
          - id: check
            log: "checking \${{ n }}"
        rescue:
          - id: note
            log: noted
  - id: done
    log: done
`;

let t: TestServer;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];
const shots = process.env.FLEETBOOK_SCREENSHOTS;

beforeAll(async () => {
  t = await startTestServer({ 'outlined.yaml': OUTLINED });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the playbook page in Chromium', () => {
  it('shows the YAML source escaped with secrets redacted, and the steps as a nested outline', async () => {
    await page.goto(`${t.url}/login`);
    await page.getByLabel('Token').fill(t.tokens.viewer);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/runs$/);
    await page.goto(`${t.url}/playbooks/outlined`);
    const source = (await page.locator('pre.source').textContent()) ?? '';
    expect(source).toContain('# Rolls <script>alert(1)</script> out');
    expect(source).toContain('inputs: { token: [REDACTED] }');
    expect(source).not.toContain(SECRET);
    expect(dialogs).toEqual([]);
    const outline = async (selector: string) =>
      (await page
        .locator(selector)
        .evaluateAll((items) =>
          items.map(
            (item) =>
              `${item.querySelector(':scope > code')?.textContent} ${item.querySelector(':scope > .kind')?.textContent}`,
          ),
        )) as string[];
    expect(await outline('section > ol.outline > li')).toEqual(['systems forEach', 'done log']);
    expect(await outline('li[data-step="systems"] > ol.outline > li')).toEqual(['prepare block']);
    expect(await outline('li[data-step="prepare"] > ol.outline > li')).toEqual(['check log']);
    expect(await outline('li[data-step="prepare"] > .part > ol.outline > li')).toEqual(['note log']);
    expect(await page.locator('li[data-step="prepare"] > .part').first().textContent()).toMatch(/^\s*rescue/);
    expect(await page.content()).not.toContain(SECRET);
    if (shots) await page.screenshot({ path: join(shots, 'playbook-page.png'), fullPage: true });
  });
});
