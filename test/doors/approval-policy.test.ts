/**
 * A gate's approval policy through the doors of the server: the API (tokens, which decide by
 * name) and the run page's forms, with users signed in through a real OpenID provider (their
 * groups from the ID token). `required` counts distinct approvers (the same person twice
 * refused, a second one completes), `notRequester` refuses whoever started the run, and a gate
 * of groups lets a member decide and refuses a user outside them, or a token, which has none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiToken } from '../../src/server/tokens.js';
import { browser } from '../support/form-browser.js';
import { startTestProvider, type TestProvider } from '../support/oidc-test-provider.js';
import { startTestServer, type TestServer } from '../server/harness.js';

const TWO = `name: two
steps:
  - id: gate
    approval:
      message: "ship it?"
      approvers: { users: [alice, dave, erin, "on-call operator", "second operator", "ops lead"] }
      required: 2
      notRequester: true
  - log: "approved by \${{ steps.gate.outputs.approvedBy }} after \${{ steps.gate.outputs.approvals[0].by }}"
`;
const GROUPED = `name: grouped
steps:
  - id: gate
    approval:
      message: "change window?"
      approvers: { groups: [change-managers] }
  - log: "approved by \${{ steps.gate.outputs.approvedBy }}"
`;

let provider: TestProvider;
let t: TestServer;
let second: string;

beforeAll(async () => {
  provider = await startTestProvider({
    alice: { groups: ['sre'] },
    dave: { groups: ['sre'] },
    erin: { groups: ['sre'] },
    carol: { groups: ['change-managers'] },
  });
  t = await startTestServer(
    { 'two.yaml': TWO, 'grouped.yaml': GROUPED },
    {
      oidc: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        groupsClaim: 'groups',
        roles: [{ role: 'operator', groups: ['sre', 'change-managers'] }],
      },
    },
  );
  provider.allow(`${t.url}/login/oidc/callback`);
  second = (await issueApiToken(t.store, { name: 'second operator', role: 'operator' })).secret;
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

async function until(runId: string, statuses: string[]): Promise<string> {
  for (;;) {
    const run = await t.store.getRun(runId);
    if (run && statuses.includes(run.status)) return run.status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `user` signed in through the provider: their visits, and the CSRF token their pages carry. */
