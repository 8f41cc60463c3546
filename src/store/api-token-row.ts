import { StoreError, StoreErrorCode } from './store-error.js';
import type { ApiToken, TokenRole } from './types.js';

/** An `api_tokens` row as both SQL stores read it (the memory store keeps the same shape). */
export interface ApiTokenRow {
  id: string;
  name: string;
  role: string;
  hash: string;
  createdAt: string;
  revokedAt: string | null;
  /** JSON of the token's playbook patterns, or null for every playbook. */
  playbooksJson: string | null;
}

export function rowToApiToken(row: ApiTokenRow): ApiToken {
  return {
    id: row.id,
    name: row.name,
    role: row.role as TokenRole,
    ...(row.playbooksJson === null || row.playbooksJson === undefined
      ? {}
      : { playbooks: JSON.parse(row.playbooksJson) as string[] }),
    createdAt: row.createdAt,
    ...(row.revokedAt === null ? {} : { revokedAt: row.revokedAt }),
  };
}

export const withoutPlaybooks = <T extends { playbooks?: string[] }>({ playbooks: _playbooks, ...token }: T) => token;

/** The playbooks column of a token to record. */
export const playbooksJsonOf = (token: { playbooks?: string[] }): string | null =>
  token.playbooks ? JSON.stringify(token.playbooks) : null;

export function tokenExists(name: string): StoreError {
  return new StoreError(
    `An API token named '${name}' exists already (revoked tokens keep their names); choose another name.`,
    StoreErrorCode.tokenExists,
    { name },
  );
}
