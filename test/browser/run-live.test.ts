/**
 * The run page kept open is a view of the journal, as a reload is: at each point of a run
 * (started, waiting at its gate, approved, looping, ended; and a run cancelled at its gate, and
 * one that failed) the live page's visible text becomes the text of the same page loaded
 * afresh. The run reaches each point by events: its `http` steps call a hook of the test that
 * holds each request until the test lets it go, and the gate is decided through the API.
 * Screenshots go to FLEETBOOK_SCREENSHOTS when it is set.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/harness.js';
import { launchChromium } from './chromium.js';

const FLOW = `name: live-flow
inputs:
  hook: { type: string }
steps:
  - id: prepare
    http: { url: "\${{ inputs.hook }}/prepare", method: POST }
  - id: gate
    approval:
      message: "Prepared: go on with the systems?"
  - id: after
    http: { url: "\${{ inputs.hook }}/after", method: POST }
  - id: systems
    forEach: "\${{ [1..3] }}"
    as: n
    steps:
      - id: update
        http: { url: "\${{ inputs.hook }}/item/\${{ n }}", method: POST }
  - id: report
    log: "all systems done"
`;
const FAILING = `name: live-failing
inputs:
  hook: { type: string }
steps:
  - id: prepare
    http: { url: "\${{ inputs.hook }}/prepare", method: POST }
  - id: check
    fail: the canary did not come back
`;

/** A hook that holds every request until the test lets it go, and says when one arrives. */
interface Hook {
  url: string;
  arrived(path: string): Promise<void>;
  release(path: string): void;
  close(): Promise<void>;
}

