import type { SessionsFacet, WebSession } from '../types.js';
import { type PostgresContext } from './open.js';
import { SQL_CREATE_WEB_SESSION, SQL_DELETE_WEB_SESSION, SQL_GET_WEB_SESSION, SQL_SWEEP_WEB_SESSIONS } from './sql.js';

export function postgresSessions(context: PostgresContext): SessionsFacet {
  const { resolved, serial, query } = context;
  return {
    createWebSession: (session) =>
      serial(async () => {
        await query(SQL_CREATE_WEB_SESSION, [session.idHash, session.tokenId, session.createdAt, session.expiresAtMs]);
      }),

    getWebSession: (idHash) =>
      serial(async () => {
        const row = (
          await query<Omit<WebSession, 'expiresAtMs'> & { expiresAtMs: string | number }>(SQL_GET_WEB_SESSION, [
            idHash,
            resolved.now().getTime(),
          ])
        ).rows[0];
        return row && { ...row, expiresAtMs: Number(row.expiresAtMs) };
      }),

    deleteWebSession: (idHash) =>
      serial(async () => {
        await query(SQL_DELETE_WEB_SESSION, [idHash]);
      }),

    sweepWebSessions: () =>
      serial(async () => (await query(SQL_SWEEP_WEB_SESSIONS, [resolved.now().getTime()])).rowCount ?? 0),
  };
}
