/** The codes of the platform description's errors. docs/errors.md says what each means. */
export const OpenapiErrorCode = {
  platformDescriptionInvalid: 'PLATFORM_DESCRIPTION_INVALID',
} as const;
export type OpenapiErrorCode = (typeof OpenapiErrorCode)[keyof typeof OpenapiErrorCode];