async function startHook(): Promise<Hook> {
  const held = new Map<string, ServerResponse>();
  const waiters = new Map<string, () => void>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    const path = request.url ?? '/';
    held.set(path, response);
    waiters.get(path)?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: (path) =>
      held.has(path) ? Promise.resolve() : new Promise((resolve) => waiters.set(path, () => resolve())),
    release(path) {
      held.get(path)?.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      held.delete(path);
    },
    close: () =>
      new Promise((resolve) => {
        for (const response of held.values()) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let t: TestServer;
let hook: Hook;
let browser: Browser;
let live: Page;
let fresh: Page;
const shots = process.env.FLEETBOOK_SCREENSHOTS;

/** What a reader sees of the run: the section's text and each timeline row's words, durations as `#`. */
async function visible(page: Page): Promise<string> {
  const text = await page.locator('section.run').innerText();
  const rows = await page
    .locator('#timeline g.row')
    .evaluateAll((groups) =>
      groups.map(
        (group) =>
          `${group.querySelector('text.label')?.textContent} | ${group.querySelector('text.state')?.textContent}`,
      ),
    );
  // Times that grow with the clock (a running step, an open wait, the axis) differ by when each page asked.
  return [text, ...rows].join('\n').replace(/\d+(\.\d+)?\s?(ms|s|min|h)\b/g, '#');
}

/** The live page's text comes to be the text of the page loaded now (and `point` is in it). */
async function sameAsReload(runId: string, point: string, expected: string): Promise<string> {
  await fresh.goto(`${t.url}/runs/${runId}`);
  const reloaded = await visible(fresh);
  expect(reloaded).toContain(expected);
  await expect.poll(() => visible(live), { timeout: 20_000 }).toBe(reloaded);
  if (shots) await live.screenshot({ path: join(shots, `live-${point}.png`), fullPage: true });
  return reloaded;
}

/** Resolves once the API says the run is `status`: a point a reload must not come before. */
async function untilStatus(runId: string, status: string): Promise<void> {
  const statusOf = async () =>
    ((await t.api('GET', `/api/v1/runs/${runId}`, { token: t.tokens.viewer })).body as { run: { status: string } }).run
      .status;
  await expect.poll(statusOf, { timeout: 20_000 }).toBe(status);
}

async function startRun(playbook: string): Promise<string> {
  const started = await t.api('POST', '/api/v1/runs', {
    token: t.tokens.operator,
    body: { playbook, inputs: { hook: hook.url } },
  });
  expect(started.status).toBe(202);
  return (started.body as { run: { id: string } }).run.id;
}

beforeAll(async () => {
  hook = await startHook();
  t = await startTestServer({ 'live-flow.yaml': FLOW, 'live-failing.yaml': FAILING });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  live = await context.newPage();
  fresh = await context.newPage();
  await live.goto(`${t.url}/login`);
  await live.getByLabel('Token').fill(t.tokens.operator);
  await live.getByRole('button', { name: 'Log in' }).click();
  await live.waitForURL(/\/runs$/);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await hook?.close();
});

describe('the live run page says what a reload says', () => {
  it('started, waiting at the gate, approved, looping, ended', async () => {
    const runId = await startRun('live-flow');
    await hook.arrived('/prepare');
    await live.goto(`${t.url}/runs/${runId}`);
    await sameAsReload(runId, 'started', 'running');

    hook.release('/prepare');
    const waiting = await sameAsReload(runId, 'waiting', 'Prepared: go on with the systems?');
    // Drawn waiting, not interrupted, and the wait is a span of its own on the timeline.
    expect(waiting).toContain('approval wait | waiting for approval, #');
    expect(await live.locator('#steps').innerText()).not.toContain('interrupted');
    expect(await live.locator('#steps').innerText()).toContain('waiting gate');
    expect(await live.getByRole('button', { name: 'Approve' }).count()).toBe(1);

    const approved = await t.api('POST', `/api/v1/runs/${runId}/approve`, {
      token: t.tokens.admin,
      body: { comment: 'prepared fine' },
    });
    expect(approved.status).toBe(202);
    await hook.arrived('/after');
    const after = await sameAsReload(runId, 'approved', 'approved by ops lead');
    expect(after).toContain('waited for approval, #: approved by ops lead');
    expect(await live.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    hook.release('/after');
    await hook.arrived('/item/1');
    await sameAsReload(runId, 'looping', '[0]');
    hook.release('/item/1');
    await hook.arrived('/item/2');
    await sameAsReload(runId, 'looping-2', '[1]');
    hook.release('/item/2');
    await hook.arrived('/item/3');
    hook.release('/item/3');
    // The point is the run's end: reloaded before it, the reload would show a run the live page has seen end.
    await untilStatus(runId, 'succeeded');

    const ended = await sameAsReload(runId, 'ended', 'succeeded');
    expect(ended).toContain('all systems done');
    expect(ended).not.toContain('still going');
    expect(await live.getByRole('button', { name: 'Cancel the run' }).count()).toBe(0);
    expect(await live.locator('#run-status').innerText()).toContain('succeeded');
  });

  it('a run cancelled at its gate', async () => {
    const runId = await startRun('live-flow');
    await hook.arrived('/prepare');
    await live.goto(`${t.url}/runs/${runId}`);
    hook.release('/prepare');
    await sameAsReload(runId, 'cancel-waiting', 'Prepared: go on with the systems?');
    const cancelled = await t.api('POST', `/api/v1/runs/${runId}/cancel`, { token: t.tokens.operator });
    expect(cancelled.status).toBe(202);
    await sameAsReload(runId, 'cancelled', 'cancelled by on-call operator');
    expect(await live.locator('.approval').count()).toBe(0);
    expect(await live.locator('#steps').innerText()).toContain('cancelled gate');
    expect(await live.getByRole('button', { name: 'Cancel the run' }).count()).toBe(0);
    expect(await live.getByRole('button', { name: 'Approve' }).count()).toBe(0);
  });

  it('a run that failed', async () => {
    const runId = await startRun('live-failing');
    await hook.arrived('/prepare');
    await live.goto(`${t.url}/runs/${runId}`);
    await sameAsReload(runId, 'failing', 'running');
    hook.release('/prepare');
    await untilStatus(runId, 'failed');
    const text = await sameAsReload(runId, 'failed', 'the canary did not come back');
    expect(await live.locator('#run-status').innerText()).toContain('failed');
    expect(text).not.toContain('still going');
  });
});
