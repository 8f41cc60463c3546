import type { SessionsFacet } from '../types.js';
import { webSessionFromRow, webSessionToRow } from '../web-session-row.js';
import { type SqliteContext } from './open.js';

export function sqliteSessions(context: SqliteContext): SessionsFacet {
  const { resolved, statements, open } = context;
  return {
    async createWebSession(session) {
      open();
      statements.createWebSession.run(webSessionToRow(session));
    },

    async getWebSession(idHash) {
      open();
      const row = statements.getWebSession.get(idHash, resolved.now().getTime());
      return row && webSessionFromRow(row);
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
