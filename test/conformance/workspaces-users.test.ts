import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { f } from '../../src/api/index.js';
import { answerOf, expectConformant, startConformance, type Conformance, type JsonBody } from './harness.js';

let t: Conformance;
beforeAll(async () => {
  t = await startConformance();
});
afterAll(async () => {
  await expectConformant(t.sim, 'workspaces-users');
  await t.close();
});

const idFromLocation = (location: string | undefined) => location!.split('/').pop()!;

describe('workspaces and users conformance', () => {
  it('workspace, contact and MSP tenants: create 201 + Location, update, delete 204', async () => {
    const { admin, operator, observer } = t;
    const tenants = await observer.workspaces.listTenants();
    expect(tenants.body).toMatchObject({ total: 2, count: 2, offset: 0 });
    const [tenant] = tenants.body.items as JsonBody[];
    expect((await observer.workspaces.getWorkspace({ workspaceId: tenant.id })).body).toMatchObject({
      id: tenant.id,
      workspaceType: 'MSP_TENANT',
    });
    const contact = (await observer.workspaces.getWorkspaceContact({ workspaceId: tenant.id })).body as JsonBody;
    expect(contact.address.countryCode).toMatch(/^[A-Z]{2}$/);
    expect(contact.email).toContain('@');

    const body = {
      workspaceName: 'Conformance Tenant',
      email: 'it@conformance.example',
      phoneNumber: '+49 30 1234567',
      address: { city: 'Berlin', countryCode: 'DE' as const },
    };
    const created = await operator.workspaces.createTenant({ body });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ message: "Tenant 'Conformance Tenant' created" });
    const tenantId = idFromLocation(created.headers.location);
    expect(created.headers.location).toBe(`/workspaces/v1/msp-tenants/${tenantId}`);
    expect((await observer.workspaces.getWorkspaceContact({ workspaceId: tenantId })).body).toMatchObject({
      email: 'it@conformance.example',
      address: { city: 'Berlin' },
    });
    expect(await answerOf(operator.workspaces.createTenant({ body }))).toMatchObject({ status: 409 });
    const updated = await operator.workspaces.updateTenant({
      tenantId,
      body: { ...body, workspaceName: 'Conformance East' },
    });
    expect(updated).toMatchObject({ status: 200, body: { message: "Tenant 'Conformance East' updated" } });
    expect((await observer.workspaces.getWorkspace({ workspaceId: tenantId })).body).toMatchObject({
      workspaceName: 'Conformance East',
    });
    // The published body requires the name only, and a country with an address.
    expect(await answerOf(admin.invoke('workspaces.createTenant', { body: { email: 'x@y.example' } }))).toMatchObject({
      status: 400,
    });
    expect(
      await answerOf(
        admin.invoke('workspaces.createTenant', { body: { workspaceName: 'No country', address: { city: 'Berlin' } } }),
      ),
    ).toMatchObject({ status: 400 });
    const removed = await admin.workspaces.deleteTenant({ tenantId });
    expect(removed.status).toBe(204);
    expect(await answerOf(observer.workspaces.getWorkspace({ workspaceId: tenantId }))).toMatchObject({ status: 404 });
    // Tenants page within 1–300; this list publishes 422 (not 400) for input it refuses.
    expect((await answerOf(observer.workspaces.listTenants({ limit: 301 }))).status).toBe(422);
  });

  it('API credentials: create 201 with the secret once, token with it, reset, delete revokes its tokens', async () => {
    const { admin, operator, observer, clientFor } = t;
    const before = (await observer.workspaces.listCredentials()).body;
    expect(before.items.every((credential: JsonBody) => !('clientSecret' in credential))).toBe(true);
    const created = await operator.workspaces.createCredential({ body: { credentialName: 'Conformance runner' } });
    expect(created.status).toBe(201);
    const { id, clientId, clientSecret } = created.body as JsonBody;
    expect(created.headers.location).toBe(`/workspaces/v1/credentials/${id}`);
    expect((await observer.workspaces.listCredentials()).body.count).toBe(before.count + 1);
    expect(
      await answerOf(operator.workspaces.createCredential({ body: { credentialName: 'Conformance runner' } })),
    ).toMatchObject({ status: 409 });

    // The new credential is an API client with its creator's role (Operator: no delete).
    const runner = clientFor(clientId, { credentials: { clientId, clientSecret } });
    expect((await runner.workspaces.listTenants()).status).toBe(200);
    expect(await answerOf(runner.workspaces.deleteCredential({ credentialId: id }))).toMatchObject({ status: 403 });

    const reset = await operator.workspaces.resetCredential({ credentialId: id });
    expect(reset.status).toBe(200);
    expect(reset.body.clientSecret).not.toBe(clientSecret);
    const stale = clientFor(clientId, { credentials: { clientId, clientSecret } });
    expect(await answerOf(stale.workspaces.listTenants())).toMatchObject({ status: 401 });
    const renewed = clientFor(clientId, { credentials: { clientId, clientSecret: reset.body.clientSecret } });
    expect((await renewed.workspaces.listTenants()).status).toBe(200);

    expect((await admin.workspaces.deleteCredential({ credentialId: id })).status).toBe(204);
    // Its tokens die with it.
    expect(await answerOf(renewed.workspaces.listTenants())).toMatchObject({ status: 401 });
    expect(await answerOf(admin.workspaces.resetCredential({ credentialId: id }))).toMatchObject({ status: 404 });
  });

  it('users: invite 201 + Location, duplicate 409, get, preferences, delete 204', async () => {
    const { admin, operator, observer } = t;
    const all = await observer.users.listUsers();
    expect(all.body.total).toBe(25);
    const invited = await operator.users.inviteUser({
      body: { email: 'new.user@conformance.example', sendWelcomeEmail: true },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ message: "User 'new.user@conformance.example' invited" });
    expect(invited.headers.location).toMatch(/^\/identity\/v1\/users\/[\w-]+$/);
    const id = idFromLocation(invited.headers.location);
    expect((await observer.users.getUser({ id })).body).toMatchObject({
      username: 'new.user@conformance.example',
      userStatus: 'UNVERIFIED',
    });
    const mail = (await (await fetch(`${t.sim.url}/_sim/outbox`)).json()) as { items: JsonBody[] };
    expect(mail.items.map((message) => message.to)).toContainEqual(['new.user@conformance.example']);
    expect(
      await answerOf(
        operator.users.inviteUser({ body: { email: 'new.user@conformance.example', sendWelcomeEmail: false } }),
      ),
    ).toMatchObject({ status: 409 });
    // Preferences need only the view level (the reference's table).
    const preferences = await observer.users.updateUserPreferences({ id, body: { language: 'de', idleTimeout: 1800 } });
    expect(preferences).toMatchObject({
      status: 200,
      body: { message: "Preferences of 'new.user@conformance.example' updated" },
    });
    expect(
      await answerOf(observer.users.updateUserPreferences({ id, body: { language: 'xx' as 'de' } })),
    ).toMatchObject({ status: 400 });
    expect(await answerOf(operator.users.deleteUser({ id }))).toMatchObject({ status: 403 });
    expect((await admin.users.deleteUser({ id })).status).toBe(204);
    expect(await answerOf(observer.users.getUser({ id }))).toMatchObject({ status: 404 });
  });

  it("filters: the reference's grammar on users (functions, substring in, and/or/not), 400 naming the problem", async () => {
    const { observer } = t;
    const users = (await observer.users.listUsers()).body.items as JsonBody[];
    const count = async (filter: string) => (await observer.users.listUsers({ filter })).body.total;
    const verified = users.filter((user) => user.userStatus === 'VERIFIED');
    expect(await count("userStatus eq 'VERIFIED'")).toBe(verified.length);
    expect(await count("not userStatus eq 'VERIFIED'")).toBe(users.length - verified.length);
    expect(await count("userStatus in ['VERIFIED', 'UNVERIFIED']")).toBe(
      users.filter((user) => ['VERIFIED', 'UNVERIFIED'].includes(user.userStatus)).length,
    );
    // The substring form: UNVERIFIED contains VERIFIED too.
    expect(await count("'VERIFIED' in userStatus")).toBe(
      users.filter((user) => String(user.userStatus).includes('VERIFIED')).length,
    );
    const first = users[0].username as string;
    const local = first.split('@')[0]!;
    expect(await count(`startswith(username, '${local}') and endswith(username, '.com')`)).toBe(
      users.filter((user) => user.username.startsWith(local) && user.username.endsWith('.com')).length,
    );
    expect(await count(`contains(username, '${local}') or userStatus eq 'BLOCKED'`)).toBe(
      users.filter((user) => user.username.includes(local) || user.userStatus === 'BLOCKED').length,
    );
    expect(await count(f.eq('username', first))).toBe(1);
    const newest = [...users].sort((a, b) => String(b.createdAt).localeCompare(String(a.createdAt)))[0];
    expect(await count(`createdAt ge ${newest.createdAt}`)).toBeGreaterThanOrEqual(1);
    for (const [filter, problem] of [
      ["colour eq 'red'", "unknown property 'colour'"],
      ["userStatus eq 'VERIFIED' and", 'filter'],
      ['userStatus eq 3', 'userStatus'],
      ["lastLogin gt 'yesterday'", 'lastLogin'],
    ] as const) {
      const refused = await answerOf(observer.users.listUsers({ filter }));
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain(problem);
      expect(refused.body.message).toContain('filter');
      expect(refused.body.errorDetails).toBeUndefined();
    }
  });
});
