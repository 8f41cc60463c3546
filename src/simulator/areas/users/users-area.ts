/**
 * User management: the users of the workspace, invitations (with an optional welcome
 * e-mail in the outbox), preferences and removal. The list's filter takes the string
 * functions and the substring form of `in`, as the reference shows for this area.
 */
import type { AreaModule, SimContext, SimRequest, SimResponse } from '../../context.js';
import { badRequest, conflict, notFound, unavailableForLegalReasons } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import { generatedRecord, pastTimestamp, touch, WORLD_EPOCH_MS, type RecordFields } from '../workspaces/world-time.js';

export interface User extends RecordFields {
  username: string;
  firstName: string;
  lastName: string;
  resourceUri: string;
  userStatus: 'UNVERIFIED' | 'VERIFIED' | 'BLOCKED' | 'SUSPENDED';
  /** Absent until the user first logs in. */
  lastLogin?: string;
  /** Kept for PUT; not part of the user record the platform shows. */
  preferences: { language: string; idleTimeout: number };
}

export interface UsersState {
  users: User[];
}

/** World-file settings of the users area. */
export interface UsersConfig {
  /** @default 25 */
  users?: number;
  /** Domain of generated user names. @default 'example.com' */
  emailDomain?: string;
  /** E-mail domains that may not be invited: an invitation answers 451. @default [] */
  restrictedEmailDomains?: string[];
}

/** JSON Schema of the world-file section `users`. */
const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    users: { type: 'integer', minimum: 0, maximum: 100_000 },
    emailDomain: { type: 'string', pattern: '^[a-z0-9-]+(\\.[a-z0-9-]+)+$' },
    restrictedEmailDomains: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
} as const;

const FIRST = ['dana', 'jonas', 'mira', 'ali', 'sofia', 'chen', 'lea', 'omar', 'ines', 'raj', 'eva', 'tomas', 'yuki'];
const LAST = ['weber', 'berg', 'costa', 'nowak', 'okafor', 'lind', 'haddad', 'moreau', 'tanaka', 'silva'];

const schema = {
  id: 'string',
  username: 'string',
  firstName: 'string',
  lastName: 'string',
  userStatus: 'string',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
  lastLogin: 'timestamp',
} as const;

const listQuery = createListQuery({ filter: schema, filterOptions: { functions: true } });

/** The record as the platform shows it (preferences are not part of it). */
function view(user: User): Omit<User, 'preferences'> {
  const { preferences: _preferences, ...record } = user;
  return record;
}

const capitalised = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** Name parts an invitation's e-mail suggests (`dana.weber@...` is Dana Weber). */
function namesOf(email: string): { firstName: string; lastName: string } {
  const [first = '', last = ''] = email.slice(0, email.indexOf('@')).split(/[._-]/);
  return { firstName: capitalised(first), lastName: capitalised(last) };
}

function createState(ctx: SimContext): UsersState {
  const config = ctx.config as UsersConfig;
  const rng = ctx.rng.fork('users');
  const domain = config.emailDomain ?? 'example.com';
  const taken = new Set<string>();
  const users = Array.from({ length: config.users ?? 25 }, (_, i): User => {
    const first = rng.pick(FIRST);
    const last = rng.pick(LAST);
    let username = `${first}.${last}@${domain}`;
    if (taken.has(username)) username = username.replace('@', `${i}@`);
    taken.add(username);
    const record = generatedRecord(rng, 'user', 700);
    const verified = rng.next() < 0.75;
    const createdDaysAgo = Math.max(1, Math.floor((WORLD_EPOCH_MS - Date.parse(record.createdAt)) / 86_400_000));
    return {
      ...record,
      username,
      firstName: capitalised(first),
      lastName: capitalised(last),
      resourceUri: `/identity/v1/users/${record.id}`,
      userStatus: verified ? 'VERIFIED' : 'UNVERIFIED',
      // Verified users logged in at varied times; unverified ones never did.
      ...(verified ? { lastLogin: pastTimestamp(rng, Math.min(createdDaysAgo, 180)) } : {}),
      preferences: { language: rng.pick(['en', 'de', 'fr', 'jp']), idleTimeout: rng.pick([900, 1800, 3600]) },
    };
  });
  return { users };
}

function handlers(state: UsersState, ctx: SimContext) {
  const restrictedDomains = new Set(
    ((ctx.config as UsersConfig).restrictedEmailDomains ?? []).map((domain) => domain.toLowerCase()),
  );
  const find = (id: string): User => {
    const user = state.users.find((u) => u.id === id);
    if (!user) throw notFound('User', id);
    return user;
  };

  return {
    'users.listUsers': (req: SimRequest): SimResponse => {
      const page = listQuery.page(state.users, req);
      return { status: 200, body: { ...page, items: page.items.map(view) } };
    },

    'users.getUser': (req: SimRequest): SimResponse => ({ status: 200, body: view(find(req.params.id ?? '')) }),

    'users.inviteUser': (req: SimRequest): SimResponse => {
      const { email, sendWelcomeEmail = true } = req.body as { email?: string; sendWelcomeEmail?: boolean };
      // The published body requires nothing, but an invitation needs an address.
      if (typeof email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(email)) {
        throw badRequest('An invitation needs an e-mail address', [
          { source: 'field', subject: 'email', description: 'an e-mail address' },
        ]);
      }
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      if (restrictedDomains.has(domain))
        throw unavailableForLegalReasons(`Users of ${domain} cannot be invited for legal reasons`);
      const existing = state.users.find((u) => u.username.toLowerCase() === email.toLowerCase());
      if (existing) {
        throw conflict(
          'USER_ALREADY_INVITED',
          `'${email}' is already ${existing.userStatus === 'VERIFIED' ? 'a user' : 'invited'} in this workspace`,
        );
      }
      const nowIso = ctx.clock.nowIso();
      const id = ctx.rng.fork(`invite:${email.toLowerCase()}`).uuid();
      const user: User = {
        id,
        type: 'user',
        generation: 1,
        createdAt: nowIso,
        updatedAt: nowIso,
        username: email,
        ...namesOf(email),
        resourceUri: `/identity/v1/users/${id}`,
        userStatus: 'UNVERIFIED',
        preferences: { language: 'en', idleTimeout: 1800 },
      };
      state.users.push(user);
      if (sendWelcomeEmail) {
        ctx.sendMail({
          to: [email],
          subject: 'You are invited to a workspace',
          body: `You were invited to the workspace by ${req.clientId}. Accept the invitation to activate your account.`,
          links: [`${req.origin}/identity/v1/users/${user.id}`],
          kind: 'user-invitation',
        });
      }
      return {
        status: 201,
        headers: { Location: `/identity/v1/users/${user.id}` },
        body: { message: `User '${email}' invited` },
      };
    },

    'users.updateUserPreferences': (req: SimRequest): SimResponse => {
      const user = find(req.params.id ?? '');
      const body = req.body as Partial<User['preferences']>;
      user.preferences = { ...user.preferences, ...body };
      touch(user, ctx.clock.nowIso());
      return { status: 200, body: { message: `Preferences of '${user.username}' updated` } };
    },

    'users.deleteUser': (req: SimRequest): SimResponse => {
      const user = find(req.params.id ?? '');
      state.users.splice(state.users.indexOf(user), 1);
      return { status: 204 };
    },
  };
}

export const usersArea: AreaModule<UsersState> = {
  key: 'users',
  configSchema,
  createState,
  handlers,
  summary: (state) => ({ users: state.users.length }),
};
