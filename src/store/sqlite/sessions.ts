import type { SessionsFacet } from '../types.js';
import { type SqliteContext } from './open.js';

export function sqliteSessions(context: SqliteContext): SessionsFacet {
  const { resolved, statements, open } = context;
  return {
    async createWebSession(session) {
      open();
      statements.createWebSession.run(session);
    },

    async getWebSession(idHash) {
      open();
      return statements.getWebSession.get(idHash, resolved.now().getTime());
    },

    async deleteWebSession(idHash) {
      open();
      statements.deleteWebSession.run(idHash);
    },

    async sweepWebSessions() {
      open();
      return statements.sweepWebSessions.run(resolved.now().getTime()).changes;
    },
  };
}
