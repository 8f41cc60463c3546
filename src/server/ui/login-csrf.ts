/**
 * The login form's CSRF check, before there is a session: a signed double-submit. Showing the
 * form sets a random nonce as an HttpOnly, SameSite=Strict cookie scoped to `/login` and puts
 * an HMAC of it (this process's key, bound to the login form) in a hidden field; a login POST
 * is taken only when the field is the HMAC of the cookie it comes with. Another site can make a
 * browser post the form but can neither read nor set the cookie, and the signature keeps a
 * cookie planted from a sibling host from matching a field the planter chose.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const LOGIN_COOKIE = 'fleetbook_login';

export interface LoginCsrf {
  /** A fresh pair for one showing of the form: the cookie's nonce and the form field's value. */
  issue(): { nonce: string; field: string };
  /** Whether `field` is the signature of the `nonce` cookie the POST came with. */
  matches(nonce: unknown, field: unknown): boolean;
}

/** `key`: this process's signing key (random by default: a form shown before a restart is refused, and shown again). */
export function createLoginCsrf(key: Buffer = randomBytes(32)): LoginCsrf {
  const sign = (nonce: string) => createHmac('sha256', key).update(`login-form\u0000${nonce}`).digest('base64url');
  return {
    issue() {
      const nonce = randomBytes(24).toString('base64url');
      return { nonce, field: sign(nonce) };
    },
    matches(nonce, field) {
      if (typeof nonce !== 'string' || typeof field !== 'string' || nonce === '') return false;
      const expected = Buffer.from(sign(nonce));
      const given = Buffer.from(field);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
