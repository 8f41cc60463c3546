/**
 * The fastify application of `fleetbook server`: `/healthz`, the API under `/api/v1` (routes,
 * request schemas and roles from `schemas/openapi/fleetbook-api.yaml`), the run event stream,
 * `/metrics` and the web UI. Everything but `/healthz` needs a token: a bearer token for the
 * API and metrics, a session cookie made from a token for the pages.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { isFleetbookError } from '../errors/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import {
  buildStepTree,
  type ApiToken,
  type AuditActor,
  type RunRecord,
  type RunStatus,
  type RunStore,
  type TokenRole,
} from '../store/index.js';
import { apiRoute } from './api-document.js';
import { pendingApprovals } from './approvals-inbox.js';
import type { ServerMetrics } from './metrics.js';
import { streamRunEvents } from './run-events.js';
import { highestRole, playbookRoleRefusal, roleAllows, roleFor, verifyApiToken } from './tokens.js';
import { registerUi, type UiOptions } from './ui/pages.js';
import { createScrub, logLines, playbookView, problemView, runView, scheduleViews, type Scrub } from './views.js';
import { pauseSchedule, resumeSchedule, triggerSchedule } from './schedule-actions.js';
import { HttpError } from './app-error.js';
import { findRunFile, sendRunFile } from './run-files.js';
import { ServerErrorCode } from './error-codes.js';
import { Door, rerunRequest, type Caller } from '../admission/index.js';

interface RerunBody {
  failed?: boolean;
  secretInputs?: Record<string, string>;
  ignoreWindow?: { reason: string };
}

export { HttpError };

/** The parts the API and the web UI share, the secrets to scrub, and the web UI's session lifetime. */
export interface ServerAppOptions extends Omit<UiOptions, 'scrub' | 'sessionTtlMs'> {
  secrets: SecretRegistry;
  /** Session lifetime of the web UI. @default 12 h */
  sessionTtlMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: ApiToken;
  }
  interface FastifyContextConfig {
    /** The role a route needs; none: open (`/healthz`) or checked by the route itself (pages). */
    role?: TokenRole;
    /** The route acts on a run of one playbook: a role held for some playbooks lets it through to its handler's own check. */
    playbookScoped?: boolean;
  }
}

/** Refusals of the engine and store (exit 2 in the CLI) that are not the request's shape: their HTTP status. */
const STATUS_OF_REFUSAL: Record<string, number> = {
  OUTSIDE_WINDOW: 409,
  ROLE_FORBIDDEN: 403,
  SCHEDULE_BUSY: 409,
  LOCK_HELD: 409,
  RUN_ACTIVE: 409,
  RUN_NOT_WAITING: 409,
  APPROVAL_ALREADY_DECIDED: 409,
  APPROVAL_TIMED_OUT: 409,
  NOT_THE_WAITING_GATE: 409,
  NOT_AN_APPROVER: 403,
  APPROVER_IS_REQUESTER: 403,
  ALREADY_APPROVED: 409,
  RUN_NOT_FOUND: 404,
  RUN_STILL_RUNNING: 409,
  NOTHING_FAILED: 409,
  RETRY_IN_FLIGHT: 409,
  PLAYBOOK_CHANGED: 409,
};

/** The operations acting on a run of one playbook: the role they need is checked for that playbook. */
const PLAYBOOK_SCOPED = new Set(['startRun', 'resumeRun', 'approveRun', 'denyRun', 'cancelRun', 'triggerSchedule']);

/** Refuses (403) a caller whose role for `playbook` is below `needed`. */
function requirePlaybookRole(request: FastifyRequest, playbook: string, needed: TokenRole): void {
  const refusal = request.caller && playbookRoleRefusal(request.caller, playbook, needed);
  if (refusal) throw new HttpError(403, ServerErrorCode.forbidden, refusal);
}

const notFound = (what: string): HttpError => new HttpError(404, ServerErrorCode.notFound, `${what} not found`);

export async function findRun(store: RunStore, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run) throw notFound(`run ${runId}`);
  return run;
}

/** The bearer token of `request`, checked; undefined when there is none or it is not valid. */
async function bearerCaller(store: RunStore, request: FastifyRequest): Promise<ApiToken | undefined> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] === undefined ? undefined : verifyApiToken(store, match[1]);
}

