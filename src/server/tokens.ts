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

/** A role, for the playbooks matching `playbooks` (none: every playbook). */
export interface Grant {
  role: TokenRole;
  playbooks?: string[];
}

/**
 * Who calls: a token (its role, maybe for some playbooks only) or a single sign-on's user (every
 * role their groups give, `grants`). Outside every grant's playbooks, a caller is a viewer.
 */
export interface Principal {
  name: string;
  role: TokenRole;
  playbooks?: string[];
  grants?: Grant[];
}

/** Playbook name patterns: letters, digits, `.`, `_`, `-`, and `*` for any text. */
export const PLAYBOOK_PATTERN = /^[A-Za-z0-9._*-]{1,200}$/;

const patternMatches = (pattern: string, playbook: string): boolean =>
  new RegExp(`^${pattern.replace(/[.]/g, '\\.').replaceAll('*', '.*')}$`).test(playbook);

const grantsOf = (principal: Principal): Grant[] =>
  principal.grants ?? [{ role: principal.role, ...(principal.playbooks ? { playbooks: principal.playbooks } : {}) }];

/**
 * The role `principal` holds for `playbook`: the highest of its grants whose patterns match it
 * (viewer when none does). Without a playbook (a token list, the schedules' pauses of the whole
 * server): the highest of its grants limited to no playbook.
 */
export function roleFor(principal: Principal, playbook?: string): TokenRole {
  let best: TokenRole = TokenRole.viewer;
  for (const grant of grantsOf(principal)) {
    const holds =
      grant.playbooks === undefined ||
      (playbook !== undefined && grant.playbooks.some((pattern) => patternMatches(pattern, playbook)));
    if (holds && roleAllows(grant.role, best)) best = grant.role;
  }
  return best;
}

/** The highest role `principal` holds for some playbook (what a route needing a role lets through to its own check). */
export const highestRole = (principal: Principal): TokenRole =>
  grantsOf(principal).reduce<TokenRole>(
    (best, grant) => (roleAllows(grant.role, best) ? grant.role : best),
    TokenRole.viewer,
  );

/** `operator on playbooks matching *-report* (viewer elsewhere)`, or the bare role. */
export function describeRole(principal: Principal): string {
  const scoped = grantsOf(principal).filter((grant) => grant.playbooks);
  if (scoped.length === 0) return principal.role;
  const elsewhere = roleFor(principal);
  return `${scoped.map((grant) => `${grant.role} on playbooks matching ${grant.playbooks?.join(', ')}`).join('; ')} (${elsewhere} elsewhere)`;
}

/** Why `principal` may not act (`needed`) on a run of `playbook`, or undefined when it may. */
export function playbookRoleRefusal(principal: Principal, playbook: string, needed: TokenRole): string | undefined {
  const role = roleFor(principal, playbook);
  if (roleAllows(role, needed)) return undefined;
  return `this needs the ${needed} role for the playbook ${playbook}; ${principal.name} is ${role} there (${describeRole(principal)})`;
}

/** `--playbooks` of `tokens create`: comma-separated name patterns. */
export function parsePlaybookPatterns(text: string): string[] {
  const patterns = text
    .split(',')
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== '');
  const wrong = patterns.find((pattern) => !PLAYBOOK_PATTERN.test(pattern));
  if (patterns.length === 0 || wrong !== undefined)
    throw new UsageError(
      `--playbooks takes playbook name patterns (letters, digits, '.', '_', '-', '*' for any text), comma-separated; got '${wrong ?? text}'.`,
      'INVALID_OPTION',
    );
  return patterns;
}

export function parseTokenRole(text: string): TokenRole {
  const role = TOKEN_ROLES.find((candidate) => candidate === text);
  if (!role) throw new UsageError(`--role must be one of ${TOKEN_ROLES.join(', ')}, got '${text}'.`, 'INVALID_OPTION');
  return role;
}

/** Makes a token for `name` with `role`; the secret is returned once and stored only hashed. */
export async function issueApiToken(
  store: RunStore,
  request: { name: string; role: TokenRole; playbooks?: string[]; now?: Date },
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
    ...(request.playbooks ? { playbooks: request.playbooks } : {}),
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
