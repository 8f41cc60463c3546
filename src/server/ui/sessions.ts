/**
 * Web UI sessions: logging in with a token makes a random session id, sent as an HttpOnly,
 * SameSite=Strict cookie (the token itself never goes back to the browser). The store keeps
 * the session (`web_sessions`) under the SHA-256 of its id, never the id, so a session outlives
 * a restart and every server sharing the store knows it, and a logout on one ends it on all.
 * Each session's CSRF token, which every state-changing form carries, is derived from its id
 * (a hash of another purpose), so it needs no storing and reveals nothing of the id. The token
 * is checked again at each request, so revoking it ends its sessions; expired sessions are not
 * taken and are swept at logins.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiToken, RunStore, WebSessionUser } from '../../store/index.js';
import type { Grant } from '../tokens.js';

export const SESSION_COOKIE = 'fleetbook_session';

/** Expired sessions are swept at a login at most this often. */
const SWEEP_EVERY_MS = 60_000;

export interface Session {
  /** The id the cookie holds (only this process's memory and the browser see it). */
  id: string;
  tokenId: string;
  csrf: string;
  expiresAtMs: number;
}

export interface Sessions {
  create(token: ApiToken): Promise<Session>;
  /** A single sign-on's session: the user the provider named, with the role their groups gave at this login. */
  createForUser(user: WebSessionUser): Promise<Session>;
  /** The session and its still-valid token, or undefined. */
  find(
    id: string | undefined,
  ): Promise<{ session: Session; token: ApiToken & { grants?: Grant[]; groups?: string[] } } | undefined>;
  end(id: string): Promise<void>;
  csrfMatches(session: Session, given: unknown): boolean;
}

/** The `tokenId` of a single sign-on's session, which has no token behind it. */
export const OIDC_SESSION = 'oidc';

/** What the store keeps of a session id. */
export const sessionIdHash = (id: string): string => createHash('sha256').update(id).digest('hex');
const csrfOf = (id: string): string => createHash('sha256').update(`csrf\u0000${id}`).digest('base64url');

export function createSessions(store: RunStore, ttlMs: number): Sessions {
  let sweptAtMs = 0;
  async function create(tokenId: string, user?: WebSessionUser): Promise<Session> {
    const now = Date.now();
    if (now - sweptAtMs >= SWEEP_EVERY_MS) {
      sweptAtMs = now;
      await store.sweepWebSessions();
    }
    const id = randomBytes(32).toString('base64url');
    const session = { id, tokenId, csrf: csrfOf(id), expiresAtMs: now + ttlMs };
    await store.createWebSession({
      idHash: sessionIdHash(id),
      tokenId,
      createdAt: new Date(now).toISOString(),
      expiresAtMs: session.expiresAtMs,
      ...(user ? { user } : {}),
    });
    return session;
  }
  return {
    create: (token) => create(token.id, undefined),
    createForUser: (user) => create(OIDC_SESSION, user),
    async find(id) {
      if (id === undefined || id === '') return undefined;
      const stored = await store.getWebSession(sessionIdHash(id));
      if (!stored) return undefined;
      const session = { id, tokenId: stored.tokenId, csrf: csrfOf(id), expiresAtMs: stored.expiresAtMs };
      // Who signed in is the caller, under the name and role of that login (as a token's would be).
      if (stored.user) {
        const { name, role, grants, groups } = stored.user;
        const token = {
          id: stored.tokenId,
          name,
          role,
          createdAt: stored.createdAt,
          groups,
          ...(grants ? { grants } : {}),
        };
        return { session, token };
      }
      const tokenRecord = await store.getApiToken(stored.tokenId);
      if (!tokenRecord || tokenRecord.revokedAt !== undefined) {
        await store.deleteWebSession(stored.idHash);
        return undefined;
      }
      const { hash: _hash, ...token } = tokenRecord;
      return { session, token };
    },
    end: (id) => store.deleteWebSession(sessionIdHash(id)),
    csrfMatches(session, given) {
      if (typeof given !== 'string') return false;
      const a = Buffer.from(session.csrf);
      const b = Buffer.from(given);
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}
