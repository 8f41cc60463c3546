/**
 * A playbook input's name is playbook text like any other. Names are identifiers (the playbook
 * schema says so): one written to close an attribute and add an `onfocus` handler is a located
 * problem on the playbooks page, the playbook is not offered, and no page carries the handler.
 * The start form's renderer keeps any name inside its attributes' quotes all the same
 * (src/server/ui/start-form.test.ts).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const NAME = 'x" autofocus onfocus="alert(1)';
const PLAYBOOK = `name: odd-inputs
description: an input whose name tries to break out of its attributes
inputs:
  '${NAME}': { type: string, default: plain, description: the odd one }
steps:
  - id: say
    log: "\${{ inputs }}"
`;

let t: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  t = await startTestServer({ 'odd-inputs.yaml': PLAYBOOK });
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

describe('an input name holding markup', () => {
  it('is a located problem of the playbook, shown as text, and adds no attribute to any page', async () => {
    const answer = await page.goto(`${t.url}/playbooks`);
    expect(answer?.status()).toBe(200);
    const problem = page.locator('.problems li');
    expect(await problem.count()).toBe(1);
    expect(await problem.textContent()).toContain('playbooks/odd-inputs.yaml:4');
    expect(await problem.textContent()).toContain(`INVALID_INPUT_NAME: input name '${NAME}' is not an identifier`);
    expect(await page.locator('.card').count()).toBe(0);
    expect(await page.locator('[onfocus]').count()).toBe(0);
    expect(await page.locator('[autofocus]').count()).toBe(0);
    expect((await page.goto(`${t.url}/playbooks/odd-inputs`))?.status()).toBe(404);
  });
});
