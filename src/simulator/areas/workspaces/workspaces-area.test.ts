import { describe, expect, it } from 'vitest';
import { createAreaHarness } from '../subscriptions/area-harness.js';
import { workspacesArea } from './workspaces-area.js';

type List = { items: Array<Record<string, unknown>>; total: number };
const tenantBody = {
  workspaceName: 'Acme Logistics East',
  description: 'East division',
  email: 'it@acme-east.example',
  phoneNumber: '+49 30 1234567',
  address: { streetAddress: 'Friedrichstrasse 10', city: 'Berlin', zip: '10117', countryCode: 'DE' },
};

describe('workspaces area', () => {
  it('serves the workspace and its contact details', async () => {
    const { state, call, rejection } = createAreaHarness(workspacesArea);
    const id = state.workspace.id;
    expect((await call('workspaces.getWorkspace', { params: { workspaceId: id } })).body).toMatchObject({
      id,
      type: 'workspace',
      workspaceType: 'MSP',
      workspaceName: 'Fleetbook Sandbox',
      resourceUri: `/workspaces/v1/workspaces/${id}`,
    });
    const contact = (await call('workspaces.getWorkspaceContact', { params: { workspaceId: id } })).body as {
      address: { countryCode: string };
      email: string;
    };
    expect(contact.address.countryCode).toMatch(/^[A-Z]{2}$/);
    expect(contact.email).toContain('@');
    expect((await rejection('workspaces.getWorkspace', { params: { workspaceId: 'nope' } })).status).toBe(404);
  });

  it('lists 2 tenants by default, with paging', async () => {
    const { call } = createAreaHarness(workspacesArea);
    const list = (await call('workspaces.listTenants')).body as List;
    expect(list.total).toBe(2);
    expect(list.items.every((t) => t.workspaceType === 'MSP_TENANT' && typeof t.inventoryOwnership === 'string')).toBe(
      true,
    );
    expect(
      ((await call('workspaces.listTenants', { query: { limit: '1', offset: '1' } })).body as List).items,
    ).toHaveLength(1);
  });

  it('creates (201 + Location + message), refuses a duplicate name (409), updates and deletes (204)', async () => {
    const { call, rejection } = createAreaHarness(workspacesArea);
    const created = await call('workspaces.createTenant', { method: 'POST', body: tenantBody });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ message: "Tenant 'Acme Logistics East' created" });
    const tenantId = created.headers!.Location!.split('/').pop()!;
    expect(created.headers!.Location).toBe(`/workspaces/v1/msp-tenants/${tenantId}`);
    expect((await call('workspaces.getWorkspace', { params: { workspaceId: tenantId } })).body).toMatchObject({
      workspaceName: 'Acme Logistics East',
      description: 'East division',
    });
    expect((await call('workspaces.getWorkspaceContact', { params: { workspaceId: tenantId } })).body).toMatchObject({
      email: 'it@acme-east.example',
    });
    const duplicate = await rejection('workspaces.createTenant', {
      body: { ...tenantBody, workspaceName: 'acme logistics east' },
    });
    expect(duplicate.status).toBe(409);

    const updated = await call('workspaces.updateTenant', {
      method: 'PUT',
      params: { tenantId },
      body: { ...tenantBody, workspaceName: 'Acme East', email: 'ops@acme-east.example' },
    });
    expect(updated).toMatchObject({ status: 200, body: { message: "Tenant 'Acme East' updated" } });
    expect((await call('workspaces.getWorkspace', { params: { workspaceId: tenantId } })).body).toMatchObject({
      workspaceName: 'Acme East',
      generation: 2,
    });
    expect((await call('workspaces.getWorkspaceContact', { params: { workspaceId: tenantId } })).body).toMatchObject({
      email: 'ops@acme-east.example',
    });

    expect((await call('workspaces.deleteTenant', { method: 'DELETE', params: { tenantId } })).status).toBe(204);
    expect((await rejection('workspaces.deleteTenant', { params: { tenantId } })).status).toBe(404);
    expect(((await call('workspaces.listTenants')).body as List).total).toBe(2);
  });
  it('answers 451 to a tenant created or updated with an address in a restricted country (world file)', async () => {
    const { call, rejection } = createAreaHarness(workspacesArea, { config: { restrictedCountries: ['ZZ'] } });
    const restricted = { ...tenantBody, address: { ...tenantBody.address, countryCode: 'ZZ' } };
    expect(await rejection('workspaces.createTenant', { method: 'POST', body: restricted })).toMatchObject({
      status: 451,
      errorCode: 'UNAVAILABLE_FOR_LEGAL_REASONS',
    });
    const created = await call('workspaces.createTenant', { method: 'POST', body: tenantBody });
    const tenantId = created.headers!.Location!.split('/').pop()!;
    expect(
      (await rejection('workspaces.updateTenant', { method: 'PUT', params: { tenantId }, body: restricted })).status,
    ).toBe(451);
  });

  it('API credentials: listed without secrets, created and reset with a fresh secret shown once, deleted; the area lends them to auth', async () => {
    const { state, call, rejection } = createAreaHarness(workspacesArea);
    const list = async () =>
      (await call('workspaces.listCredentials')).body as { items: Array<Record<string, unknown>>; count: number };
    const before = await list();
    expect(before.count).toBe(2);
    expect(
      before.items.every(
        (c) => !('clientSecret' in c) && typeof c.clientId === 'string' && typeof c.credentialName === 'string',
      ),
    ).toBe(true);

    const created = await call('workspaces.createCredential', {
      method: 'POST',
      body: { credentialName: 'Playbook runner' },
      clientRole: 'Operator',
    });
    expect(created.status).toBe(201);
    const credential = created.body as { id: string; clientId: string; clientSecret: string; credentialName: string };
    expect(created.headers!.Location).toBe(`/workspaces/v1/credentials/${credential.id}`);
    expect(credential).toMatchObject({ credentialName: 'Playbook runner', type: 'credential', generation: 1 });
    expect(credential.clientSecret).toMatch(/^[0-9a-f]{48}$/);
    expect(workspacesArea.apiClientOf!(state, credential.clientId)).toMatchObject({
      clientSecret: credential.clientSecret,
      role: 'Operator',
    });
    expect(
      (await rejection('workspaces.createCredential', { body: { credentialName: 'playbook RUNNER' } })).status,
    ).toBe(409);
    expect(
      (
        (await call('workspaces.listCredentials', { query: { filter: "credentialName eq 'Playbook runner'" } }))
          .body as { count: number }
      ).count,
    ).toBe(1);

    const reset = (
      await call('workspaces.resetCredential', { method: 'POST', params: { credentialId: credential.id } })
    ).body as { clientSecret: string; generation: number };
    expect(reset.clientSecret).not.toBe(credential.clientSecret);
    expect(reset.generation).toBe(2);
    expect(workspacesArea.apiClientOf!(state, credential.clientId)?.clientSecret).toBe(reset.clientSecret);

    expect(
      (await call('workspaces.deleteCredential', { method: 'DELETE', params: { credentialId: credential.id } })).status,
    ).toBe(204);
    expect(workspacesArea.apiClientOf!(state, credential.clientId)).toBeUndefined();
    expect((await rejection('workspaces.resetCredential', { params: { credentialId: credential.id } })).status).toBe(
      404,
    );
    expect((await list()).count).toBe(2);
  });
});
