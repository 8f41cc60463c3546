/**
 * `server.oidc` of fleetbook.yaml: the identity provider the web UI's single sign-on goes to, and
 * which of its groups give which role. Read once when the server starts: every mistake is a
 * `UsageError` (exit 2) naming the file, line, column and field. The client secret is never
 * written in the file: `clientSecretEnv` names the variable holding it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { didYouMean, UsageError } from '../errors/index.js';
import type { TokenRole } from '../store/index.js';
import { ServerErrorCode } from './error-codes.js';
import { highestRole, PLAYBOOK_PATTERN, type Grant } from './tokens.js';

/** The groups a role is given to (`*`: everyone the provider signs in), for some playbooks only when `playbooks` is set. */
export interface RoleBinding {
  role: TokenRole;
  groups: string[];
  playbooks?: string[];
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The ID token's claim listing the user's groups. @default groups */
  groupsClaim: string;
  /** Highest role first. */
  roles: RoleBinding[];
  /** `server.url`, when set: the callback address the provider sends the browser back to. */
  serverUrl?: string;
}

const OIDC_FIELDS = ['issuer', 'clientId', 'clientSecretEnv', 'groupsClaim', 'roles'];
const ROLES: readonly TokenRole[] = ['admin', 'operator', 'viewer'];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

class Reader {
  constructor(
    private readonly file: string,
    private readonly lines: LineCounter,
  ) {}

  fail(node: Node | null | undefined, path: string, message: string): never {
    const offset = node?.range?.[0];
    const at = offset === undefined ? '' : `:${this.lines.linePos(offset).line}:${this.lines.linePos(offset).col}`;
    throw new UsageError(`${this.file}${at}: ${path} ${message}`, ServerErrorCode.invalidOidcConfig, {
      file: this.file,
      path,
    });
  }

  mapping(node: unknown, path: string, allowed: readonly string[]): Map<string, Node | null> {
    if (!isMap(node)) this.fail(node as Node, path, 'must be a mapping');
    const entries = new Map<string, Node | null>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!allowed.includes(key))
        this.fail(
          pair.key as Node,
          `${path}.${key}`,
          `is not a field here (it takes ${allowed.join(', ')}).${didYouMean(key, allowed)}`,
        );
      entries.set(key, pair.value as Node | null);
    }
    return entries;
  }

  string(node: Node | null | undefined, path: string): string {
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '')
      this.fail(node, path, 'must be a non-empty string');
    return node.value.trim();
  }

  strings(node: Node | null | undefined, path: string): string[] {
    if (!isSeq(node) || node.items.length === 0) this.fail(node, path, 'must be a non-empty list of group names');
    return node.items.map((item, index) => this.string(item as Node, `${path}[${index}]`));
  }
}

/** The issuer: https, or http on this machine only (a provider started beside the server, in tests). */
function readIssuer(read: Reader, node: Node | null | undefined): string {
  const text = read.string(node, 'server.oidc.issuer');
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const local = url?.protocol === 'http:' && LOOPBACK.has(url.hostname);
  if (!url || (url.protocol !== 'https:' && !local))
    read.fail(node, 'server.oidc.issuer', `must be an https URL (http only on 127.0.0.1 or localhost), got '${text}'`);
  return text.replace(/\/+$/, '');
}

function readRoles(read: Reader, node: Node | null | undefined): RoleBinding[] {
  const entries = read.mapping(node, 'server.oidc.roles', ROLES);
  if (entries.size === 0) read.fail(node, 'server.oidc.roles', 'must give at least one role to some groups');
  return ROLES.filter((role) => entries.has(role)).map((role) => readBinding(read, role, entries.get(role)));
}

