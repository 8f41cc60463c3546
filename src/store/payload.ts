import { StoreError, StoreErrorCode } from './store-error.js';

/**
 * Largest JSON text stored for one journal event or run result: 256 KiB. Big results (a
 * downloaded CSV) belong in files the step writes with `saveTo`; the journal keeps the path.
 */
export const defaultMaxPayloadBytes = 256 * 1024;

/**
 * Serialises what a store keeps as JSON (both stores use this, so a value reads back the
 * same from either: `undefined` members dropped, dates as strings) and refuses it when it is
 * larger than `maxPayloadBytes`.
 */
export function encodePayload(value: unknown, what: string | (() => string), maxPayloadBytes: number): string {
  const text = JSON.stringify(value);
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most texts need no count (a journal append is hot).
  if (text.length * 3 <= maxPayloadBytes) return text;
  const bytes = Buffer.byteLength(text);
  if (bytes > maxPayloadBytes) {
    throw new StoreError(
      `${typeof what === 'string' ? what : what()} is ${bytes} bytes of JSON, over the store's limit of ${maxPayloadBytes}. ` +
        `Write large results to a file (a call step's 'saveTo') and keep only its path in the outputs.`,
      StoreErrorCode.payloadTooLarge,
      { bytes, maxPayloadBytes },
    );
  }
  return text;
}

/** Parses what `encodePayload` wrote; `undefined` stays absent. */
export function decodePayload<T>(text: string | null | undefined): T | undefined {
  return text === null || text === undefined ? undefined : (JSON.parse(text) as T);
}

/** An ISO timestamp in one spelling (UTC, milliseconds), so stored times compare as text. */
export function normaliseTimestamp(value: string, what: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new StoreError(`${what} '${value}' is not an ISO timestamp.`, StoreErrorCode.invalidArgument);
  }
  return new Date(ms).toISOString();
}
