/** The codes of the notifications module's errors (exit 2). docs/errors.md says what each means. */
export const NotificationErrorCode = {
  /** `notifications:` (or `server:`) of fleetbook.yaml is not what it must be. */
  invalidNotifications: 'INVALID_NOTIFICATIONS',
  /** A playbook's `notify:` names a channel fleetbook.yaml does not configure. */
  unknownChannel: 'UNKNOWN_CHANNEL',
} as const;
export type NotificationErrorCode = (typeof NotificationErrorCode)[keyof typeof NotificationErrorCode];
