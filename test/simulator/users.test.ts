import { afterEach, describe, expect, it } from 'vitest';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('users and workspaces through HTTP', () => {
  it('filters users with functions and the substring form; invites with a welcome e-mail; 409 on a duplicate', async () => {
    const t = await startTestSimulator();
    close = () => t.sim.close();
    const { call, sim } = t;
    const all = (await call('GET', '/identity/v1/users')).body.items as JsonBody[];
    expect(all).toHaveLength(25);
    const unverified = await call(
      'GET',
      `/identity/v1/users?filter=${encodeURIComponent("userStatus eq 'UNVERIFIED' and endswith(username, '.com')")}`,
    );
    expect(unverified.body.total).toBe(all.filter((u) => u.userStatus === 'UNVERIFIED').length);
    const part = (all[0].username as string).split('.')[0]!;
    const substring = await call('GET', `/identity/v1/users?filter=${encodeURIComponent(`'${part}' in username`)}`);
    expect(substring.body.total).toBe(all.filter((u) => (u.username as string).includes(part)).length);

    const invited = await call('POST', '/identity/v1/users', {
      body: { email: 'jonas.new@corp.example', sendWelcomeEmail: true },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ message: "User 'jonas.new@corp.example' invited" });
    const location = invited.headers.get('location')!;
    expect((await call('GET', location)).body).toMatchObject({
      username: 'jonas.new@corp.example',
      userStatus: 'UNVERIFIED',
    });
    const outbox = (await (await fetch(`${sim.url}/_sim/outbox`)).json()) as { items: JsonBody[] };
    expect(outbox.items).toEqual([
      expect.objectContaining({ to: ['jonas.new@corp.example'], kind: 'user-invitation' }),
    ]);
    expect((await call('POST', '/identity/v1/users', { body: { email: 'jonas.new@corp.example' } })).status).toBe(409);
    expect((await call('PUT', location, { body: { language: 'de', idleTimeout: 1800 } })).body).toEqual({
      message: expect.stringContaining('updated'),
    });
    expect((await call('DELETE', location)).status).toBe(204);
    expect((await call('GET', location)).status).toBe(404);
    expect(sim.control.violations()).toEqual([]);
  });

  it('serves the workspace, its contact, and tenant CRUD with 201, 409 and 204', async () => {
    const t = await startTestSimulator();
    close = () => t.sim.close();
    const { call, sim } = t;
    const tenants = (await call('GET', '/workspaces/v1/msp-tenants')).body;
    expect(tenants.total).toBe(2);
    const body = {
      workspaceName: 'Acme Logistics East',
      email: 'it@acme.example',
      address: { city: 'Berlin', countryCode: 'DE' },
    };
    const created = await call('POST', '/workspaces/v1/msp-tenants', { body });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    const tenantId = location.split('/').pop()!;
    expect((await call('GET', `/workspaces/v1/workspaces/${tenantId}`)).body).toMatchObject({
      workspaceType: 'MSP_TENANT',
      workspaceName: 'Acme Logistics East',
    });
    expect((await call('GET', `/workspaces/v1/workspaces/${tenantId}/contact`)).body).toMatchObject({
      email: 'it@acme.example',
      address: { countryCode: 'DE' },
    });
    expect((await call('POST', '/workspaces/v1/msp-tenants', { body })).status).toBe(409);
    expect((await call('PUT', location, { body: { ...body, workspaceName: 'Acme East' } })).status).toBe(200);
    expect((await call('DELETE', location)).status).toBe(204);
    expect((await call('GET', '/workspaces/v1/msp-tenants')).body.total).toBe(2);
    expect(sim.control.violations()).toEqual([]);
  });
});
