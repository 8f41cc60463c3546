/**
 * Door × policy: "run again" and "retry failed" through the server, the API (`api.rerun`) and
 * the run page (`ui.rerun`). A fleet run whose update failed on one system is retried: what
 * succeeded is not sent again, the new run is linked to the old one on both pages, a viewer is
 * refused, the secret input given again never shows, and a retry is cancelled like any run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/store/index.js';
import { pageSession, startTestServer, type TestServer } from '../server/harness.js';

const TOKEN = 'tok-doors-rerun-81d2';
const fleet = readFileSync(join(import.meta.dirname, '..', 'resume', 'fixtures', 'fleet-retry.yaml'), 'utf8');

// A server (and a world) each: a retry updates the systems, which leaves the next run none to update.
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer({ 'fleet-retry.yaml': fleet });
});
afterEach(async () => {
  await t.close();
});

/** The run once it has ended (the simulator runs at 6000×: seconds at most). */
async function ended(runId: string): Promise<RunRecord> {
  for (;;) {
    const run = await t.store.getRun(runId);
    if (run && !['running', 'queued'].includes(run.status)) return run;
    await t.logged(runId);
  }
}

async function failedRun(): Promise<RunRecord> {
  t.sim.control.faults.set({ asyncOperations: [{ type: 'software-update', outcome: 'FAILED', count: 1 }] });
  const started = await t.api('POST', '/api/v1/runs', {
    token: t.tokens.operator,
    body: { playbook: 'fleet-retry', inputs: { token: TOKEN } },
  });
  expect(started.status).toBe(202);
  const run = await ended((started.body as { run: { id: string } }).run.id);
  expect(run.status).toBe('failed');
  return run;
}

const updatePosts = () =>
  t.sim.control
    .requests({ operationId: 'privateCloud.runSoftwareUpdate' })
    .filter((entry) => entry.method === 'POST')
    .map((entry) => entry.path);

describe('rerun through the server', () => {
  it('api.rerun: retries what failed (nothing that succeeded sent again), linked, the secret never shown; a viewer is refused', async () => {
    const old = await failedRun();
    const viewer = await t.api('POST', `/api/v1/runs/${old.id}/rerun`, {
      token: t.tokens.viewer,
      body: { failed: true },
    });
    expect(viewer.status).toBe(403);
    const missing = await t.api('POST', `/api/v1/runs/${old.id}/rerun`, {
      token: t.tokens.operator,
      body: { failed: true },
    });
    expect(missing).toMatchObject({ status: 400, body: { error: { code: 'SECRET_INPUT_MISSING' } } });
    const before = updatePosts();
    const retried = await t.api('POST', `/api/v1/runs/${old.id}/rerun`, {
      token: t.tokens.operator,
      body: { failed: true, secretInputs: { token: TOKEN } },
    });
    expect(retried.status).toBe(202);
    const view = (retried.body as { run: { id: string; trigger: Record<string, unknown> } }).run;
    expect(view.trigger).toMatchObject({
      kind: 'manual',
      rerunOf: old.id,
      retriedFailed: true,
      by: 'on-call operator',
    });
    // Still running: a second retry of the new run is refused until it has ended.
    const early = await t.api('POST', `/api/v1/runs/${view.id}/rerun`, {
      token: t.tokens.operator,
      body: { failed: true, secretInputs: { token: TOKEN } },
    });
    expect(early).toMatchObject({ status: 409, body: { error: { code: 'RUN_STILL_RUNNING' } } });
    expect((await ended(view.id)).status).toBe('succeeded');
    const added = updatePosts().slice(before.length);
    // Only the systems whose item did not succeed were sent an update again.
    const succeeded = (old.outputs as { items: Array<{ id: string; status: string }> }).items.filter(
      (item) => item.status === 'succeeded',
    );
    for (const item of succeeded) expect(added.some((path) => path.includes(item.id))).toBe(false);
    expect(added.length).toBeGreaterThanOrEqual(1);
    const nothing = await t.api('POST', `/api/v1/runs/${view.id}/rerun`, {
      token: t.tokens.operator,
      body: { failed: true, secretInputs: { token: TOKEN } },
    });
    expect(nothing).toMatchObject({ status: 409, body: { error: { code: 'NOTHING_FAILED' } } });
    expect(t.answers.join('\n')).not.toContain(TOKEN);
    expect(JSON.stringify(await t.store.journal(view.id))).not.toContain(TOKEN);
  });

  it('ui.rerun: "Retry failed" and "Run again" on the run page, the runs linked on both pages; a viewer gets no button; a retry is cancelled from its page', async () => {
    const old = await failedRun();
    const app = t.server.app;
    const operator = await pageSession(app, t.tokens.operator);
    const viewer = await pageSession(app, t.tokens.viewer);
    const page = async (url: string, session = operator) =>
      (await app.inject({ method: 'GET', url, headers: { cookie: session.cookie } })).body;
    const oldPage = await page(`/runs/${old.id}`);
    expect(oldPage).toContain('Retry failed');
    expect(oldPage).toContain(`/playbooks/fleet-retry?rerunOf=${old.id}`);
    expect(oldPage).toContain('name="secret.token"');
    expect(await page(`/runs/${old.id}`, viewer)).not.toContain('Retry failed');
    const form = (url: string, fields: Record<string, string>, session = operator) =>
      app.inject({
        method: 'POST',
        url,
        headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
      });
    expect((await form(`/runs/${old.id}/rerun`, { failed: 'true', 'secret.token': TOKEN }, viewer)).statusCode).toBe(
      403,
    );
    const retried = await form(`/runs/${old.id}/rerun`, { failed: 'true', 'secret.token': TOKEN });
    expect(retried.statusCode).toBe(303);
    const newId = decodeURIComponent(String(retried.headers.location).replace('/runs/', ''));
    expect((await t.store.getRun(newId))?.trigger).toMatchObject({ rerunOf: old.id, retriedFailed: true });
    const cancelled = await form(`/runs/${newId}/cancel`, {});
    expect(cancelled.statusCode).toBe(303);
    expect((await ended(newId)).status).toBe('cancelled');
    const newPage = await page(`/runs/${newId}`);
    expect(newPage).toContain('Retries what failed in run');
    expect(newPage).toContain(`href="/runs/${old.id}"`);
    expect(await page(`/runs/${old.id}`)).toContain(`href="/runs/${newId}"`);

    // "Run again": the start form filled with the run's inputs, the secret one asked again.
    const again = await page(`/playbooks/fleet-retry?rerunOf=${old.id}`);
    expect(again).toContain(`name="rerunOf" value="${old.id}"`);
    expect(again).toMatch(/name="input\.catalogVersion" type="text" value="2\.4\.0"/);
    const started = await form('/playbooks/fleet-retry/run', { rerunOf: old.id, 'input.token': TOKEN });
    expect(started.statusCode).toBe(303);
    const againId = decodeURIComponent(String(started.headers.location).replace('/runs/', ''));
    expect((await t.store.getRun(againId))?.trigger).toMatchObject({ rerunOf: old.id });
    expect((await t.store.getRun(againId))?.trigger.retriedFailed).toBeUndefined();
    await ended(againId);
    for (const id of [old.id, newId, againId]) expect(await page(`/runs/${id}`)).not.toContain(TOKEN);
  });
});
