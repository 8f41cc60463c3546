import type { SessionsFacet } from '../types.js';
import { webSessionFromRow, webSessionToRow, type WebSessionRow } from '../web-session-row.js';
import { type PostgresContext } from './open.js';
import { SQL_CREATE_WEB_SESSION, SQL_DELETE_WEB_SESSION, SQL_GET_WEB_SESSION, SQL_SWEEP_WEB_SESSIONS } from './sql.js';

export function postgresSessions(context: PostgresContext): SessionsFacet {
  const { resolved, serial, query } = context;
  return {
    createWebSession: (session) =>
      serial(async () => {
        const row = webSessionToRow(session);
        await query(SQL_CREATE_WEB_SESSION, [row.idHash, row.tokenId, row.createdAt, row.expiresAtMs, row.userJson]);
      }),

    getWebSession: (idHash) =>
      serial(async () => {
        const row = (await query<WebSessionRow>(SQL_GET_WEB_SESSION, [idHash, resolved.now().getTime()])).rows[0];
        return row && webSessionFromRow(row);
      }),

    deleteWebSession: (idHash) =>
      serial(async () => {
        await query(SQL_DELETE_WEB_SESSION, [idHash]);
      }),

    sweepWebSessions: () =>
      serial(async () => (await query(SQL_SWEEP_WEB_SESSIONS, [resolved.now().getTime()])).rowCount ?? 0),
  };
}
