import { setTimeout as sleep } from 'node:timers/promises';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { inputSchemaOf, loadPlatformDescription, type OperationDescriptor } from '../openapi/index.js';
import { areaModules } from './areas/index.js';
import { createAsyncViews } from './async-views.js';
import { createAuth, ROLE_LEVELS, type Auth } from './auth.js';
import { createSimClock } from './clock.js';
import type { AreaModule, OperationHandler, SimClock, SimRequest, SimResponse } from './context.js';
import { registerControlRoutes, type ResponseViolation, type SimulatorControl } from './control.js';
import { errorBodyFormOf, MalformedBody, refuseMalformedBody, SimHttpError, type ErrorBodyForm } from './errors.js';
import { createFaults, loadFaultSettings, type FaultSettings } from './faults.js';
import { checkInput, inputOf } from './input-validation.js';
import { createRateLimits } from './rate-limits.js';
import { createRequestLog, type RequestLogEntry } from './request-log.js';
import { responseProblems } from './response-check.js';
import { createSchemaValidator } from './schema-validator.js';
import { buildWorld, type World } from './world.js';
import { loadWorldFile, type ApiClient } from './world-file.js';
import { deprecationHeadersFor } from './deprecation.js';
import { withoutSecretKeys } from '../logging/index.js';

export interface SimulatorOptions {
  /** 0 picks a free port. @default 0 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Seed of the generated world. @default the world file's seed, else 1 */
  seed?: number;
  /** World file: YAML path or the parsed object. @default the default world */
  world?: string | object;
  /** Simulated milliseconds per real millisecond. @default 1 */
  timeScale?: number;
  /** Fault settings: YAML/JSON path or object. @default none */
  faults?: string | FaultSettings;
  /** Validate every JSON response against the description (500 `SIMULATOR_RESPONSE_INVALID` on drift). @default false */
  validateResponses?: boolean;
  /** Multiplies every published per-minute rate limit. @default the world file's `rateLimitScale`, else 1 */
  rateLimitScale?: number;
  /** Per-minute limits by rate-limit group, overriding the published ones and the world file's. @default the world file's `rateLimits` */
  rateLimits?: Record<string, number>;
  /** Lifetime of issued tokens, in wall-clock seconds (plus `/_sim/clock` advances). @default the world file's `tokenLifetimeSeconds`, else 7199 */
  tokenLifetimeSeconds?: number;
  /** Fastify's own request logging. @default false */
  logger?: boolean;
}

export interface Simulator {
  /** Origin, e.g. `http://127.0.0.1:43121`. */
  url: string;
  baseUrl: string;
  authUrl: string;
  /** Regional base address with a `{region}` placeholder. */
  regionalUrl: string;
  port: number;
  clients: ApiClient[];
  control: SimulatorControl;
  close(): Promise<void>;
}

export const DEFAULT_CLIENTS: readonly ApiClient[] = [
  { clientId: 'sim-admin', clientSecret: 'sim-admin-secret', role: 'Administrator' },
  { clientId: 'sim-operator', clientSecret: 'sim-operator-secret', role: 'Operator' },
  { clientId: 'sim-observer', clientSecret: 'sim-observer-secret', role: 'Observer' },
];

/** Header naming the region when the path has no `/regions/<region>` prefix. */
export const REGION_HEADER = 'x-fleetbook-region';

function mergeClients(extra: readonly ApiClient[]): ApiClient[] {
  const byId = new Map(DEFAULT_CLIENTS.map((client) => [client.clientId, client]));
  for (const client of extra) byId.set(client.clientId, client);
  return [...byId.values()];
}

/** `{id}` templates as fastify `:id` parameters. */
const routePath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

function withoutQuery(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? url : url.slice(0, at);
}

/** The error body the operation's description documents for this status; an undocumented status is judged by the 500 answer. */
function documentedErrorForm(op: OperationDescriptor, status: number): ErrorBodyForm {
  return errorBodyFormOf((op.responses[String(status)] ?? op.responses['500'])?.schema);
}

