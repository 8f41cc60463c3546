/** The codes of admission's refusals (exit 2; HTTP 409 or 403 through the server). docs/errors.md says what each means. */
export const AdmissionErrorCode = {
  /** Outside the playbook's (or schedule's) maintenance window, or inside a freeze. */
  outsideWindow: 'OUTSIDE_WINDOW',
  /** A secret input given for a queued run: secrets are never stored. */
  secretInputQueued: 'SECRET_INPUT_QUEUED',
  /** The caller's role may not do what the request asks (start a run, ignore a window). */
  roleForbidden: 'ROLE_FORBIDDEN',
  /** `ignoreWindow` without a reason to record. */
  ignoreWindowReason: 'IGNORE_WINDOW_REASON',
} as const;
export type AdmissionErrorCode = (typeof AdmissionErrorCode)[keyof typeof AdmissionErrorCode];
