/** A web session as the SQL stores keep it: the user of a single sign-on as JSON, no user for a token's session. */
import type { WebSession, WebSessionUser } from './types.js';

export type WebSessionRow = Omit<WebSession, 'user'> & { userJson: string | null };

export const webSessionToRow = ({ user, ...session }: WebSession): WebSessionRow => ({
  ...session,
  userJson: user ? JSON.stringify(user) : null,
});

export function webSessionFromRow({ userJson, ...row }: WebSessionRow): WebSession {
  const session: WebSession = { ...row, expiresAtMs: Number(row.expiresAtMs) };
  if (userJson !== null && userJson !== undefined) session.user = JSON.parse(userJson) as WebSessionUser;
  return session;
}
