/**
 * The `notifications:` section of fleetbook.yaml (and `server.url`, the address of run pages),
 * read and checked once: every mistake is a `UsageError` (exit 2) naming the file, line and
 * column and the field, before a run starts. Credentials are never written in the file: it
 * names the environment variables that hold them (`auth.userEnv`, `auth.passwordEnv`,
 * `urlEnv` for a webhook whose URL carries a token).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { didYouMean, UsageError } from '../errors/index.js';
import { parseDuration } from '../expressions/index.js';
import { NotificationEvent } from '../playbook/index.js';
import { NotificationErrorCode } from './error-codes.js';

export const ChannelType = { email: 'email', slack: 'slack', teams: 'teams', webhook: 'webhook' } as const;
export type ChannelType = (typeof ChannelType)[keyof typeof ChannelType];

interface ChannelBase {
  name: string;
  /** The channel's default rule: these events of every run. @default ['failed'] */
  on: NotificationEvent[];
}

export interface EmailChannel extends ChannelBase {
  type: 'email';
  host: string;
  /** @default 587, or 465 when `secure` */
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. @default false */
  secure: boolean;
  /** Refuse to send unless the connection is upgraded with STARTTLS. @default false */
  requireTls: boolean;
  /** Read from the variables `auth.userEnv` and `auth.passwordEnv` name. */
  auth?: { user: string; password: string };
  from: string;
  to: string[];
}

export interface WebhookChannel extends ChannelBase {
  type: 'slack' | 'teams' | 'webhook';
  url: string;
}

export type Channel = EmailChannel | WebhookChannel;

export interface RetrySettings {
  /** Tries in all, the first included. @default 5 */
  maxAttempts: number;
  /** Before the second try; doubled for each next one. @default 2000 */
  initialDelayMs: number;
  /** @default 300000 (5 minutes) */
  maxDelayMs: number;
}

export interface NotificationConfig {
  channels: ReadonlyMap<string, Channel>;
  retry: RetrySettings;
  /** `server.url`: run pages are `<url>/runs/<runId>`. */
  serverUrl?: string;
  /** Values read from the environment that no log line or message may show (passwords, webhook URLs). */
  secretValues: string[];
  /** The file read, for messages. */
  file?: string;
}

export const DEFAULT_RETRY: RetrySettings = { maxAttempts: 5, initialDelayMs: 2000, maxDelayMs: 300_000 };

/** No channel: nothing is sent (no fleetbook.yaml, or one without `notifications:`). */
export const noNotifications: NotificationConfig = { channels: new Map(), retry: DEFAULT_RETRY, secretValues: [] };

const events = Object.values(NotificationEvent) as string[];
const channelTypes = Object.values(ChannelType) as string[];

/** Reads the YAML document's values with the position of each, for located messages. */
class Located {
  constructor(
    private readonly file: string,
    private readonly lines: LineCounter,
    /** Variables named for credentials must be set (false: `fleetbook validate`, which sends nothing). */
    private readonly checkEnv: boolean,
  ) {}

  fail(node: Node | null | undefined, path: string, message: string): never {
    const offset = node?.range?.[0];
    const at = offset === undefined ? '' : `:${this.lines.linePos(offset).line}:${this.lines.linePos(offset).col}`;
    throw new UsageError(`${this.file}${at}: ${path} ${message}`, NotificationErrorCode.invalidNotifications, {
      file: this.file,
      path,
    });
  }

  /** The mapping's entries by key; `allowed` keys only (a did-you-mean for others). */
  mapping(node: unknown, path: string, allowed?: readonly string[]): Map<string, Node | null> {
    if (!isMap(node)) this.fail(node as Node, path, 'must be a mapping');
    const entries = new Map<string, Node | null>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (allowed && !allowed.includes(key))
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
    return node.value;
  }

  boolean(node: Node | null | undefined, path: string): boolean {
    if (!isScalar(node) || typeof node.value !== 'boolean') this.fail(node, path, 'must be true or false');
    return node.value;
  }

