/**
 * Run starts are audited where every door passes, the admission: through the API here, with the
 * token, its role and the client's address, and a refused start (a required input missing) too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

const PLAYBOOK = `name: audited
description: one log line
inputs:
  who: { type: string }
steps:
  - id: hello
    log: "hello \${{ inputs.who }}"
`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ 'audited.yaml': PLAYBOOK });
});
afterAll(async () => {
  await t.close();
});

describe('the audit log of run starts', () => {
  it('records a start through the API with who, role and address, and a refused one', async () => {
    const started = await t.api('POST', '/api/v1/runs', {
      token: t.tokens.operator,
      body: { playbook: 'audited', inputs: { who: 'world' } },
    });
    expect(started.status).toBe(202);
    const refused = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'audited' } });
    expect(refused.status).toBe(400);
    const entries = await t.store.listAudit({ action: 'run.start' });
    expect(entries).toEqual([
      expect.objectContaining({
        actor: { kind: 'token', name: 'on-call operator', role: 'operator', address: '127.0.0.1' },
        object: { kind: 'playbook', id: 'audited' },
        outcome: 'ok',
        detail: { door: 'api.start', trigger: 'manual', dryRun: false, target: 'here' },
      }),
      expect.objectContaining({
        outcome: 'refused',
        detail: expect.objectContaining({ door: 'api.start', error: expect.any(String) }),
      }),
    ]);
  });
});
