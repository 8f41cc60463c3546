/**
 * Web UI sessions: logging in with a token makes a random session id, kept in this process's
 * memory (a restart logs everyone out) and sent as an HttpOnly, SameSite=Strict cookie; the
 * token itself never goes back to the browser. Each session has a CSRF token every
 * state-changing form carries. The token is checked again at each request, so revoking it
 * ends its sessions.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiToken, RunStore } from '../../store/index.js';

export const SESSION_COOKIE = 'fleetbook_session';

export interface Session {
  id: string;
  tokenId: string;
  csrf: string;
  expiresAtMs: number;
}

export interface Sessions {
  create(token: ApiToken): Session;
  /** The session and its still-valid token, or undefined. */
  find(id: string | undefined): Promise<{ session: Session; token: ApiToken } | undefined>;
  end(id: string): void;
  csrfMatches(session: Session, given: unknown): boolean;
}

export function createSessions(store: RunStore, ttlMs: number): Sessions {
  const sessions = new Map<string, Session>();
  return {
    create(token) {
      const now = Date.now();
      for (const [id, session] of sessions) if (session.expiresAtMs <= now) sessions.delete(id);
      const session = {
        id: randomBytes(32).toString('base64url'),
        tokenId: token.id,
        csrf: randomBytes(32).toString('base64url'),
        expiresAtMs: now + ttlMs,
      };
      sessions.set(session.id, session);
      return session;
    },
    async find(id) {
      if (id === undefined) return undefined;
      const session = sessions.get(id);
      if (!session) return undefined;
      if (session.expiresAtMs <= Date.now()) {
        sessions.delete(id);
        return undefined;
      }
      const stored = await store.getApiToken(session.tokenId);
      if (!stored || stored.revokedAt !== undefined) {
        sessions.delete(id);
        return undefined;
      }
      const { hash: _hash, ...token } = stored;
      return { session, token };
    },
    end: (id) => void sessions.delete(id),
    csrfMatches(session, given) {
      if (typeof given !== 'string') return false;
      const a = Buffer.from(session.csrf);
      const b = Buffer.from(given);
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}