/**
 * An error as answered, in the documented form. Where that form has no place for a
 * retry-info detail's delay, a `Retry-After` header says it (whole seconds, as HTTP writes
 * it), so clients still learn how long to wait.
 */
function errorResponse(error: SimHttpError, form: ErrorBodyForm, headers: Record<string, string> = {}): SimResponse {
  const retryAfter = error.retryAfterSeconds();
  const retryHeader: Record<string, string> = form.details !== 'retry' && retryAfter !== undefined ? { 'retry-after': String(Math.round(retryAfter)) } : {};
  return { status: error.status, body: error.toBody(form), headers: { ...headers, ...retryHeader, ...error.headers } };
}

function serverError(error: unknown): SimHttpError {
  return new SimHttpError(500, 'INTERNAL_SERVER_ERROR', `Simulator error: ${error instanceof Error ? error.message : String(error)}`, [
    { type: 'retry info', retryAfterSeconds: 30 },
  ]);
}

/**
 * An injected fault's answer. Its retry hint (30 s for 5xx, 1 s for 429) is simulated time
 * like every other duration of the simulated platform, so at a time scale of 6000 a client
 * that honours it waits 5 ms, not 30 real seconds per fault.
 */
function injectedStatus(status: number, timeScale: number): SimHttpError {
  const retryable = status === 429 || status >= 500;
  return new SimHttpError(
    status,
    status >= 500 ? 'SERVICE_UNAVAILABLE' : 'INJECTED_FAULT',
    `Injected fault: this request was answered ${status} by the simulator's fault settings`,
    retryable ? [{ type: 'retry info', retryAfterSeconds: (status >= 500 ? 30 : 1) / timeScale }] : undefined,
  );
}

/** Fastify-level failures (unsupported content type, body too large) as platform errors; bad JSON is `MalformedBody`. */
function frameworkError(error: { statusCode?: number; message: string }): SimHttpError {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  return status === 500 ? serverError(error) : new SimHttpError(status, status === 400 ? 'BAD_REQUEST' : 'INVALID_REQUEST', error.message);
}

/** Keeps what was sent in the log (secret keys scrubbed) so tests can prove a request's body; a body that is not JSON is not kept. */
function recordBody(entry: RequestLogEntry, body: unknown): void {
  if (body !== undefined && body !== null && !(body instanceof MalformedBody)) entry.body = withoutSecretKeys(body);
}

