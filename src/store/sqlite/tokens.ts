import { playbooksJsonOf, rowToApiToken, tokenExists, withoutPlaybooks } from '../api-token-row.js';
import type { TokensFacet } from '../types.js';
import { type SqliteContext } from './open.js';
import { isSqliteError } from './statements.js';

/** `fleetbook server`'s API tokens. */
export function sqliteTokens(context: SqliteContext): TokensFacet {
  const { resolved, statements, open } = context;
  return {
    async createApiToken(token) {
      open();
      try {
        statements.createApiToken.run({ ...withoutPlaybooks(token), playbooksJson: playbooksJsonOf(token) });
      } catch (error) {
        if (isSqliteError(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY'))
          throw tokenExists(token.name);
        throw error;
      }
      return rowToApiToken({ ...withoutPlaybooks(token), revokedAt: null, playbooksJson: playbooksJsonOf(token) });
    },

    async getApiToken(id) {
      open();
      const row = statements.getApiToken.get(id);
      return row && { ...rowToApiToken(row), hash: row.hash };
    },

    async listApiTokens() {
      open();
      return statements.listApiTokens.all().map(rowToApiToken);
    },

    async revokeApiToken(idOrName) {
      open();
      const row = statements.revokeApiToken.get(resolved.now().toISOString(), idOrName, idOrName);
      return row && rowToApiToken(row);
    },
  };
}
