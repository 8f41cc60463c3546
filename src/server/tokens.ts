/**
 * API tokens: `fbk_<id>_<secret>`, shown once when made. The store keeps the id, name, role
 * and the SHA-256 of the whole token; a presented token is found by its id and its hash
 * compared in constant time, so neither a lookup nor a comparison reveals how much of a
 * guessed token was right.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { UsageError } from '../errors/index.js';
import { TokenRole, type ApiToken, type RunStore } from '../store/index.js';

const TOKEN_PATTERN = /^fbk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export const TOKEN_ROLES: readonly TokenRole[] = [TokenRole.viewer, TokenRole.operator, TokenRole.admin];

/** Whether `role` may do what `needed` may (viewer < operator < admin). */
export function roleAllows(role: TokenRole, needed: TokenRole): boolean {
  return TOKEN_ROLES.indexOf(role) >= TOKEN_ROLES.indexOf(needed);
}

export function parseTokenRole(text: string): TokenRole {
  const role = TOKEN_ROLES.find((candidate) => candidate === text);
  if (!role) throw new UsageError(`--role must be one of ${TOKEN_ROLES.join(', ')}, got '${text}'.`, 'INVALID_OPTION');
  return role;
}

/** Makes a token for `name` with `role`; the secret is returned once and stored only hashed. */
export async function issueApiToken(
  store: RunStore,
  request: { name: string; role: TokenRole; now?: Date },
): Promise<{ token: ApiToken; secret: string }> {
  const name = request.name.trim();
  if (name === '' || name.length > 100 || /[\u0000-\u001f]/.test(name))
    throw new UsageError(
      '--name must be 1 to 100 printable characters (who or what the token is for).',
      'INVALID_OPTION',
    );
  const id = randomBytes(6).toString('hex');
  const secret = `fbk_${id}_${randomBytes(32).toString('base64url')}`;
  const token = await store.createApiToken({
    id,
    name,
    role: request.role,
    hash: sha256(secret).toString('hex'),
    createdAt: (request.now ?? new Date()).toISOString(),
  });
  return { token, secret };
}

/** The live token `secret` is, or undefined (malformed, unknown, revoked, or a wrong secret). */
/** The id part of a presented token (`fbk_<id>_...`), or undefined when it has not the token's shape. */
export function tokenIdOf(secret: string): string | undefined {
  return /^fbk_([0-9a-f]{12})_/.exec(secret)?.[1];
}

export async function verifyApiToken(store: RunStore, secret: string): Promise<ApiToken | undefined> {
  const match = TOKEN_PATTERN.exec(secret);
  if (!match?.[1]) return undefined;
  const stored = await store.getApiToken(match[1]);
  if (!stored || stored.revokedAt !== undefined) return undefined;
  const expected = Buffer.from(stored.hash, 'hex');
  const given = sha256(secret);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  const { hash: _hash, ...token } = stored;
  return token;
}