async function signIn(user: string) {
  provider.signInAs = user;
  const b = browser();
  const landed = await b.visit(`${t.url}/login/oidc?next=${encodeURIComponent('/schedules')}`);
  expect(landed.body).toContain(`${user} · operator`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(landed.body)?.[1] ?? '';
  return {
    post: (path: string, form: Record<string, string> = {}) => b.visit(`${t.url}${path}`, { _csrf: csrf, ...form }),
    get: (path: string) => b.visit(`${t.url}${path}`),
  };
}

const main = (body: string) => body.replace(/[\s\S]*<main/, '').replace(/<\/main>[\s\S]*/, '');

describe('approval policies at the server', () => {
  it('api.approve: required 2 counts distinct tokens; the starter (notRequester) and the same token twice are refused', async () => {
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.admin, body: { playbook: 'two' } });
    const runId = (started.body as { run: { id: string } }).run.id;
    await until(runId, ['waiting']);
    const approve = (token: string) =>
      t.api('POST', `/api/v1/runs/${runId}/approve`, { token, body: { comment: 'fine' } });
    const own = await approve(t.tokens.admin);
    expect(own).toMatchObject({ status: 403, body: { error: { code: 'APPROVER_IS_REQUESTER' } } });
    expect(JSON.stringify(own.body)).toContain('ops lead started this run');
    const first = await approve(t.tokens.operator);
    expect(first).toMatchObject({
      status: 202,
      body: { run: { status: 'waiting', wait: { approvals: [{ by: 'on-call operator', comment: 'fine' }] } } },
    });
    const twice = await approve(t.tokens.operator);
    expect(twice).toMatchObject({ status: 409, body: { error: { code: 'ALREADY_APPROVED' } } });
    expect(JSON.stringify(twice.body)).toContain('1 of 2 approvals: on-call operator');
    expect((await approve(second)).status).toBe(202);
    expect(await until(runId, ['succeeded', 'failed'])).toBe('succeeded');
    const logs = (await t.api('GET', `/api/v1/runs/${runId}/logs`, { token: t.tokens.viewer })).body as {
      lines: Array<{ message: string }>;
    };
    expect(logs.lines.map((line) => line.message)).toEqual(
      expect.arrayContaining([
        'approved by on-call operator, counted (2 needed): fine',
        'approved by second operator after on-call operator',
      ]),
    );
  });

  it('api.approve: a gate of groups refuses a token, which decides by name only', async () => {
    const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'grouped' } });
    const runId = (started.body as { run: { id: string } }).run.id;
    await until(runId, ['waiting']);
    const refused = await t.api('POST', `/api/v1/runs/${runId}/approve`, { token: t.tokens.admin, body: {} });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'NOT_AN_APPROVER' } } });
    expect(JSON.stringify(refused.body)).toContain('ops lead has no groups');
    await t.api('POST', `/api/v1/runs/${runId}/cancel`, { token: t.tokens.admin });
  });

  it('ui.approve: the starter is refused, the page says how far the gate is, the same person twice is refused, a second completes', async () => {
    const alice = await signIn('alice');
    const started = await alice.post('/playbooks/two/run');
    const runId = decodeURIComponent(/\/runs\/([^/?#]+)$/.exec(started.url)?.[1] ?? '');
    await until(runId, ['waiting']);
    const own = await alice.post(`/runs/${runId}/approve`);
    expect(own.status).toBe(403);
    expect(main(own.body)).toContain('alice started this run');
    const dave = await signIn('dave');
    const counted = await dave.post(`/runs/${runId}/approve`, { comment: 'canary fine' });
    expect(counted.status).toBe(200);
    expect(main(counted.body)).toContain('1 of 2 approvals: dave; waiting for');
    expect(await t.store.getRun(runId)).toMatchObject({ status: 'waiting', wait: { approvals: [{ by: 'dave' }] } });
    const twice = await dave.post(`/runs/${runId}/approve`);
    expect(twice.status).toBe(409);
    expect(main(twice.body)).toContain('dave already approved gate');
    const erin = await signIn('erin');
    expect((await erin.post(`/runs/${runId}/approve`)).status).toBe(200);
    expect(await until(runId, ['succeeded', 'failed'])).toBe('succeeded');
    const decided = (await t.store.journal(runId)).find(({ event }) => event.type === 'approval.decided')?.event;
    expect(decided).toMatchObject({ by: 'erin', approvals: [{ by: 'dave', comment: 'canary fine' }] });
  });

  it('ui.approve: a gate of groups lets a member of the group decide and refuses one outside it', async () => {
    const dave = await signIn('dave');
    const started = await dave.post('/playbooks/grouped/run');
    const runId = decodeURIComponent(/\/runs\/([^/?#]+)$/.exec(started.url)?.[1] ?? '');
    await until(runId, ['waiting']);
    const page = await dave.get(`/runs/${runId}`);
    expect(main(page.body)).toContain('0 of 1 approval; waiting for a change-manager');
    const refused = await dave.post(`/runs/${runId}/approve`);
    expect(refused.status).toBe(403);
    expect(main(refused.body)).toContain(
      'dave is not an approver of gate (approvers: groups change-managers; dave&#39;s groups: sre)',
    );
    const carol = await signIn('carol');
    expect((await carol.post(`/runs/${runId}/approve`)).status).toBe(200);
    expect(await until(runId, ['succeeded', 'failed'])).toBe('succeeded');
    expect((await t.store.journal(runId)).find(({ event }) => event.type === 'approval.decided')?.event).toMatchObject({
      by: 'carol',
    });
  });
});