export async function createServerApp(options: ServerAppOptions): Promise<FastifyInstance> {
  const scrub: Scrub = createScrub(options.secrets);
  const app = Fastify({
    logger: false,
    // An unknown body field is refused (400 naming it), never silently dropped.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
  });
  answerErrors(app, options.logger, scrub);
  checkRoles(app, options.store, options.metrics);
  const context: RouteContext = { ...options, scrub, route: routeOf(app) };
  registerRunReads(context);
  registerRunActions(context);
  registerDecisions(context);
  registerRerunRoute(context);
  registerCatalogRoutes(app, context);
  registerRunFiles(app, context);
  await registerUi(app, { ...options, scrub, sessionTtlMs: options.sessionTtlMs ?? 12 * 3600_000 });
  return app;
}

/** What the API's route groups share: the server's parts, the scrubber, and `route` (a described operation). */
interface RouteContext extends ServerAppOptions {
  scrub: Scrub;
  route: (operationId: string, handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) => void;
}

const callerName = (request: FastifyRequest): string => request.caller?.name ?? 'unknown';

// The route's role was checked before the handler; admission checks what the request asks of it.
const apiCaller = (request: FastifyRequest, door: Door): Caller => {
  const principal = request.caller;
  return {
    name: callerName(request),
    role: principal ? roleFor(principal) : 'viewer',
    door,
    address: request.ip,
    ...(principal ? { roleFor: (playbook: string) => roleFor(principal, playbook) } : {}),
  };
};

/** The audit log's actor of an API request: its token, role and address. */
const apiActor = (request: FastifyRequest): AuditActor => ({
  kind: 'token',
  name: callerName(request),
  role: request.caller?.role ?? 'viewer',
  ...(request.caller ? { tokenId: request.caller.id } : {}),
  address: request.ip,
});

/** Every error as the API's answer: `{ error: { code, message, field? } }` with its status; a stack trace only in the log. */
function answerErrors(app: FastifyInstance, logger: Logger, scrub: Scrub): void {
  app.setErrorHandler((error: unknown, request, reply) => {
    const answer = (status: number, code: string, message: string, field?: string) =>
      reply.status(status).send({ error: { code, message, ...(field === undefined ? {} : { field }) } });
    if (error instanceof HttpError) return answer(error.statusCode, error.code, error.message, error.field);
    const validation = (error as { validation?: Array<{ instancePath: string; params: Record<string, unknown> }> })
      .validation;
    if (validation) {
      const first = validation[0];
      const context = (error as { validationContext?: string }).validationContext ?? 'request';
      const missing = first?.params.missingProperty;
      const extra = first?.params.additionalProperty;
      const path = `${context}${first?.instancePath ?? ''}${typeof missing === 'string' ? `/${missing}` : ''}${typeof extra === 'string' ? `/${extra}` : ''}`;
      return answer(
        400,
        ServerErrorCode.invalidRequest,
        `${path}: ${(error as Error).message.replace(/^[^ ]+ /, '')}`,
        path,
      );
    }
    if (isFleetbookError(error)) {
      // An input refused by its declared type is located in the body, as a field of the schema is.
      const input = typeof error.details?.input === 'string' ? `body/inputs/${error.details.input}` : undefined;
      const field = typeof error.details?.field === 'string' ? error.details.field : input;
      const status = error.exitCode === 2 ? (STATUS_OF_REFUSAL[error.code] ?? 400) : 409;
      return answer(status, error.code ?? ServerErrorCode.refused, scrub(error.message), field);
    }
    const statusCode = (error as { statusCode?: number }).statusCode;
    if (statusCode !== undefined && statusCode < 500)
      return answer(statusCode, ServerErrorCode.badRequest, scrub((error as Error).message));
    logger.error({ event: 'server.error', err: error, url: request.url }, 'server: internal error');
    return answer(500, ServerErrorCode.internal, 'internal error; see the server log');
  });
}

