import { randomBytes } from 'node:crypto';
import type { OperationDescriptor } from '../openapi/index.js';
import type { SimClock } from './context.js';
import { SimHttpError } from './errors.js';
import type { ApiClient, Role } from './world-file.js';

/** Permission levels each role grants (the reference's role table). */
export const ROLE_LEVELS: Record<Role, readonly string[]> = {
  Administrator: ['view', 'edit', 'delete'],
  Operator: ['view', 'edit'],
  Observer: ['view'],
};

const TOKEN_PATTERN = /^sim_[0-9a-f]{48}$/;

type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'expired' | 'revoked';

const FAILURE_MESSAGES: Record<AuthFailure, string> = {
  missing: 'No access token: send an Authorization header `Bearer <token>` from the token endpoint',
  malformed: 'The Authorization header is not `Bearer <token>` with a token from the token endpoint',
  unknown: 'The access token is not one this platform issued',
  expired: 'The access token has expired: request a new one from the token endpoint',
  revoked: 'The access token was revoked: request a new one from the token endpoint',
};

function unauthorized(reason: AuthFailure): SimHttpError {
  return new SimHttpError(
    401,
    'UNAUTHORIZED',
    FAILURE_MESSAGES[reason],
    [{ type: 'metadata', source: 'authorization', metadata: { token: { reason } } }],
    { 'www-authenticate': `Bearer error="invalid_token", error_description="${reason}"` },
  );
}

interface IssuedToken {
  client: ApiClient;
  expiresAt: number;
  revoked: boolean;
}

export interface Auth {
  readonly clients: readonly ApiClient[];
  /** The token endpoint's answer for a client-credentials grant; 400/401 when it is refused. */
  issue(form: Record<string, unknown>): { access_token: string; token_type: 'Bearer'; expires_in: number };
  /** The client behind an Authorization header, or the 401 telling why not. */
  authenticate(authorization: string | undefined): ApiClient;
  /** Revokes every token issued so far (expired ones included); returns how many there were. */
  revokeAll(): number;
}

/**
 * Tokens are opaque, live `lifetimeSeconds` of wall-clock time (a client refreshes by its own
 * clock, so the time scale does not shorten them; `/_sim/clock` advances do count), and can
 * all be revoked at once. `createdClientOf` finds the clients the world created (workspace API
 * credentials): their current secret gets tokens, and their tokens die with them.
 */
export function createAuth(
  clients: readonly ApiClient[],
  clock: SimClock,
  lifetimeSeconds: number,
  createdClientOf: (clientId: string) => ApiClient | undefined = () => undefined,
): Auth {
  const byId = new Map(clients.map((client) => [client.clientId, client]));
  const clientOf = (clientId: string): ApiClient | undefined => byId.get(clientId) ?? createdClientOf(clientId);
  const tokens = new Map<string, IssuedToken>();

  return {
    clients,
    issue(form) {
      if (form.grant_type !== 'client_credentials') {
        throw new SimHttpError(400, 'UNSUPPORTED_GRANT_TYPE', "grant_type must be 'client_credentials'", [
          {
            type: 'bad request',
            issues: [{ source: 'field', subject: 'grant_type', description: "must be 'client_credentials'" }],
          },
        ]);
      }
      const client = typeof form.client_id === 'string' ? clientOf(form.client_id) : undefined;
      if (!client || form.client_secret !== client.clientSecret) {
        throw new SimHttpError(401, 'INVALID_CLIENT', 'Unknown client id or wrong client secret');
      }
      // Expired tokens are dropped as new ones are issued, so the map stays small.
      const now = clock.wallNow();
      for (const [token, issued] of tokens) if (issued.expiresAt <= now) tokens.delete(token);
      const token = `sim_${randomBytes(24).toString('hex')}`;
      tokens.set(token, { client, expiresAt: now + lifetimeSeconds * 1000, revoked: false });
      return { access_token: token, token_type: 'Bearer', expires_in: lifetimeSeconds };
    },
    authenticate(authorization) {
      if (authorization === undefined || authorization.trim() === '') throw unauthorized('missing');
      const match = /^Bearer (\S+)$/i.exec(authorization.trim());
      if (!match?.[1] || !TOKEN_PATTERN.test(match[1])) throw unauthorized('malformed');
      const issued = tokens.get(match[1]);
      if (!issued) throw unauthorized('unknown');
      if (issued.revoked || !clientOf(issued.client.clientId)) throw unauthorized('revoked');
      if (issued.expiresAt <= clock.wallNow()) throw unauthorized('expired');
      return issued.client;
    },
    revokeAll() {
      for (const issued of tokens.values()) issued.revoked = true;
      return tokens.size;
    },
  };
}

/** RBAC: a 403 when the client's role lacks the permission level the operation needs. */
export function requireRoleFor(op: OperationDescriptor, client: ApiClient): void {
  const level = op.permission?.level;
  if (level && !ROLE_LEVELS[client.role].includes(level)) {
    throw new SimHttpError(
      403,
      'FORBIDDEN',
      `Client '${client.clientId}' (role ${client.role}) lacks the ${level} level of ${op.permission?.permission ?? 'the permission'} that ${op.id} needs`,
    );
  }
}
