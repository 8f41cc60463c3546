import { playbooksJsonOf, rowToApiToken, tokenExists, withoutPlaybooks, type ApiTokenRow } from '../api-token-row.js';
import type { TokensFacet } from '../types.js';
import type { MemoryTables } from './open.js';

/** `fleetbook server`'s API tokens. */
export function memoryTokens(tables: MemoryTables): TokensFacet {
  const { resolved, apiTokens, open } = tables;
  return {
    async createApiToken(token) {
      open();
      if ([...apiTokens.values()].some((row) => row.name === token.name || row.id === token.id))
        throw tokenExists(token.name);
      const row: ApiTokenRow = { ...withoutPlaybooks(token), revokedAt: null, playbooksJson: playbooksJsonOf(token) };
      apiTokens.set(token.id, row);
      return rowToApiToken(row);
    },

    async getApiToken(id) {
      open();
      const row = apiTokens.get(id);
      return row && { ...rowToApiToken(row), hash: row.hash };
    },

    async listApiTokens() {
      open();
      return [...apiTokens.values()].map(rowToApiToken);
    },

    async revokeApiToken(idOrName) {
      open();
      const row = [...apiTokens.values()].find((candidate) => candidate.id === idOrName || candidate.name === idOrName);
      if (!row) return undefined;
      row.revokedAt ??= resolved.now().toISOString();
      return rowToApiToken(row);
    },
  };
}