/** Roles: a route's `config.role`, checked before its handler (401/403 as JSON); each answer counted. */
function checkRoles(app: FastifyInstance, store: RunStore, metrics: ServerMetrics): void {
  // Roles: a route's `config.role`. The API answers 401/403 as JSON; the pages have their own check.
  app.addHook('onRequest', async (request, reply) => {
    const role = request.routeOptions.config.role;
    if (role === undefined) return;
    const caller = await bearerCaller(store, request);
    if (!caller) {
      await reply
        .status(401)
        .header('www-authenticate', 'Bearer')
        .send({
          error: {
            code: ServerErrorCode.unauthorized,
            message: 'a valid token is needed: Authorization: Bearer <token>',
          },
        });
      return reply;
    }
    const held = request.routeOptions.config.playbookScoped ? highestRole(caller) : roleFor(caller);
    if (!roleAllows(held, role)) {
      await reply.status(403).send({
        error: {
          code: ServerErrorCode.forbidden,
          message: `this needs the ${role} role; the token '${caller.name}' is ${held}`,
        },
      });
      return reply;
    }
    request.caller = caller;
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode);
  });
}

/** Registers the described operation `operationId` (its method, URL, request schemas and role) with `handler`. */
function routeOf(app: FastifyInstance): RouteContext['route'] {
  return (operationId, handler) => {
    const described = apiRoute(operationId);
    app.route({
      method: described.method,
      url: described.url,
      schema: described.schema,
      config: {
        ...(described.role === undefined ? {} : { role: described.role }),
        ...(PLAYBOOK_SCOPED.has(operationId) ? { playbookScoped: true } : {}),
      },
      // A body the description makes optional is validated as `{}` when left out.
      ...(described.optionalBody
        ? {
            preValidation: async (request: FastifyRequest) => {
              request.body ??= {};
            },
          }
        : {}),
      handler,
    });
  };
}

/** Reading runs: the list, one run, its journal, its log lines, its event stream. */
function registerRunReads(context: RouteContext): void {
  const { store, hub, metrics, scrub, route } = context;
  route('health', async () => ({ status: 'ok' }));

  route('listApprovals', async (request) => {
    const caller = request.caller;
    return { approvals: caller ? scrub(await pendingApprovals(store, caller)) : [] };
  });

  route('listRuns', async (request) => {
    const query = request.query as {
      status?: RunStatus;
      playbook?: string;
      since?: string;
      idPrefix?: string;
      limit: number;
      cursor?: string;
    };
    const { until, skip } = parseCursor(query.cursor);
    const page = await store.listRuns({
      limit: query.limit + skip + 1,
      ...(query.status ? { status: query.status } : {}),
      ...(query.playbook ? { playbook: query.playbook } : {}),
      ...(query.since ? { since: query.since } : {}),
      ...(query.idPrefix ? { idPrefix: query.idPrefix } : {}),
      ...(until ? { until } : {}),
    });
    const runs = page.slice(skip, skip + query.limit);
    const last = runs.at(-1);
    const more = page.length > skip + query.limit;
    return {
      runs: runs.map((run) => scrub(runView(run))),
      ...(more && last ? { nextCursor: makeCursor(last.startedAt, runs, skip, until) } : {}),
    };
  });

  route('getRun', async (request) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    return { run: scrub(runView(run)), steps: scrub(buildStepTree(await store.steps(run.id))) };
  });

  route('getRunJournal', async (request) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    const { afterSeq } = request.query as { afterSeq: number };
    return { entries: scrub(await store.journal(run.id, afterSeq)) };
  });

  route('getRunLogs', async (request) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    return { lines: scrub(logLines(await store.journal(run.id))) };
  });

  route('streamRunEvents', async (request, reply) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    const lastEventId = (request.headers as Record<string, string | undefined>)['last-event-id'];
    await streamRunEvents(reply, { hub, scrub, metrics }, run.id, lastEventId === undefined ? 0 : Number(lastEventId));
  });
}

/** "Run again" and "retry failed" of a run (`fleetbook rerun` through the API, door `api.rerun`). */
function registerRerunRoute(context: RouteContext): void {
  const { store, catalog, launcher, metrics, scrub, route } = context;
  route('rerunRun', async (request, reply) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    const playbook = await catalog.find(run.playbook);
    if (!playbook)
      throw new HttpError(409, ServerErrorCode.playbookGone, `the playbook ${run.playbook} is no longer in the folder`);
    const body = (request.body ?? {}) as RerunBody;
    const asked = await rerunRequest(store, run, playbook, {
      failed: body.failed === true,
      secretInputs: body.secretInputs ?? {},
      ...(body.ignoreWindow ? { ignoreWindow: body.ignoreWindow } : {}),
    });
    const { run: started } = await launcher.start(asked, apiCaller(request, Door.apiRerun));
    if (!started) throw new Error('a rerun is never queued behind another');
    metrics.runStarted(playbook.name);
    return reply
      .status(202)
      .header('location', `/api/v1/runs/${started.id}`)
      .send({ run: scrub(runView(started)) });
  });
}

