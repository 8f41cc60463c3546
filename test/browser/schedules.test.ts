/**
 * The schedules page in Chromium: a schedule's windows and freezes, its next fires that will run
 * and the fires its window skips (marked, with why), each in the schedule's timezone with UTC
 * beside it, as `fleetbook schedules` computes them. Screenshots go to FLEETBOOK_SCREENSHOTS.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const WEEKEND = `name: weekend-report
window:
  timezone: Europe/Berlin
  weekly:
    - { days: [sat, sun], from: "01:00", to: "06:00" }
freeze:
  - { from: 2099-12-20, to: 2099-12-24, reason: year-end freeze }
schedules:
  - id: nightly-report
    cron: "0 3 * * *"
    timezone: Europe/Berlin
steps:
  - log: report
`;

let t: TestServer;
let browser: Browser;
let page: Page;
const shots = process.env.FLEETBOOK_SCREENSHOTS;

beforeAll(async () => {
  t = await startTestServer({ 'weekend.yaml': WEEKEND });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const text = (value: string | null) => (value ?? '').replace(/\s+/g, ' ').trim();

describe('the schedules page in Chromium', () => {
  it('shows windows and freezes, the fires that will run and the skipped ones with why, local time and UTC', async () => {
    await page.goto(`${t.url}/login`);
    await page.getByLabel('Token').fill(t.tokens.viewer);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/runs$/);
    await page.goto(`${t.url}/schedules`);
    const row = page.locator('tr[data-schedule="nightly-report"]');
    expect((await row.locator('td.limits li').allTextContents()).map(text)).toEqual([
      'window sat,sun 01:00-06:00 Europe/Berlin (onClose wait)',
      'freeze 2099-12-20..2099-12-24 Europe/Berlin (year-end freeze)',
    ]);
    const runs = (await row.locator('li.fire:not(.skipped)').allTextContents()).map(text);
    expect(runs).toHaveLength(3);
    for (const fire of runs) {
      expect(fire).toMatch(/^(\d{4}-\d\d-\d\d) 03:00:00 \+0([12]):00 \(\1 0\d:00:00Z\)$/);
      // Berlin's 03:00 is 02:00 UTC in winter (+01:00), 01:00 in summer (+02:00).
      const [, , offset] = /\+0(\d):00 \(\d{4}-\d\d-\d\d 0(\d)/.exec(fire) ?? [];
      expect(Number(offset)).toBeGreaterThan(0);
      const day = new Date(`${fire.slice(0, 10)}T12:00:00Z`).getUTCDay();
      expect([0, 6]).toContain(day);
    }
    const skipped = (await row.locator('li.fire.skipped').allTextContents()).map(text);
    expect(skipped.length).toBeGreaterThan(0);
    for (const fire of skipped) {
      expect(fire).toMatch(/ 03:00:00 \+0[12]:00 \(.*Z\) skipped: outside the maintenance window; it opens next at /);
      expect([1, 2, 3, 4, 5]).toContain(new Date(`${fire.slice(0, 10)}T12:00:00Z`).getUTCDay());
    }
    expect(await row.locator('li.fire.skipped s').count()).toBe(skipped.length);
    expect(text(await row.locator('td').nth(6).textContent())).toBe('never');
    if (shots) await page.screenshot({ path: join(shots, 'schedules.png') });
  });
});
