/**
 * A playbook input's name is playbook text like any other: on the start form it is the field's
 * label, id and name and the target of its `aria-describedby`, and in each place it stays a
 * value. An input named to close the attribute and add an `onfocus` handler must not add one
 * (the CSP would only stop it running; the page must not carry it at all).
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

describe('an input name holding markup, on the start form', () => {
  it('adds no attribute to the page and shows the name as text', async () => {
    const answer = await page.goto(`${t.url}/playbooks/odd-inputs`);
    expect(answer?.status()).toBe(200);
    expect(await page.locator('[onfocus]').count()).toBe(0);
    expect(await page.locator('[autofocus]').count()).toBe(0);
    const field = page.locator('form.start .field').first();
    expect(await field.locator('label').textContent()).toBe(NAME);
    // The field keeps the whole name, and its help is still the one it points at.
    const input = page.getByLabel(NAME);
    expect(await input.getAttribute('name')).toBe(`input.${NAME}`);
    expect(await input.getAttribute('aria-describedby')).toBe(`input-${NAME}-help`);
    expect(await field.locator('p.help').getAttribute('id')).toBe(`input-${NAME}-help`);
  });
});
