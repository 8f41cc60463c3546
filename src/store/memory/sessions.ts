import type { SessionsFacet } from '../types.js';
import type { MemoryTables } from './open.js';

export function memorySessions(tables: MemoryTables): SessionsFacet {
  const { resolved, webSessions, open } = tables;
  return {
    async createWebSession(session) {
      open();
      webSessions.set(session.idHash, { ...session });
    },

    async getWebSession(idHash) {
      open();
      const session = webSessions.get(idHash);
      return session && session.expiresAtMs > resolved.now().getTime() ? { ...session } : undefined;
    },

    async deleteWebSession(idHash) {
      open();
      webSessions.delete(idHash);
    },

    async sweepWebSessions() {
      open();
      const now = resolved.now().getTime();
      let swept = 0;
      for (const [idHash, session] of webSessions)
        if (session.expiresAtMs <= now) {
          webSessions.delete(idHash);
          swept += 1;
        }
      return swept;
    },
  };
}
