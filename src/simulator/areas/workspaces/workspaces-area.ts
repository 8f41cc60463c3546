/**
 * Workspace management: the workspace of the API clients (an MSP workspace) with its
 * contact details, its MSP tenants (`workspaceType` MSP_TENANT) and its API credentials.
 */
import type { AreaModule, Rng, SimContext, SimRequest, SimResponse } from '../../context.js';
import { conflict, notFound, unavailableForLegalReasons } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import { credentialHandlers, generatedCredential, type Credential } from './credentials.js';
import { generatedRecord, touch, type RecordFields } from './world-time.js';

export interface Address {
  streetAddress?: string;
  streetAddressComplement?: string;
  city?: string;
  stateOrRegion?: string;
  zip?: string;
  countryCode: string;
}

export interface Contact {
  address: Address;
  phoneNumber?: string;
  email?: string;
}

export interface Workspace extends RecordFields {
  resourceUri: string;
  workspaceType: 'STANDARD_ENTERPRISE' | 'MSP' | 'MSP_TENANT';
  workspaceName: string;
  createdBy: string;
  /** Tenants only. */
  description?: string;
  inventoryOwnership?: 'MSP_OWNED_INVENTORY' | 'CUSTOMER_OWNED_INVENTORY';
}

export interface WorkspacesState {
  workspace: Workspace;
  tenants: Workspace[];
  /** Contact details by workspace id (the workspace and each tenant). */
  contacts: Map<string, Contact>;
  /** API credentials of the workspace, in creation order. */
  credentials: Credential[];
}

/** World-file settings of the workspaces area. */
export interface WorkspacesConfig {
  /** @default 2 */
  tenants?: number;
  /** @default 'Fleetbook Sandbox' */
  workspaceName?: string;
  /** Country codes a tenant's address may not have: creating or updating one answers 451. @default [] */
  restrictedCountries?: string[];
}

/** JSON Schema of the world-file section `workspaces`. */
const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tenants: { type: 'integer', minimum: 0, maximum: 10_000 },
    workspaceName: { type: 'string', minLength: 1 },
    restrictedCountries: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{2}$' } },
  },
} as const;

const CITIES = [
  { city: 'Berlin', stateOrRegion: 'Berlin', zip: '10117', countryCode: 'DE', phone: '+49 30 ' },
  { city: 'Lyon', stateOrRegion: 'Auvergne-Rhone-Alpes', zip: '69002', countryCode: 'FR', phone: '+33 4 ' },
  { city: 'Austin', stateOrRegion: 'TX', zip: '78701', countryCode: 'US', phone: '+1 512 ' },
  { city: 'Osaka', stateOrRegion: 'Osaka', zip: '530-0001', countryCode: 'JP', phone: '+81 6 ' },
];
const TENANT_NAMES = [
  'Acme Logistics',
  'Harbor Health',
  'Summit Retail',
  'Orbit Media',
  'Pine Valley Schools',
  'Delta Foods',
];

function contactFor(rng: Rng, domain: string): Contact {
  const place = rng.pick(CITIES);
  return {
    address: {
      streetAddress: `${rng.int(1, 250)} ${rng.pick(['Main Street', 'Harbour Road', 'Park Avenue', 'Station Square'])}`,
      streetAddressComplement: rng.next() < 0.5 ? `Floor ${rng.int(1, 12)}` : '',
      city: place.city,
      stateOrRegion: place.stateOrRegion,
      zip: place.zip,
      countryCode: place.countryCode,
    },
    phoneNumber: `${place.phone}${rng.int(1_000_000, 9_999_999)}`,
    email: `it-admin@${domain}`,
  };
}

function domainOf(name: string): string {
  return `${name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}.example`;
}

