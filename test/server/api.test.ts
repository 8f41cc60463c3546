/**
 * The API of `fleetbook server` over a real port, against the simulator: tokens and roles,
 * runs started with checked inputs and followed to their end, the journal and log lines, the
 * event stream resumed with Last-Event-ID, cursor paging, playbooks with their problems,
 * schedules paused and resumed. Every answer is checked against the API description
 * (harness.ts), and none may hold the client secret or a token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

const DEMO = `name: api-demo
description: "Lists the catalogs <script>alert(1)</script>"
inputs:
  count: { type: integer, default: 3, minimum: 1, description: items of the loop }
  label: { type: string, default: demo }
schedules:
  - id: api-demo-nightly
    cron: "0 3 * * *"
    timezone: Europe/Berlin
steps:
  - id: items
    forEach: "\${{ [1..inputs.count] }}"
    as: n
    steps:
      - id: nap
        sleep: 20ms
  - id: catalogs
    call: privateCloud.listSoftwareCatalogs
  - id: say
    log: "done \${{ inputs.label }}"
`;
const BROKEN = `name: broken
steps:
  - id: a
    call: privateCloud.noSuchOperation
`;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ 'api-demo.yaml': DEMO, 'broken.yaml': BROKEN });
});
afterAll(async () => {
  await t.close();
});

async function waitForEnd(runId: string): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await t.api('GET', `/api/v1/runs/${runId}`, { token: t.tokens.viewer });
    const run = (body as { run: Record<string, unknown> }).run;
    if (run.status !== 'running' && run.status !== 'queued') return body as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('fleetbook server API', () => {
  it('answers /healthz without a token, and nothing else without a valid one', async () => {
    expect(await t.api('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const none = await t.api('GET', '/api/v1/runs');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await t.api('GET', '/api/v1/runs', { token: `${t.tokens.viewer.slice(0, -2)}xx` })).status).toBe(401);
    expect((await t.api('GET', '/api/v1/runs', { token: 'not-a-token' })).status).toBe(401);
    const metrics = await fetch(`${t.url}/metrics`);
    expect(metrics.status).toBe(401);
  });

  it('lets a viewer read but not start a run, and refuses a revoked token', async () => {
    expect((await t.api('GET', '/api/v1/runs', { token: t.tokens.viewer })).status).toBe(200);
    const refused = await t.api('POST', '/api/v1/runs', { token: t.tokens.viewer, body: { playbook: 'api-demo' } });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect((await t.api('GET', '/api/v1/tokens', { token: t.tokens.operator })).status).toBe(403);
    const { issueApiToken } = await import('../../src/server/index.js');
    const { secret, token } = await issueApiToken(t.store, { name: 'short-lived', role: 'admin' });
    expect((await t.api('GET', '/api/v1/tokens', { token: secret })).status).toBe(200);
    await t.store.revokeApiToken(token.id);
    expect((await t.api('GET', '/api/v1/tokens', { token: secret })).status).toBe(401);
  });

  it('refuses bad requests with 400 naming the field', async () => {
    const status = await t.api('GET', '/api/v1/runs?status=bogus', { token: t.tokens.viewer });
    expect(status).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_REQUEST', field: 'querystring/status' } },
    });
    const limit = await t.api('GET', '/api/v1/runs?limit=0', { token: t.tokens.viewer });
    expect(limit).toMatchObject({ status: 400, body: { error: { field: 'querystring/limit' } } });
    const extra = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'api-demo', bogus: 1 },
    });
    expect(extra).toMatchObject({ status: 400, body: { error: { field: 'body/bogus' } } });
    const missing = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { inputs: {} } });
    expect(missing).toMatchObject({ status: 400, body: { error: { field: 'body/playbook' } } });
    const input = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'api-demo', inputs: { count: 'many' } },
    });
    expect(input.status).toBe(400);
    expect((input.body as { error: { message: string } }).error.message).toContain("input 'count'");
    const unknown = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'nope' } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { field: 'body/playbook' } } });
  });

  it('starts a run (202 + Location), which runs to its end with its step tree, journal and log lines', async () => {
    const started = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'api-demo', inputs: { count: 2, label: 'from the API' } },
    });
    expect(started.status).toBe(202);
    const run = (started.body as { run: { id: string; status: string; inputs: unknown } }).run;
    expect(started.headers.get('location')).toBe(`/api/v1/runs/${run.id}`);
    expect(run.inputs).toEqual({ count: 2, label: 'from the API' });
    const shown = (await waitForEnd(run.id)) as {
      run: { status: string; durationMs: number };
      steps: Array<{ label: string; children: unknown[] }>;
    };
    expect(shown.run.status).toBe('succeeded');
    expect(shown.steps.map((step) => step.label)).toEqual(['items', 'catalogs', 'say']);
    expect(shown.steps[0]?.children).toHaveLength(2);
    const journal = await t.api('GET', `/api/v1/runs/${run.id}/journal?afterSeq=2`, { token: t.tokens.viewer });
    const entries = (journal.body as { entries: Array<{ seq: number }> }).entries;
    expect(entries[0]?.seq).toBe(3);
    const logs = await t.api('GET', `/api/v1/runs/${run.id}/logs`, { token: t.tokens.viewer });
    expect((logs.body as { lines: Array<{ message: string; level: string }> }).lines).toContainEqual(
      expect.objectContaining({ message: 'done from the API', level: 'log' }),
    );
    // The audit line names who started it.
    expect(t.logText()).toMatch(/"event":"audit.runStarted"[^\n]*"by":"on-call operator"/);
    expect((await t.api('GET', '/api/v1/runs/nope', { token: t.tokens.viewer })).status).toBe(404);
  });

  it('streams a run as Server-Sent Events to its end, and resumes after Last-Event-ID', async () => {
    const started = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'api-demo', inputs: { count: 5 } },
    });
    const runId = (started.body as { run: { id: string } }).run.id;
    const read = async (lastEventId?: number) => {
      const answer = await fetch(`${t.url}/api/v1/runs/${runId}/events`, {
        headers: {
          authorization: `Bearer ${t.tokens.viewer}`,
          ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
        },
      });
      expect(answer.headers.get('content-type')).toContain('text/event-stream');
      const text = await answer.text();
      t.answers.push(text);
      return text
        .split('\n\n')
        .filter((block) => block.includes('event: '))
        .map((block) => {
          const field = (name: string) =>
            /^(\w[\w.]*): ?(.*)$/gm.exec(block) &&
            block
              .split('\n')
              .find((line) => line.startsWith(`${name}:`))
              ?.slice(name.length + 1)
              .trim();
          return {
            id: field('id'),
            event: field('event'),
            data: JSON.parse(field('data') ?? 'null') as Record<string, unknown>,
          };
        });
    };
    const all = await read();
    const ended = all.at(-1);
    expect(ended?.event).toBe('run.ended');
    expect(ended?.data).toMatchObject({ id: runId, status: 'succeeded' });
    const journaled = all.slice(0, -1);
    expect(journaled.map((event) => Number(event.id))).toEqual(journaled.map((_, index) => index + 1));
    expect(journaled.map((event) => event.event)).toEqual(
      expect.arrayContaining(['step.started', 'item.finished', 'step.finished']),
    );
    expect(journaled.filter((event) => event.event === 'item.finished')).toHaveLength(5);
    const again = await read(4);
    expect(again[0]?.id).toBe('5');
    expect(again.length).toBe(all.length - 4);
  });

  it('pages through runs newest first with a cursor, none lost or doubled', async () => {
    for (let index = 0; index < 3; index += 1)
      await t.api('POST', '/api/v1/runs', {
        token: t.tokens.operator,
        body: { playbook: 'api-demo', inputs: { count: 1 } },
      });
    const everything = (await t.api('GET', '/api/v1/runs?limit=200', { token: t.tokens.viewer })).body as {
      runs: Array<{ id: string }>;
    };
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (
        await t.api('GET', `/api/v1/runs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: t.tokens.viewer })
      ).body as { runs: Array<{ id: string }>; nextCursor?: string };
      expect(page.runs.length).toBeLessThanOrEqual(2);
      seen.push(...page.runs.map((run) => run.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(everything.runs.map((run) => run.id));
    expect(seen.length).toBeGreaterThanOrEqual(5);
    const filtered = (await t.api('GET', '/api/v1/runs?playbook=nothing-like-it', { token: t.tokens.viewer })).body;
    expect(filtered).toEqual({ runs: [] });
    expect((await t.api('GET', '/api/v1/runs?cursor=garbage', { token: t.tokens.viewer })).status).toBe(400);
  });

  it('lists playbooks with the problems of those that do not load, and shows one with its schedule', async () => {
    const { body } = await t.api('GET', '/api/v1/playbooks', { token: t.tokens.viewer });
    const listed = body as { playbooks: Array<{ name: string }>; problems: Array<{ file: string; severity: string }> };
    expect(listed.playbooks.map((book) => book.name)).toEqual(['api-demo']);
    expect(listed.problems).toContainEqual(
      expect.objectContaining({ file: 'playbooks/broken.yaml', severity: 'error' }),
    );
    const one = (await t.api('GET', '/api/v1/playbooks/api-demo', { token: t.tokens.viewer })).body as {
      playbook: { inputs: Array<{ name: string; default?: unknown }> };
      schedules: Array<{ key: string; next: string[] }>;
    };
    expect(one.playbook.inputs).toContainEqual(expect.objectContaining({ name: 'count', default: 3 }));
    expect(one.schedules[0]?.key).toBe('api-demo-nightly');
    expect(one.schedules[0]?.next).toHaveLength(5);
    expect((await t.api('GET', '/api/v1/playbooks/broken', { token: t.tokens.viewer })).status).toBe(404);
  });

  it('pauses and resumes a schedule for an admin only, with an audit line', async () => {
    const forbidden = await t.api('POST', '/api/v1/schedules/api-demo-nightly/pause', { token: t.tokens.operator });
    expect(forbidden.status).toBe(403);
    const paused = await t.api('POST', '/api/v1/schedules/api-demo-nightly/pause', { token: t.tokens.admin });
    expect(paused.body).toMatchObject({
      schedule: { key: 'api-demo-nightly', paused: true, pausedBy: 'ops lead', next: [] },
    });
    const listed = (await t.api('GET', '/api/v1/schedules?count=2', { token: t.tokens.viewer })).body as {
      schedules: Array<{ paused: boolean }>;
    };
    expect(listed.schedules[0]?.paused).toBe(true);
    const resumed = await t.api('POST', '/api/v1/schedules/api-demo-nightly/resume', { token: t.tokens.admin });
    expect(resumed.body).toMatchObject({ schedule: { paused: false } });
    expect((resumed.body as { schedule: { next: string[] } }).schedule.next).toHaveLength(3);
    expect((await t.api('POST', '/api/v1/schedules/nope/pause', { token: t.tokens.admin })).status).toBe(404);
    expect(t.logText()).toMatch(/"event":"audit.schedulePaused"[^\n]*"by":"ops lead"/);
  });

  it('serves Prometheus metrics to a token', async () => {
    const answer = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.tokens.viewer}` } });
    const text = await answer.text();
    expect(answer.status).toBe(200);
    expect(text).toMatch(/^fleetbook_runs\{playbook="api-demo",status="succeeded"\} \d+$/m);
    expect(text).toMatch(/^fleetbook_step_duration_seconds_count\{kind="sleep",status="succeeded"\} \d+$/m);
    expect(text).toMatch(/^fleetbook_runs_started_total\{playbook="api-demo"\} \d+$/m);
    expect(text).toContain('fleetbook_queue_depth 0');
  });

  it('never answers with the client secret or a token', () => {
    const all = t.answers.join('\n');
    expect(all.length).toBeGreaterThan(1000);
    expect(all).not.toContain(t.clientSecret);
    for (const token of Object.values(t.tokens)) expect(all).not.toContain(token);
    expect(all).not.toMatch(/fbk_[0-9a-f]{12}_/);
  });
});
