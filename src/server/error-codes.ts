/** The codes of the server's API error answers (`{ error: { code } }`). docs/errors.md says what each means. */
export const ServerErrorCode = {
  invalidRequest: 'INVALID_REQUEST',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  notResumable: 'NOT_RESUMABLE',
  playbookGone: 'PLAYBOOK_GONE',
  runActive: 'RUN_ACTIVE',
  /** A cancel of a run whose end was already written. */
  runEnded: 'RUN_ENDED',
  badRequest: 'BAD_REQUEST',
  refused: 'REFUSED',
  internal: 'INTERNAL',
  /** `server.oidc` of fleetbook.yaml is wrong (exit 2 at the start). */
  invalidOidcConfig: 'INVALID_OIDC_CONFIG',
} as const;
export type ServerErrorCode = (typeof ServerErrorCode)[keyof typeof ServerErrorCode];
