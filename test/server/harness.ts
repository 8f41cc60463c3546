/**
 * A `fleetbook server` for tests, in this process: a simulator on port 0 and a client of it,
 * a SQLite store in a temp folder, a playbook folder the test writes, the server on a real
 * port, and a token of each role. `api()` calls it over HTTP and checks every answer against
 * the response schema `schemas/openapi/fleetbook-api.yaml` describes for it (the conformance
 * check), and keeps every answer's text for the secret scan.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { createPlatformClient, type PlatformClient } from '../../src/api/index.js';
import { createLogger, createSecretRegistry, type Logger, type SecretRegistry } from '../../src/logging/index.js';
import {
  issueApiToken,
  readApiDocument,
  startServer,
  type RunningServer,
  type ServerOptions,
} from '../../src/server/index.js';
import { createNotifications, readNotificationConfig } from '../../src/notifications/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createSqliteRunStore, type RunStore } from '../../src/store/index.js';

const addFormats = formatsModule.default;

/** How long closing one part of the test server may take, well within vitest's hook timeout. */
const CLOSE_DEADLINE_MS = 20_000;

/** `work`, or a rejection naming the part (`what`, told when the deadline passes) that did not finish. */
async function within(what: () => string, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`closing the test server: ${what()} did not finish within ${CLOSE_DEADLINE_MS / 1000} s`)),
      CLOSE_DEADLINE_MS,
    );
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export interface TestServer {
  url: string;
  server: RunningServer;
  sim: Simulator;
  /** The simulator's client the server calls the platform with (a worker of a test may share it). */
  client: PlatformClient;
  logger: Logger;
  secrets: SecretRegistry;
  store: RunStore;
  dir: string;
  tokens: { viewer: string; operator: string; admin: string };
  clientSecret: string;
  /** Every answer's text so far. */
  answers: string[];
  logText(): string;
  /** Resolves at the first log line written from now on that contains `text`. */
  logged(text: string): Promise<void>;
  api(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: unknown }>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** The documented operation of `method path` (path with its values), or undefined. */
function operationOf(document: Json, method: string, path: string): { pointer: string; operation: Json } | undefined {
  const paths = document.paths as Record<string, Record<string, Json>>;
  const bare = path.split('?')[0] ?? path;
  for (const [template, item] of Object.entries(paths)) {
    const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`);
    const operation = item[method.toLowerCase()];
    if (pattern.test(bare) && operation)
      return {
        pointer: `#/paths/${template.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}`,
        operation,
      };
  }
  return undefined;
}

export function responseValidator() {
  const document = readApiDocument();
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(document, 'api');
  return (method: string, path: string, status: number, body: unknown): string[] => {
    const found = operationOf(document, method, path);
    if (!found) return [`${method} ${path} is not described`];
    const responses = found.operation.responses as Record<string, Json>;
    if (!responses[String(status)]) return [`${method} ${path} answered ${status}, which is not described`];
    const response = responses[String(status)] as Json;
    // A $ref'd response: its content is under components.
    const refOf = (value: Json) => (typeof value.$ref === 'string' ? value.$ref : undefined);
    const responsePointer = refOf(response) ?? `${found.pointer}/responses/${status}`;
    const schemaPointer = `api${responsePointer.replace(/^api/, '')}/content/application~1json/schema`;
    const validate = ajv.getSchema(schemaPointer);
    if (!validate) return [`no schema at ${schemaPointer}`];
    return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
  };
}

/** A fleetbook.yaml in `dir` whose one channel posts `on` of every run to the webhook `url`, read as the process host reads it. */
function webhookNotifications(
  dir: string,
  url: string,
  on: string[],
  parts: { store: RunStore; logger: Logger; secrets: SecretRegistry },
) {
  writeFileSync(
    join(dir, 'fleetbook.yaml'),
    `notifications:\n  channels:\n    audit:\n      type: webhook\n      url: ${url}\n      on: [${on.join(', ')}]\n`,
  );
  const config = readNotificationConfig({ cwd: dir, env: {}, secrets: parts.secrets });
  return createNotifications(config, parts);
}

/**
 * `options`: given to `startServer` as they are; `store`: the store to serve (a SQLite one in the
 * temp folder when absent); `webhook`: the runs' `on` events are posted to its `url`.
 */