/** `operator: [groups...]`, or `operator: { groups: [...], playbooks: [patterns...] }`. */
function readBinding(read: Reader, role: TokenRole, node: Node | null | undefined): RoleBinding {
  const path = `server.oidc.roles.${role}`;
  if (!isMap(node)) return { role, groups: read.strings(node, path) };
  const fields = read.mapping(node, path, ['groups', 'playbooks']);
  if (!fields.has('groups')) read.fail(node, `${path}.groups`, 'is missing');
  const binding: RoleBinding = { role, groups: read.strings(fields.get('groups'), `${path}.groups`) };
  if (fields.has('playbooks')) {
    const list = fields.get('playbooks');
    binding.playbooks = read.strings(list, `${path}.playbooks`);
    binding.playbooks.forEach((pattern, index) => {
      if (!PLAYBOOK_PATTERN.test(pattern))
        read.fail(
          isSeq(list) ? (list.items[index] as Node) : list,
          `${path}.playbooks[${index}]`,
          `'${pattern}' is not a playbook name pattern (letters, digits, '.', '_', '-', '*' for any text)`,
        );
    });
  }
  return binding;
}

/** The `server.oidc` section of the document `text` (the contents of `file`), or undefined when there is none. */
export function parseOidcConfig(text: string, file: string, env: NodeJS.ProcessEnv): OidcSettings | undefined {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines });
  const read = new Reader(file, lines);
  const broken = document.errors[0];
  if (broken) read.fail(undefined, '(the document)', `is not valid YAML: ${broken.message}`);
  if (!isMap(document.contents)) return undefined;
  const server = document.contents.get('server', true) as Node | undefined;
  if (!isMap(server) || !server.has('oidc')) return undefined;
  const url = server.get('url');
  const fields = read.mapping(server.get('oidc', true), 'server.oidc', OIDC_FIELDS);
  for (const required of ['issuer', 'clientId', 'clientSecretEnv', 'roles'])
    if (!fields.has(required)) read.fail(server.get('oidc', true) as Node, `server.oidc.${required}`, 'is missing');
  const secretNode = fields.get('clientSecretEnv');
  const variable = read.string(secretNode, 'server.oidc.clientSecretEnv');
  const clientSecret = env[variable] ?? '';
  if (clientSecret === '')
    read.fail(secretNode, 'server.oidc.clientSecretEnv', `names the variable ${variable}, which is not set`);
  return {
    issuer: readIssuer(read, fields.get('issuer')),
    clientId: read.string(fields.get('clientId'), 'server.oidc.clientId'),
    clientSecret,
    groupsClaim: fields.has('groupsClaim')
      ? read.string(fields.get('groupsClaim'), 'server.oidc.groupsClaim')
      : 'groups',
    roles: readRoles(read, fields.get('roles')),
    ...(typeof url === 'string' && url !== '' ? { serverUrl: url.replace(/\/+$/, '') } : {}),
  };
}

/** `server.oidc` of `<cwd>/fleetbook.yaml`; undefined without the file or the section. */
export function loadOidcConfig(cwd: string, env: NodeJS.ProcessEnv): OidcSettings | undefined {
  const file = join(cwd, 'fleetbook.yaml');
  return existsSync(file) ? parseOidcConfig(readFileSync(file, 'utf8'), file, env) : undefined;
}

/**
 * The roles the user's groups give: the highest one any of them is bound to, and every binding
 * they match as a grant when one of those is limited to some playbooks; undefined when no group
 * is bound.
 */
export function roleOfGroups(
  settings: OidcSettings,
  groups: readonly string[],
): { role: TokenRole; grants?: Grant[] } | undefined {
  const matched = settings.roles.filter((binding) =>
    binding.groups.some((group) => group === '*' || groups.includes(group)),
  );
  if (matched.length === 0) return undefined;
  const grants = matched.map(({ role, playbooks }) => ({ role, ...(playbooks ? { playbooks } : {}) }));
  const role = highestRole({ name: '', role: 'viewer', grants });
  return grants.some((grant) => grant.playbooks) ? { role, grants } : { role };
}