  wholeNumber(node: Node | null | undefined, path: string, min: number, max: number): number {
    if (
      !isScalar(node) ||
      typeof node.value !== 'number' ||
      !Number.isInteger(node.value) ||
      node.value < min ||
      node.value > max
    )
      this.fail(node, path, `must be a whole number from ${min} to ${max}`);
    return node.value;
  }

  duration(node: Node | null | undefined, path: string): number {
    const ms = isScalar(node) ? parseDuration(node.value) : undefined;
    if (ms === undefined) this.fail(node, path, 'must be a duration like 500ms, 2s or 5m');
    return ms;
  }

  strings(node: Node | null | undefined, path: string): string[] {
    if (isScalar(node)) return [this.string(node, path)];
    if (!isSeq(node) || node.items.length === 0) this.fail(node, path, 'must be a non-empty list of strings');
    return node.items.map((item, index) => this.string(item as Node, `${path}[${index}]`));
  }

  events(node: Node | null | undefined, path: string): NotificationEvent[] {
    if (!isSeq(node) || node.items.length === 0)
      this.fail(node, path, `must be a non-empty list of events (${events.join(', ')})`);
    return node.items.map((item, index) => {
      const value = isScalar(item) ? String(item.value) : '';
      if (!events.includes(value))
        this.fail(
          item as Node,
          `${path}[${index}]`,
          `'${value}' is not an event (${events.join(', ')}).${didYouMean(value, events)}`,
        );
      return value as NotificationEvent;
    });
  }

  /** A variable's value: the variable must be set (a channel without its credentials would fail every send). */
  fromEnv(node: Node | null | undefined, path: string, env: NodeJS.ProcessEnv): string {
    const variable = this.string(node, path);
    const value = env[variable];
    if (value === undefined || value === '') {
      if (!this.checkEnv) return `http://unset.invalid/${variable}`;
      this.fail(node, path, `names the variable ${variable}, which is not set`);
    }
    return value;
  }

