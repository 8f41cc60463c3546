import { playbooksJsonOf, rowToApiToken, tokenExists, withoutPlaybooks, type ApiTokenRow } from '../api-token-row.js';
import type { TokensFacet } from '../types.js';
import { pgCode } from './connection.js';
import { type PostgresContext } from './open.js';
import { SQL_CREATE_API_TOKEN, SQL_GET_API_TOKEN, SQL_LIST_API_TOKENS, SQL_REVOKE_API_TOKEN } from './sql.js';

/** `fleetbook server`'s API tokens. */
export function postgresTokens(context: PostgresContext): TokensFacet {
  const { resolved, serial, query } = context;
  return {
    createApiToken: (token) =>
      serial(async () => {
        try {
          await query(SQL_CREATE_API_TOKEN, [
            token.id,
            token.name,
            token.role,
            token.hash,
            token.createdAt,
            playbooksJsonOf(token),
          ]);
        } catch (error) {
          if (pgCode(error) === '23505') throw tokenExists(token.name);
          throw error;
        }
        return rowToApiToken({ ...withoutPlaybooks(token), revokedAt: null, playbooksJson: playbooksJsonOf(token) });
      }),

    getApiToken: (id) =>
      serial(async () => {
        const row = (await query<ApiTokenRow>(SQL_GET_API_TOKEN, [id])).rows[0];
        return row && { ...rowToApiToken(row), hash: row.hash };
      }),

    listApiTokens: () => serial(async () => (await query<ApiTokenRow>(SQL_LIST_API_TOKENS)).rows.map(rowToApiToken)),

    revokeApiToken: (idOrName) =>
      serial(async () => {
        const row = (await query<ApiTokenRow>(SQL_REVOKE_API_TOKEN, [resolved.now().toISOString(), idOrName])).rows[0];
        return row && rowToApiToken(row);
      }),
  };
}