export async function startTestServer(
  playbooks: Record<string, string>,
  {
    store: given,
    webhook,
    ...options
  }: Pick<ServerOptions, 'closeGraceMs' | 'clock' | 'waitSweepMs' | 'oidc' | 'secureCookies'> & {
    store?: RunStore;
    webhook?: { url: string; on: string[] };
  } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-server-'));
  const folder = join(dir, 'playbooks');
  mkdirSync(folder);
  for (const [name, text] of Object.entries(playbooks)) writeFileSync(join(folder, name), text);
  const sim = await startSimulator({ port: 0, timeScale: 6000 });
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
  if (!admin) throw new Error('the simulator has no sim-admin client');
  const secrets = createSecretRegistry();
  secrets.add(admin.clientSecret);
  const chunks: string[] = [];
  const watchers = new Set<(line: string) => void>();
  const logger = createLogger({
    level: 'info',
    secrets,
    destination: new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        for (const watcher of watchers) watcher(String(chunk));
        done();
      },
    }),
  });
  const client = createPlatformClient({
    credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
    authUrl: sim.authUrl,
    baseUrl: sim.baseUrl,
    regionalUrl: sim.regionalUrl,
    region: 'us-west',
    retry: { initialDelayMs: 1, maxDelayMs: 5 },
    rateLimits: { defaultPerMinute: 600_000 },
    logger,
  });
  const store = given ?? createSqliteRunStore({ file: join(dir, 'runs.sqlite') });
  const tokens = {
    viewer: (await issueApiToken(store, { name: 'wall screen', role: 'viewer' })).secret,
    operator: (await issueApiToken(store, { name: 'on-call operator', role: 'operator' })).secret,
    admin: (await issueApiToken(store, { name: 'ops lead', role: 'admin' })).secret,
  };
  const notifications = webhook && webhookNotifications(dir, webhook.url, webhook.on, { store, logger, secrets });
  const server = await startServer({
    store,
    client,
    ...(notifications ? { notifications } : {}),
    logger,
    secrets,
    playbooksDir: folder,
    env: {},
    outputsDir: join(dir, 'outputs'),
    host: '127.0.0.1',
    port: 0,
    pollMs: 50,
    ...options,
  });
  const answers: string[] = [];
  const conforms = responseValidator();
  return {
    url: server.url,
    server,
    sim,
    client,
    logger,
    secrets,
    store,
    dir,
    tokens,
    clientSecret: admin.clientSecret,
    answers,
    logText: () => chunks.join(''),
    logged: (text) =>
      new Promise<void>((resolve) => {
        const watcher = (line: string): void => {
          if (!line.includes(text)) return;
          watchers.delete(watcher);
          resolve();
        };
        watchers.add(watcher);
      }),
    async api(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const answer = await fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        redirect: 'manual',
      });
      const text = await answer.text();
      answers.push(text);
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      const problems = conforms(method, path, answer.status, body);
      if (problems.length > 0)
        throw new Error(
          `${method} ${path} ${answer.status}: the answer does not match the description: ${problems.join('; ')}\n${text.slice(0, 2000)}`,
        );
      return { status: answer.status, headers: answer.headers, body };
    },
    async close() {
      // Each part within a deadline that names it: a bare hook timeout would not say which part hung.
      await within(() => `the server (driving ${server.launcher.driving()} runs)`, server.close());
      await within(() => 'the store', store.close());
      await within(() => 'the simulator', sim.close());
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A page session of `token` (through the login form): its cookie header and the CSRF token its pages carry. */
export async function pageSession(app: FastifyInstance, token: string): Promise<{ cookie: string; csrf: string }> {
  const form = await app.inject({ method: 'GET', url: '/login' });
  const nonce = form.cookies.find((cookie) => cookie.name === 'fleetbook_login')?.value ?? '';
  const field = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const login = await app.inject({
    method: 'POST',
    url: '/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `fleetbook_login=${nonce}` },
    payload: new URLSearchParams({ token, _csrf: field }).toString(),
  });
  const session = login.cookies.find((cookie) => cookie.name === 'fleetbook_session')?.value ?? '';
  const cookie = `fleetbook_session=${session}`;
  const page = await app.inject({ method: 'GET', url: '/schedules', headers: { cookie } });
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '' };
}

/** Another `fleetbook server` on the same SQLite file, as a restarted process opens it (nothing in memory). */
export async function secondServer(t: TestServer): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const admin = t.sim.clients.find((client) => client.clientId === 'sim-admin');
  if (!admin) throw new Error('no sim-admin client');
  const secrets = createSecretRegistry();
  const logger = createLogger({ level: 'error', secrets, destination: { write: () => true } as never });
  const store = createSqliteRunStore({ file: join(t.dir, 'runs.sqlite') });
  const server = await startServer({
    store,
    client: createPlatformClient({
      credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
      authUrl: t.sim.authUrl,
      baseUrl: t.sim.baseUrl,
      regionalUrl: t.sim.regionalUrl,
      region: 'us-west',
      logger,
    }),
    logger,
    secrets,
    playbooksDir: join(t.dir, 'playbooks'),
    env: {},
    host: '127.0.0.1',
    port: 0,
  });
  return {
    app: server.app,
    close: async () => {
      await server.close();
      await store.close();
    },
  };
}
