/**
 * Workspace API credentials: a name, a client id and a secret shown only when the
 * credential is created or its secret reset. A credential is a real API client of the
 * simulator: the token endpoint accepts its current secret, with the role of the client
 * that created it, and its tokens stop working when it is deleted.
 */
import { randomBytes } from 'node:crypto';
import type { Rng, SimRequest, SimResponse } from '../../context.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import { touch, type RecordFields } from './world-time.js';

type Role = 'Administrator' | 'Operator' | 'Observer';

export interface Credential extends RecordFields {
  credentialName: string;
  clientId: string;
  clientSecret: string;
  role: Role;
  /** The MSP tenant the credential acts in, when it was created for one. */
  associatedTenant?: { resourceUri: string; tenantName: string };
  /** The service provision the credential is for, when it was created for one. */
  associatedServiceManagerProvision?: { resourceUri: string };
}

const listQuery = createListQuery({
  filter: { id: 'string', credentialName: 'string', clientId: 'string', createdAt: 'timestamp' },
});

/** A fresh secret; the rng keeps generated worlds reproducible, requests use real randomness. */
function secretFrom(rng?: Rng): string {
  if (!rng) return randomBytes(24).toString('hex');
  return Array.from({ length: 48 }, () => rng.int(0, 15).toString(16)).join('');
}

export function generatedCredential(
  rng: Rng,
  record: RecordFields,
  credentialName: string,
  associations: Pick<Credential, 'associatedTenant' | 'associatedServiceManagerProvision'> = {},
): Credential {
  return {
    ...record,
    type: 'credential',
    credentialName,
    clientId: rng.uuid(),
    clientSecret: secretFrom(rng),
    role: 'Operator',
    ...associations,
  };
}

/** The record as listed: never the secret. */
function listed(credential: Credential): Record<string, unknown> {
  const { clientSecret: _secret, role: _role, ...shown } = credential;
  return shown;
}

/** The answer to a create or a reset: the only time the secret is shown. */
function withSecret(credential: Credential): Record<string, unknown> {
  const { role: _role, ...shown } = credential;
  return shown;
}

export interface CredentialsDeps {
  credentials: Credential[];
  nowIso: () => string;
  idFor: (label: string) => string;
  tenantNameOf: (tenantId: string) => string | undefined;
}

export function credentialHandlers(deps: CredentialsDeps) {
  const { credentials } = deps;
  const find = (id: string): Credential => {
    const credential = credentials.find((c) => c.id === id);
    if (!credential) throw notFound('Credential', id);
    return credential;
  };
  return {
    'workspaces.listCredentials': (req: SimRequest): SimResponse => {
      // An empty filter is the published default: no filter. The list has no paging.
      const { filter, ...rest } = req.query;
      const items = listQuery.select(credentials, {
        ...req,
        query: filter === '' || filter === undefined ? rest : { ...rest, filter },
      });
      return { status: 200, body: { items: items.map(listed), count: items.length } };
    },

    'workspaces.createCredential': (req: SimRequest): SimResponse => {
      const body = req.body as {
        credentialName: string;
        associatedTenant?: { resourceUri: string };
        associatedServiceManagerProvision?: { resourceUri: string };
      };
      const name = body.credentialName.trim();
      if (name.length === 0)
        throw badRequest('A credential needs a name', [
          { source: 'field', subject: 'credentialName', description: 'a non-empty name' },
        ]);
      if (credentials.some((c) => c.credentialName.toLowerCase() === name.toLowerCase())) {
        throw conflict('CREDENTIAL_NAME_CONFLICT', `A credential named '${name}' already exists`);
      }
      let associatedTenant: Credential['associatedTenant'];
      if (body.associatedTenant) {
        const tenantId = body.associatedTenant.resourceUri.split('/').pop() ?? '';
        const tenantName = deps.tenantNameOf(tenantId);
        if (tenantName === undefined) throw notFound('Tenant', tenantId);
        associatedTenant = { resourceUri: `/workspaces/v1/msp-tenants/${tenantId}`, tenantName };
      }
      const nowIso = deps.nowIso();
      const credential: Credential = {
        id: deps.idFor(`credential:${name}`),
        type: 'credential',
        generation: 1,
        createdAt: nowIso,
        updatedAt: nowIso,
        credentialName: name,
        clientId: deps.idFor(`credential-client:${name}`),
        clientSecret: secretFrom(),
        role: req.clientRole ?? 'Observer',
        ...(associatedTenant ? { associatedTenant } : {}),
        ...(body.associatedServiceManagerProvision
          ? { associatedServiceManagerProvision: { ...body.associatedServiceManagerProvision } }
          : {}),
      };
      credentials.push(credential);
      return {
        status: 201,
        headers: { Location: `/workspaces/v1/credentials/${credential.id}` },
        body: withSecret(credential),
      };
    },

    'workspaces.deleteCredential': (req: SimRequest): SimResponse => {
      const credential = find(req.params.credentialId ?? '');
      credentials.splice(credentials.indexOf(credential), 1);
      return { status: 204 };
    },

    'workspaces.resetCredential': (req: SimRequest): SimResponse => {
      const credential = find(req.params.credentialId ?? '');
      credential.clientSecret = secretFrom();
      touch(credential, deps.nowIso());
      return { status: 200, body: withSecret(credential) };
    },
  };
}