/**
 * Starts the platform simulator: one origin serving the token endpoint, every global and
 * regional operation of the description, and the `/_sim/` control surface.
 * See ARCHITECTURE.md for the request pipeline.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const description = loadPlatformDescription();
  const areas: readonly AreaModule[] = areaModules;
  const rateLimitGroups = [...new Set(description.operations.flatMap((op) => (op.rateLimit ? [op.rateLimit.group] : [])))];
  const worldFile = options.world === undefined ? {} : loadWorldFile(options.world, areas, rateLimitGroups);
  const seed = options.seed ?? worldFile.seed ?? 1;
  const clients = mergeClients(worldFile.clients ?? []);
  const clock: SimClock = createSimClock({ timeScale: options.timeScale ?? 1 });
  // Workspace API credentials live in the world, which is built below (and rebuilt on reset).
  const auth: Auth = createAuth(clients, clock, options.tokenLifetimeSeconds ?? worldFile.tokenLifetimeSeconds ?? 7199, (clientId) =>
    world.apiClientOf(clientId),
  );
  const faults = createFaults(seed, () => auth.revokeAll());
  if (options.faults !== undefined) faults.set(loadFaultSettings(options.faults));
  const rateLimits = createRateLimits({
    scale: options.rateLimitScale ?? worldFile.rateLimitScale ?? 1,
    overrides: { ...worldFile.rateLimits, ...options.rateLimits },
  });
  const requestLog = createRequestLog();
  const violations: ResponseViolation[] = [];
  const validator = createSchemaValidator();
  const validateResponses = options.validateResponses ?? false;

  const makeWorld = (): World => buildWorld(areas, { seed, clock, faults, sections: worldFile });
  let world = makeWorld();
  const asyncViews = createAsyncViews(() => world.services.asyncOps, clock);
  const handlerOf = (operationId: string): OperationHandler | undefined => asyncViews[operationId] ?? world.handlers.get(operationId);

  const inputValidators = new Map<string, ValidateFunction>();
  const inputValidatorOf = (op: OperationDescriptor): ValidateFunction => {
    let validate = inputValidators.get(op.id);
    if (!validate) inputValidators.set(op.id, (validate = validator.compile(inputSchemaOf(op))));
    return validate;
  };
  const responseValidators = new Map<string, ValidateFunction | null>();
  const responseValidatorOf = (op: OperationDescriptor, status: number): ValidateFunction | null => {
    const key = `${op.id} ${status}`;
    let validate = responseValidators.get(key);
    if (validate === undefined) {
      const schema = (op.responses[String(status)] ?? op.responses.default)?.schema;
      validate = schema ? validator.compile(schema as object) : null;
      responseValidators.set(key, validate);
    }
    return validate;
  };

  const app = Fastify({ logger: options.logger ?? false, routerOptions: { maxParamLength: 1000 }, bodyLimit: 10 * 1024 * 1024 });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  // A body that is not JSON is not refused here: it goes through the pipeline like any request
  // (logged, faults, auth first, deprecation and rate-limit headers) and is refused as 400 at
  // the input check (`refuseMalformedBody`).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const tolerantJsonParser = (request: FastifyRequest, body: string, done: (error: Error | null, parsed?: unknown) => void): void => {
    void parseJson(request, body, (error: Error | null, parsed?: unknown) => done(null, error ? new MalformedBody(body, error) : parsed));
  };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, tolerantJsonParser);
  app.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'string' }, tolerantJsonParser);

  /**
   * `injected`: the answer is a fault the fault settings asked for (503, 502, ...). Those are
   * statuses a real platform gives whatever its description says (a proxy's 503, a 429 from
   * a gateway), so they are not the simulator drifting from the description and are not checked.
   */
  function send(reply: FastifyReply, op: OperationDescriptor | undefined, response: SimResponse, path: string, injected = false): void {
    let { status, body, stream } = response;
    if (validateResponses && op && !injected) {
      const problems = responseProblems(op, response, (answered) => responseValidatorOf(op, answered));
      if (problems.length > 0) {
        violations.push({ operationId: op.id, method: reply.request.method, path, status, problems });
        status = 500;
        stream?.destroy();
        stream = undefined;
        body = new SimHttpError(
          500,
          'SIMULATOR_RESPONSE_INVALID',
          `The simulator's ${response.status} answer to ${op.id} does not match the description: ${problems.join('; ')}`,
        ).toBody();
      }
    }
    reply.code(status);
    if (response.headers) reply.headers(response.headers);
    if (stream) void reply.send(stream);
    else if (body === undefined) void reply.send();
    else void reply.type('application/json').send(body);
  }

  function drop(reply: FastifyReply): void {
    reply.hijack();
    reply.request.raw.socket.destroy();
  }

  function regionOf(op: OperationDescriptor, request: FastifyRequest, fromPath: string | undefined): string {
    const header = request.headers[REGION_HEADER];
    const region = fromPath ?? (typeof header === 'string' ? header : undefined);
    if (region === undefined || region === '') return '';
    const valid = op.regions ?? [];
    if (!valid.includes(region)) {
      throw new SimHttpError(404, 'UNKNOWN_REGION', `Region '${region}' is not served by ${op.area}; valid regions: ${valid.join(', ')}`);
    }
    return region;
  }

  async function serve(op: OperationDescriptor, request: FastifyRequest, reply: FastifyReply, regionFromPath: string | undefined): Promise<void> {
    const startedReal = performance.now();
    const path = withoutQuery(request.url);
    const entry: RequestLogEntry = {
      method: request.method,
      path,
      operationId: op.id,
      status: 0,
      time: new Date().toISOString(),
      simTime: clock.nowIso(),
      durationMs: 0,
    };
    recordBody(entry, request.body);
    requestLog.add(entry);
    // A deprecated operation says so on every answer, a refusal included.
    const extraHeaders: Record<string, string> = op.deprecated ? deprecationHeadersFor(path) : {};
    let injected = false;
    try {
      const fault = faults.decide(op.id);
      if (fault.latencyMs > 0) await sleep(fault.latencyMs);
      if (fault.drop === 'before') {
        entry.dropped = 'before';
        drop(reply);
        return;
      }
      if (fault.status !== undefined) {
        injected = true;
        throw injectedStatus(fault.status, clock.timeScale);
      }
      const params = { ...(request.params as Record<string, string>) };
      delete params.region;
      const query = request.query as Record<string, string | string[]>;
      const region = op.base === 'regional' ? regionOf(op, request, regionFromPath) : '';
      if (region) entry.region = region;

      let clientId: string;
      let response: SimResponse;
      if (op.base === 'auth') {
        const form = (request.body ?? {}) as Record<string, unknown>;
        clientId = typeof form.client_id === 'string' ? form.client_id : '';
        entry.clientId = clientId;
        applyRateLimit(op, clientId, extraHeaders);
        refuseMalformedBody(request.body);
        checkInput(op, inputValidatorOf(op), inputOf(op, params, query, request.body));
        response = { status: 200, body: auth.issue(form), headers: { 'cache-control': 'no-store' } };
      } else {
        if (faults.revocationDue()) auth.revokeAll();
        const client = auth.authenticate(request.headers.authorization);
        clientId = client.clientId;
        entry.clientId = clientId;
        const level = op.permission?.level;
        if (level && !ROLE_LEVELS[client.role].includes(level)) {
          throw new SimHttpError(
            403,
            'FORBIDDEN',
            `Client '${clientId}' (role ${client.role}) lacks the ${level} level of ${op.permission?.permission ?? 'the permission'} that ${op.id} needs`,
          );
        }
        applyRateLimit(op, clientId, extraHeaders);
        refuseMalformedBody(request.body);
        checkInput(op, inputValidatorOf(op), inputOf(op, params, query, request.body));
        const handler = handlerOf(op.id);
        if (!handler) throw new SimHttpError(501, 'NOT_IMPLEMENTED', `The simulator has no handler for ${op.id} yet`);
        world.services.asyncOps.settle();
        const simRequest: SimRequest = {
          operationId: op.id,
          method: request.method,
          params,
          query,
          body: request.body,
          headers: request.headers as Record<string, string | undefined>,
          region,
          clientId,
          clientRole: client.role,
          origin: `${request.protocol}://${request.headers.host ?? request.hostname}`,
          ...(op.paging ? { paging: op.paging } : {}),
        };
        response = await handler(simRequest);
      }
      if (fault.drop === 'after') {
        entry.status = response.status;
        entry.dropped = 'after';
        drop(reply);
        return;
      }
      send(reply, op, { ...response, headers: { ...extraHeaders, ...response.headers } }, path);
    } catch (error) {
      const simError = error instanceof SimHttpError ? error : serverError(error);
      send(reply, op, errorResponse(simError, documentedErrorForm(op, simError.status), extraHeaders), path, injected);
    } finally {
      if (!entry.dropped) entry.status = reply.statusCode;
      entry.durationMs = Math.round((performance.now() - startedReal) * 100) / 100;
    }
  }

  function applyRateLimit(op: OperationDescriptor, clientId: string, headers: Record<string, string>): void {
    const group = op.rateLimit?.group;
    if (group === undefined) return;
    const limit = rateLimits.limitOf(group, op.rateLimit?.perMinute);
    if (limit === undefined) return;
    Object.assign(headers, rateLimits.take(clientId, group, limit).headers);
  }

  // Handlers resolve to the reply itself: an async handler resolving to undefined lets
  // fastify finish the response before a streamed body (CSV, report download) is sent.
  for (const op of description.operations) {
    const method = op.method.toUpperCase() as 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    app.route({
      method,
      url: routePath(op.path),
      handler: async (request, reply) => {
        await serve(op, request, reply, undefined);
        return reply;
      },
    });
    if (op.base === 'regional') {
      app.route({
        method,
        url: `/regions/:region${routePath(op.path)}`,
        handler: async (request, reply) => {
          await serve(op, request, reply, (request.params as { region: string }).region);
          return reply;
        },
      });
    }
  }

  // Extra routes keep their paths across resets; each request uses the current world's handler.
  for (const route of world.extraRoutes.values()) {
    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => {
        const path = withoutQuery(request.url);
        const entry: RequestLogEntry = { method: request.method, path, operationId: route.name, status: 0, time: new Date().toISOString(), simTime: clock.nowIso(), durationMs: 0 };
        recordBody(entry, request.body);
        requestLog.add(entry);
        const startedReal = performance.now();
        try {
          refuseMalformedBody(request.body);
          world.services.asyncOps.settle();
          const current = world.extraRoutes.get(route.name);
          if (!current) throw new SimHttpError(404, 'NOT_FOUND', `No route at ${path}`);
          const response = await current.handler({
            operationId: route.name,
            method: request.method,
            params: request.params as Record<string, string>,
            query: request.query as Record<string, string | string[]>,
            body: request.body,
            headers: request.headers as Record<string, string | undefined>,
            region: '',
            clientId: '',
            origin: `${request.protocol}://${request.headers.host ?? request.hostname}`,
          });
          send(reply, undefined, response, path);
        } catch (error) {
          const simError = error instanceof SimHttpError ? error : serverError(error);
          send(reply, undefined, { status: simError.status, body: simError.toBody(), headers: simError.headers }, path);
        } finally {
          entry.status = reply.statusCode;
          entry.durationMs = Math.round((performance.now() - startedReal) * 100) / 100;
        }
        return reply;
      },
    });
  }

  const control: SimulatorControl = {
    requests: (filter) => requestLog.list(filter),
    clearRequests: () => requestLog.clear(),
    outbox: () => world.services.outbox.messages,
    faults: { get: () => faults.current(), set: (settings) => faults.set(loadFaultSettings(settings)) },
    clock,
    reset() {
      world = makeWorld();
    },
    world: () => ({ seed, timeScale: clock.timeScale, areas: world.summary() }),
    violations: () => violations,
    checksResponses: () => validateResponses,
    revokeTokens: () => {
      auth.revokeAll();
    },
  };
  registerControlRoutes(app, control);

  app.setNotFoundHandler((request, reply) => {
    const path = withoutQuery(request.url);
    requestLog.add({ method: request.method, path, operationId: '', status: 404, time: new Date().toISOString(), simTime: clock.nowIso(), durationMs: 0 });
    const error = new SimHttpError(404, 'NOT_FOUND', `No operation at ${request.method} ${path}`);
    void reply.code(404).type('application/json').send(error.toBody());
  });
  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    const simError = error instanceof SimHttpError ? error : frameworkError(error);
    void reply.code(simError.status).headers(simError.headers).type('application/json').send(simError.toBody());
  });

  const host = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  return {
    url,
    baseUrl: url,
    authUrl: url,
    regionalUrl: `${url}/regions/{region}`,
    port,
    clients,
    control,
    close: () => app.close(),
  };
}