function createState(ctx: SimContext): WorkspacesState {
  const config = ctx.config as WorkspacesConfig;
  const rng = ctx.rng.fork('workspaces');
  const workspaceName = config.workspaceName ?? 'Fleetbook Sandbox';
  const record = generatedRecord(rng, 'workspace', 1200);
  const workspace: Workspace = {
    ...record,
    resourceUri: `/workspaces/v1/workspaces/${record.id}`,
    workspaceType: 'MSP',
    workspaceName,
    createdBy: `owner@${domainOf(workspaceName)}`,
  };
  const contacts = new Map<string, Contact>([[workspace.id, contactFor(rng, domainOf(workspaceName))]]);
  const tenants = Array.from({ length: config.tenants ?? 2 }, (_, i): Workspace => {
    const name =
      TENANT_NAMES[i % TENANT_NAMES.length] +
      (i >= TENANT_NAMES.length ? ` ${Math.floor(i / TENANT_NAMES.length) + 1}` : '');
    const tenantRecord = generatedRecord(rng, 'tenant', 900);
    const tenant: Workspace = {
      ...tenantRecord,
      resourceUri: `/workspaces/v1/msp-tenants/${tenantRecord.id}`,
      workspaceType: 'MSP_TENANT',
      workspaceName: name,
      createdBy: workspace.createdBy,
      description: `Managed for ${name}`,
      inventoryOwnership: rng.pick(['MSP_OWNED_INVENTORY', 'CUSTOMER_OWNED_INVENTORY'] as const),
    };
    contacts.set(tenant.id, contactFor(rng, domainOf(name)));
    return tenant;
  });
  const credentials = [generatedCredential(rng, generatedRecord(rng, 'credential', 300), 'Nightly automation')];
  const firstTenant = tenants[0];
  if (firstTenant) {
    // A credential made for a tenant's service: the published associations filled.
    credentials.push(
      generatedCredential(rng, generatedRecord(rng, 'credential', 300), `${firstTenant.workspaceName} monitoring`, {
        associatedTenant: { resourceUri: firstTenant.resourceUri, tenantName: firstTenant.workspaceName },
        associatedServiceManagerProvision: {
          resourceUri: `/service-catalog/v1/service-manager-provisions/${rng.uuid()}`,
        },
      }),
    );
  } else credentials.push(generatedCredential(rng, generatedRecord(rng, 'credential', 300), 'Monitoring export'));
  return { workspace, tenants, contacts, credentials };
}

/** The published tenant body: only the name is required (and a country with an address). */
interface TenantRequest {
  workspaceName: string;
  description?: string;
  email?: string;
  phoneNumber?: string;
  address?: Address;
  inventoryOwnership?: Workspace['inventoryOwnership'];
}

const tenantQuery = createListQuery({});