  url(text: string, node: Node | null | undefined, path: string, shown: boolean): string {
    let parsed: URL | undefined;
    try {
      parsed = new URL(text);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      this.fail(
        node,
        path,
        `must be an http(s) URL${shown ? `, got '${text}'` : ' (the value is not shown: it may hold a token)'}`,
      );
    return text;
  }
}

const emailFields = ['type', 'on', 'host', 'port', 'secure', 'requireTls', 'auth', 'from', 'to'];
const webhookFields = ['type', 'on', 'url', 'urlEnv'];

function readChannel(
  read: Located,
  name: string,
  node: Node | null,
  path: string,
  env: NodeJS.ProcessEnv,
  secretValues: string[],
): Channel {
  const fields = read.mapping(node, path);
  const typeNode = fields.get('type');
  if (!typeNode) read.fail(node, path, `needs a type (${channelTypes.join(', ')})`);
  const type = read.string(typeNode, `${path}.type`);
  if (!channelTypes.includes(type))
    read.fail(
      typeNode,
      `${path}.type`,
      `'${type}' is not a channel type (${channelTypes.join(', ')}).${didYouMean(type, channelTypes)}`,
    );
  read.mapping(node, path, type === 'email' ? emailFields : webhookFields);
  const on = fields.has('on') ? read.events(fields.get('on'), `${path}.on`) : [NotificationEvent.failed];
  if (type === 'email') {
    const required = (field: string) => {
      if (!fields.has(field)) read.fail(node, path, `needs '${field}' (an e-mail channel takes host, from and to)`);
      return fields.get(field);
    };
    const host = read.string(required('host'), `${path}.host`);
    const secure = fields.has('secure') ? read.boolean(fields.get('secure'), `${path}.secure`) : false;
    const port = fields.has('port')
      ? read.wholeNumber(fields.get('port'), `${path}.port`, 1, 65_535)
      : secure
        ? 465
        : 587;
    const requireTls = fields.has('requireTls') ? read.boolean(fields.get('requireTls'), `${path}.requireTls`) : false;
    let auth: EmailChannel['auth'];
    if (fields.has('auth')) {
      const authFields = read.mapping(fields.get('auth'), `${path}.auth`, ['userEnv', 'passwordEnv']);
      if (!authFields.has('userEnv') || !authFields.has('passwordEnv'))
        read.fail(fields.get('auth'), `${path}.auth`, 'needs userEnv and passwordEnv (the variables holding them)');
      auth = {
        user: read.fromEnv(authFields.get('userEnv'), `${path}.auth.userEnv`, env),
        password: read.fromEnv(authFields.get('passwordEnv'), `${path}.auth.passwordEnv`, env),
      };
      secretValues.push(auth.password);
    }
    return {
      type,
      name,
      on,
      host,
      port,
      secure,
      requireTls,
      ...(auth ? { auth } : {}),
      from: read.string(required('from'), `${path}.from`),
      to: read.strings(required('to'), `${path}.to`),
    };
  }
  if (fields.has('url') === fields.has('urlEnv'))
    read.fail(node, path, 'needs one of url or urlEnv (the variable holding a URL that carries a token)');
  const url = fields.has('url')
    ? read.url(read.string(fields.get('url'), `${path}.url`), fields.get('url'), `${path}.url`, true)
    : read.url(
        read.fromEnv(fields.get('urlEnv'), `${path}.urlEnv`, env),
        fields.get('urlEnv'),
        `${path}.urlEnv`,
        false,
      );
  // A webhook's URL is often its credential (Slack, Teams): never shown in a log line.
  secretValues.push(url);
  return { type: type as WebhookChannel['type'], name, on, url };
}

/**
 * The notification settings of the document `text` (the contents of `file`). Checks everything;
 * reads the variables the file names from `env`.
 */
export function parseNotificationConfig(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv,
  options: { checkEnv?: boolean } = {},
): NotificationConfig {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines });
  if (document.errors.length > 0)
    throw new UsageError(`${file} is not valid YAML: ${document.errors[0]?.message ?? ''}`, 'INVALID_CONFIG');
  const read = new Located(file, lines, options.checkEnv ?? true);
  const root = document.contents;
  if (!isMap(root)) return { ...noNotifications, file };
  const top = read.mapping(root, '(the document)');
  const secretValues: string[] = [];
  let serverUrl: string | undefined;
  if (top.has('server')) {
    const server = read.mapping(top.get('server'), 'server');
    if (server.has('url'))
      serverUrl = read
        .url(read.string(server.get('url'), 'server.url'), server.get('url'), 'server.url', true)
        .replace(/\/+$/, '');
  }
  if (!top.has('notifications')) return { ...noNotifications, ...(serverUrl ? { serverUrl } : {}), file };
  const section = read.mapping(top.get('notifications'), 'notifications', ['channels', 'retry']);
  const channels = new Map<string, Channel>();
  if (section.has('channels')) {
    for (const [name, node] of read.mapping(section.get('channels'), 'notifications.channels'))
      channels.set(name, readChannel(read, name, node, `notifications.channels.${name}`, env, secretValues));
  }
  const retry = { ...DEFAULT_RETRY };
  if (section.has('retry')) {
    const fields = read.mapping(section.get('retry'), 'notifications.retry', [
      'maxAttempts',
      'initialDelay',
      'maxDelay',
    ]);
    if (fields.has('maxAttempts'))
      retry.maxAttempts = read.wholeNumber(fields.get('maxAttempts'), 'notifications.retry.maxAttempts', 1, 20);
    if (fields.has('initialDelay'))
      retry.initialDelayMs = read.duration(fields.get('initialDelay'), 'notifications.retry.initialDelay');
    if (fields.has('maxDelay'))
      retry.maxDelayMs = read.duration(fields.get('maxDelay'), 'notifications.retry.maxDelay');
  }
  return { channels, retry, ...(serverUrl ? { serverUrl } : {}), secretValues, file };
}

/**
 * The settings of `fleetbook.yaml` in `cwd`; none when there is no such file. `checkEnv: false`
 * reads the file without requiring the credential variables to be set (checking, not sending).
 */
export function loadNotificationConfig(
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: { checkEnv?: boolean } = {},
): NotificationConfig {
  const file = join(cwd, 'fleetbook.yaml');
  if (!existsSync(file)) return noNotifications;
  return parseNotificationConfig(readFileSync(file, 'utf8'), file, env, options);
}