/** Acting on runs: start, resume, approve and deny, cancel. */
/** A run's file, for a token: the path may hold `/` (fastify's wildcard), so it is not one of the described routes' `{param}`s. */
function registerRunFiles(app: FastifyInstance, { store, outputsDir }: RouteContext): void {
  app.get('/api/v1/runs/:runId/files/*', { config: { role: 'viewer' } }, async (request, reply) => {
    const { runId, '*': path } = request.params as { runId: string; '*': string };
    await findRun(store, runId);
    const found = await findRunFile(outputsDir, runId, path);
    if (!found) throw notFound(`file ${path} of run ${runId}`);
    return sendRunFile(reply, found);
  });
}

function registerRunActions(context: RouteContext): void {
  const { store, catalog, launcher, metrics, scrub, route } = context;
  route('startRun', async (request, reply) => {
    const body = request.body as {
      playbook: string;
      inputs?: Record<string, unknown>;
      dryRun?: boolean;
      ignoreWindow?: { reason: string };
    };
    const playbook = await catalog.find(body.playbook);
    if (!playbook)
      throw new HttpError(404, ServerErrorCode.notFound, `playbook ${body.playbook} not found`, 'body/playbook');
    const { run } = await launcher.start(
      {
        playbook,
        inputs: body.inputs ?? {},
        trigger: { kind: 'manual' },
        dryRun: body.dryRun === true,
        ...(body.ignoreWindow ? { ignoreWindow: body.ignoreWindow } : {}),
      },
      apiCaller(request, Door.apiStart),
    );
    if (!run) throw new Error('a manual run is never queued behind another');
    metrics.runStarted(playbook.name);
    return reply
      .status(202)
      .header('location', `/api/v1/runs/${run.id}`)
      .send({ run: scrub(runView(run)) });
  });

  route('resumeRun', async (request, reply) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    if (run.status !== 'interrupted' && run.status !== 'running')
      throw new HttpError(
        409,
        ServerErrorCode.notResumable,
        `run ${run.id} is ${run.status}; only an interrupted run is resumed`,
      );
    requirePlaybookRole(request, run.playbook, 'operator');
    const playbook = await catalog.find(run.playbook);
    if (!playbook)
      throw new HttpError(409, ServerErrorCode.playbookGone, `the playbook ${run.playbook} is no longer in the folder`);
    const body = (request.body ?? {}) as { secretInputs?: Record<string, string> };
    const resumed = await launcher.resume(playbook, run, body.secretInputs ?? {}, callerName(request));
    return reply
      .status(202)
      .header('location', `/api/v1/runs/${run.id}`)
      .send({ run: scrub(runView(resumed)) });
  });

  route('cancelRun', async (request, reply) => {
    const run = await findRun(store, (request.params as { runId: string }).runId);
    requirePlaybookRole(request, run.playbook, 'operator');
    const { outcome, run: after } = await launcher.cancel(run.id, callerName(request));
    // Too late: the run's end was written first, and the journal says nothing of this cancel.
    if (outcome === 'ended')
      throw new HttpError(
        409,
        ServerErrorCode.runEnded,
        `run ${run.id} already ended ${after.status}; there is nothing to cancel`,
      );
    return reply.status(202).send({ outcome, run: scrub(runView(after)) });
  });
}

