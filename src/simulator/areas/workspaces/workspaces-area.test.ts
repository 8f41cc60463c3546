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
    expect((await call('workspaces.getWorkspace', { params: { workspaceId: id } })).body).toMatchObject({ id, type: 'MSP', workspaceName: 'Fleetbook Sandbox' });
    const contact = (await call('workspaces.getWorkspaceContact', { params: { id } })).body as { address: { countryCode: string }; email: string };
    expect(contact.address.countryCode).toMatch(/^[A-Z]{2}$/);
    expect(contact.email).toContain('@');
    expect((await rejection('workspaces.getWorkspace', { params: { workspaceId: 'nope' } })).status).toBe(404);
  });

  it('lists 2 tenants by default, with paging', async () => {
    const { call } = createAreaHarness(workspacesArea);
    const list = (await call('workspaces.listTenants')).body as List;
    expect(list.total).toBe(2);
    expect(list.items.every((t) => t.type === 'MSP_TENANT')).toBe(true);
    expect(((await call('workspaces.listTenants', { query: { limit: '1', offset: '1' } })).body as List).items).toHaveLength(1);
  });

  it('creates (201 + Location + message), refuses a duplicate name (409), updates and deletes (204)', async () => {
    const { call, rejection } = createAreaHarness(workspacesArea);
    const created = await call('workspaces.createTenant', { method: 'POST', body: tenantBody });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ message: "Tenant 'Acme Logistics East' created" });
    const tenantId = created.headers!.Location!.split('/').pop()!;
    expect(created.headers!.Location).toBe(`/workspaces/v1/msp-tenants/${tenantId}`);
    expect((await call('workspaces.getWorkspace', { params: { workspaceId: tenantId } })).body).toMatchObject({ workspaceName: 'Acme Logistics East', description: 'East division' });
    expect((await call('workspaces.getWorkspaceContact', { params: { id: tenantId } })).body).toMatchObject({ email: 'it@acme-east.example' });
    const duplicate = await rejection('workspaces.createTenant', { body: { ...tenantBody, workspaceName: 'acme logistics east' } });
    expect(duplicate.status).toBe(409);

    const updated = await call('workspaces.updateTenant', { method: 'PUT', params: { tenantId }, body: { ...tenantBody, workspaceName: 'Acme East', email: 'ops@acme-east.example' } });
    expect(updated).toMatchObject({ status: 200, body: { message: "Tenant 'Acme East' updated" } });
    expect((await call('workspaces.getWorkspace', { params: { workspaceId: tenantId } })).body).toMatchObject({ workspaceName: 'Acme East', generation: 2 });
    expect((await call('workspaces.getWorkspaceContact', { params: { id: tenantId } })).body).toMatchObject({ email: 'ops@acme-east.example' });

    expect((await call('workspaces.deleteTenant', { method: 'DELETE', params: { tenantId } })).status).toBe(204);
    expect((await rejection('workspaces.deleteTenant', { params: { tenantId } })).status).toBe(404);
    expect(((await call('workspaces.listTenants')).body as List).total).toBe(2);
  });
  it('answers 451 to a tenant created or updated with an address in a restricted country (world file)', async () => {
    const { call, rejection } = createAreaHarness(workspacesArea, { config: { restrictedCountries: ['ZZ'] } });
    const restricted = { ...tenantBody, address: { ...tenantBody.address, countryCode: 'ZZ' } };
    expect(await rejection('workspaces.createTenant', { method: 'POST', body: restricted })).toMatchObject({ status: 451, errorCode: 'UNAVAILABLE_FOR_LEGAL_REASONS' });
    const created = await call('workspaces.createTenant', { method: 'POST', body: tenantBody });
    const tenantId = created.headers!.Location!.split('/').pop()!;
    expect((await rejection('workspaces.updateTenant', { method: 'PUT', params: { tenantId }, body: restricted })).status).toBe(451);
  });
});