function handlers(state: WorkspacesState, ctx: SimContext) {
  let credentialSerial = 0;
  const findWorkspace = (id: string): Workspace => {
    const found = id === state.workspace.id ? state.workspace : state.tenants.find((t) => t.id === id);
    if (!found) throw notFound('Workspace', id);
    return found;
  };
  const findTenant = (id: string): Workspace => {
    const tenant = state.tenants.find((t) => t.id === id);
    if (!tenant) throw notFound('Tenant', id);
    return tenant;
  };
  const checkNameFree = (name: string, exceptId?: string): void => {
    const taken = state.tenants.find((t) => t.id !== exceptId && t.workspaceName.toLowerCase() === name.toLowerCase());
    if (taken) throw conflict('TENANT_NAME_CONFLICT', `A tenant named '${name}' already exists (${taken.id})`);
  };
  const restricted = new Set((ctx.config as WorkspacesConfig).restrictedCountries ?? []);
  const checkCountryAllowed = (body: TenantRequest): void => {
    if (body.address && restricted.has(body.address.countryCode)) {
      throw unavailableForLegalReasons(
        `Tenants with an address in ${body.address.countryCode} cannot be served for legal reasons`,
      );
    }
  };
  const contactOf = (body: TenantRequest): Contact => ({
    address: { ...(body.address ?? { countryCode: '' }) },
    ...(body.email === undefined ? {} : { email: body.email }),
    ...(body.phoneNumber === undefined ? {} : { phoneNumber: body.phoneNumber }),
  });
  /** The published contact record: the address without empty parts, and its own path. */
  const contactView = (workspace: Workspace): Record<string, unknown> => {
    const contact = state.contacts.get(workspace.id);
    const address = Object.fromEntries(Object.entries(contact?.address ?? {}).filter(([, value]) => value !== ''));
    return { ...contact, address, resourceUri: `/workspaces/v1/workspaces/${workspace.id}/contact` };
  };

  return {
    'workspaces.getWorkspace': (req: SimRequest): SimResponse => ({
      status: 200,
      body: findWorkspace(req.params.workspaceId ?? ''),
    }),

    'workspaces.getWorkspaceContact': (req: SimRequest): SimResponse => ({
      status: 200,
      body: contactView(findWorkspace(req.params.workspaceId ?? '')),
    }),

    'workspaces.listTenants': (req: SimRequest): SimResponse => ({
      status: 200,
      body: tenantQuery.page(state.tenants, req),
    }),

    'workspaces.createTenant': (req: SimRequest): SimResponse => {
      const body = req.body as TenantRequest;
      checkCountryAllowed(body);
      checkNameFree(body.workspaceName);
      const nowIso = ctx.clock.nowIso();
      const id = ctx.rng.fork(`tenant:${state.tenants.length}:${body.workspaceName}`).uuid();
      const tenant: Workspace = {
        id,
        type: 'tenant',
        generation: 1,
        createdAt: nowIso,
        updatedAt: nowIso,
        resourceUri: `/workspaces/v1/msp-tenants/${id}`,
        workspaceType: 'MSP_TENANT',
        workspaceName: body.workspaceName,
        createdBy: state.workspace.createdBy,
        inventoryOwnership: body.inventoryOwnership ?? 'MSP_OWNED_INVENTORY',
        ...(body.description === undefined ? {} : { description: body.description }),
      };
      state.tenants.push(tenant);
      state.contacts.set(tenant.id, contactOf(body));
      return {
        status: 201,
        headers: { Location: `/workspaces/v1/msp-tenants/${tenant.id}` },
        body: { message: `Tenant '${tenant.workspaceName}' created` },
      };
    },

    'workspaces.updateTenant': (req: SimRequest): SimResponse => {
      const tenant = findTenant(req.params.tenantId ?? '');
      const body = req.body as TenantRequest;
      checkCountryAllowed(body);
      checkNameFree(body.workspaceName, tenant.id);
      tenant.workspaceName = body.workspaceName;
      if (body.description === undefined) delete tenant.description;
      else tenant.description = body.description;
      if (body.inventoryOwnership !== undefined) tenant.inventoryOwnership = body.inventoryOwnership;
      state.contacts.set(tenant.id, contactOf(body));
      touch(tenant, ctx.clock.nowIso());
      return { status: 200, body: { message: `Tenant '${tenant.workspaceName}' updated` } };
    },

    'workspaces.deleteTenant': (req: SimRequest): SimResponse => {
      const tenant = findTenant(req.params.tenantId ?? '');
      state.tenants.splice(state.tenants.indexOf(tenant), 1);
      state.contacts.delete(tenant.id);
      return { status: 204 };
    },

    ...credentialHandlers({
      credentials: state.credentials,
      nowIso: () => ctx.clock.nowIso(),
      // A serial of its own: an id is never handed out twice, even after a delete.
      idFor: (label) => ctx.rng.fork(`${label}:${(credentialSerial += 1)}`).uuid(),
      tenantNameOf: (tenantId) => state.tenants.find((t) => t.id === tenantId)?.workspaceName,
    }),
  };
}

export const workspacesArea: AreaModule<WorkspacesState> = {
  key: 'workspaces',
  configSchema,
  createState,
  handlers,
  summary: (state) => ({
    workspaceId: state.workspace.id,
    workspaces: 1,
    tenants: state.tenants.length,
    credentials: state.credentials.length,
  }),
  apiClientOf: (state, clientId) => state.credentials.find((c) => c.clientId === clientId),
};