/** Approve and deny: the decision path (`recordApproval`) audits them, for every door. */
function registerDecisions(context: RouteContext): void {
  const { store, launcher, catalog, scrub, route } = context;
  for (const [operationId, decision] of [
    ['approveRun', 'approved'],
    ['denyRun', 'denied'],
  ] as const) {
    route(operationId, async (request, reply) => {
      const run = await findRun(store, (request.params as { runId: string }).runId);
      requirePlaybookRole(request, run.playbook, 'operator');
      const body = (request.body ?? {}) as { comment?: string; step?: string; inputs?: Record<string, unknown> };
      const after = await launcher.decide(await catalog.find(run.playbook), {
        runId: run.id,
        decision,
        by: callerName(request),
        actor: apiActor(request),
        ...(body.comment === undefined ? {} : { comment: body.comment }),
        ...(body.step === undefined ? {} : { step: body.step }),
        ...(body.inputs === undefined ? {} : { inputs: body.inputs }),
      });
      return reply
        .status(202)
        .header('location', `/api/v1/runs/${run.id}`)
        .send({ run: scrub(runView(after)) });
    });
  }
}

/** Playbooks, schedules, tokens and the metrics. */
function registerCatalogRoutes(app: FastifyInstance, context: RouteContext): void {
  const { store, catalog, launcher, metrics, logger, scrub, route } = context;
  const options = context;
  route('listPlaybooks', async () => {
    const folder = await catalog.current();
    return {
      playbooks: folder.playbooks.map((playbook) => scrub(playbookView(playbook, options.root))),
      problems: folder.problems.map((problem) => problemView(problem, options.root)),
    };
  });

  route('getPlaybook', async (request) => {
    const { name } = request.params as { name: string };
    const playbook = await catalog.find(name);
    if (!playbook) throw notFound(`playbook ${name}`);
    return {
      playbook: scrub(playbookView(playbook, options.root)),
      schedules: await scheduleViews(store, [playbook], 5, Date.now()),
    };
  });

  route('listSchedules', async (request) => {
    const { count } = request.query as { count: number };
    return { schedules: await scheduleViews(store, (await catalog.current()).playbooks, count, Date.now()) };
  });

  route('pauseSchedule', async (request) => ({
    schedule: await pauseSchedule(
      { store, catalog, logger },
      (request.params as { key: string }).key,
      callerName(request),
    ),
  }));
  route('resumeSchedule', async (request) => ({
    schedule: await resumeSchedule(
      { store, catalog, logger },
      (request.params as { key: string }).key,
      callerName(request),
    ),
  }));

  route('triggerSchedule', async (request, reply) => {
    const body = (request.body ?? {}) as { ignoreWindow?: { reason: string } };
    const triggered = await triggerSchedule(
      { store, catalog, logger, launcher },
      (request.params as { key: string }).key,
      apiCaller(request, Door.apiTrigger),
      body.ignoreWindow,
    );
    if (triggered.outcome === 'queued') return reply.status(202).send(triggered);
    metrics.runStarted(triggered.run.playbook);
    return reply
      .status(202)
      .header('location', `/api/v1/runs/${triggered.run.id}`)
      .send({ ...triggered, run: scrub(runView(triggered.run)) });
  });

  route('listTokens', async () => ({ tokens: await store.listApiTokens() }));

  app.get('/metrics', { config: { role: 'viewer' } }, async (_request, reply) =>
    reply.header('content-type', metrics.contentType).send(await metrics.render()),
  );
}

/**
 * Cursor paging over runs newest first: the cursor holds the start time of the page's last
 * run and how many runs of the page started at that very instant, so the next page starts at
 * that time (`until`) and skips those; runs started together are never lost or doubled.
 */
function makeCursor(lastStartedAt: string, page: readonly RunRecord[], skip: number, until?: string): string {
  const sameInstant = page.filter((run) => run.startedAt === lastStartedAt).length;
  // The whole page at one instant continues where the previous page's skip left off.
  const carried = until === lastStartedAt ? skip : 0;
  return Buffer.from(JSON.stringify({ until: lastStartedAt, skip: carried + sameInstant })).toString('base64url');
}

function parseCursor(cursor: string | undefined): { until?: string; skip: number } {
  if (cursor === undefined) return { skip: 0 };
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { until?: unknown; skip?: unknown };
    if (typeof parsed.until === 'string' && !Number.isNaN(Date.parse(parsed.until)) && Number.isInteger(parsed.skip))
      return { until: parsed.until, skip: Math.max(0, parsed.skip as number) };
  } catch {
    // Refused below.
  }
  throw new HttpError(
    400,
    ServerErrorCode.invalidRequest,
    'querystring/cursor: not a cursor this server made',
    'querystring/cursor',
  );
}
