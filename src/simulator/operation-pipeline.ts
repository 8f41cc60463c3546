import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperationDescriptor } from '../openapi/index.js';
import { requireRoleFor } from './auth.js';
import type { SimRequest, SimResponse } from './context.js';
import { deprecationHeadersFor } from './deprecation.js';
import { asSimHttpError, documentedErrorForm, errorResponse } from './error-responses.js';
import { SimHttpError } from './errors.js';
import { dropConnection, injectedStatus } from './fault-injection.js';
import type { InputCheck } from './input-validation.js';
import { applyRateLimit } from './rate-limits.js';
import { regionOf } from './regions.js';
import { sendResponse } from './replies.js';
import { elapsedSince, logArrival, type RequestLogEntry } from './request-log.js';
import type { ResponseChecker } from './response-check.js';
import type { Simulation } from './simulation.js';

/** Serves one request to a platform operation; `regionFromPath` is the `/regions/<region>` prefix's region. */
export type ServeOperation = (
  op: OperationDescriptor,
  request: FastifyRequest,
  reply: FastifyReply,
  regionFromPath: string | undefined,
) => Promise<void>;

/** One request on its way through the steps of ARCHITECTURE.md's request pipeline. */
interface Arrival {
  op: OperationDescriptor;
  request: FastifyRequest;
  entry: RequestLogEntry;
  regionFromPath: string | undefined;
  /** Headers every answer carries, the refusals included: deprecation, then rate limits. */
  headers: Record<string, string>;
}

/** The request pipeline of ARCHITECTURE.md for the platform's operations. */
export function createOperationPipeline(
  sim: Simulation,
  checkInput: InputCheck,
  checkResponse: ResponseChecker,
): ServeOperation {
  /**
   * `injected`: the answer is a fault the fault settings asked for (503, 502, ...). Those are
   * statuses a real platform gives whatever its description says (a proxy's 503, a 429 from
   * a gateway), so they are not the simulator drifting from the description and are not checked.
   */
  const send = (
    reply: FastifyReply,
    op: OperationDescriptor,
    response: SimResponse,
    path: string,
    injected = false,
  ): void =>
    sendResponse(
      reply,
      sim.validateResponses && !injected ? checkResponse(op, reply.request.method, path, parsed(response)) : response,
    );
  const answer = (arrival: Arrival): SimResponse | Promise<SimResponse> =>
    arrival.op.base === 'auth'
      ? answerTokenRequest(sim, checkInput, arrival)
      : answerPlatformRequest(sim, checkInput, arrival);

  return async (op, request, reply, regionFromPath) => {
    const startedReal = performance.now();
    const entry = logArrival(sim.requestLog, request, op.id, sim.clock.nowIso());
    // A deprecated operation says so on every answer, a refusal included.
    const headers: Record<string, string> = op.deprecated ? deprecationHeadersFor(entry.path) : {};
    let injected = false;
    try {
      const fault = sim.faults.decide(op.id);
      if (fault.latencyMs > 0) await sleep(fault.latencyMs);
      if (fault.drop === 'before') return dropConnection(reply, entry, 'before');
      if (fault.status !== undefined) {
        injected = true;
        throw injectedStatus(fault.status, sim.clock.timeScale);
      }
      const response = await answer({ op, request, entry, regionFromPath, headers });
      if (fault.drop === 'after') {
        entry.status = response.status;
        return dropConnection(reply, entry, 'after');
      }
      send(reply, op, { ...response, headers: { ...headers, ...response.headers } }, entry.path);
    } catch (error) {
      const simError = asSimHttpError(error);
      send(reply, op, errorResponse(simError, documentedErrorForm(op, simError.status), headers), entry.path, injected);
    } finally {
      if (!entry.dropped) entry.status = reply.statusCode;
      entry.durationMs = elapsedSince(startedReal);
    }
  };
}

/** A response whose body was sent serialized, with the body as the response check reads it. */
function parsed(response: SimResponse): SimResponse {
  if (!response.json) return response;
  const { json, ...rest } = response;
  return { ...rest, body: JSON.parse(json.toString()) as unknown };
}

/** Path parameters without the region prefix's, and the query, as fastify parsed them. */
function paramsAndQuery(request: FastifyRequest): {
  params: Record<string, string>;
  query: Record<string, string | string[]>;
} {
  const params = { ...(request.params as Record<string, string>) };
  delete params.region;
  return { params, query: request.query as Record<string, string | string[]> };
}

/** A regional operation's region (a 404 for one it does not serve), kept in the log. */
function regionOfArrival({ op, request, entry, regionFromPath }: Arrival): string {
  const region = op.base === 'regional' ? regionOf(op, request.headers, regionFromPath) : '';
  if (region) entry.region = region;
  return region;
}

/**
 * OAuth 2.0 (RFC 6749, 3.2) allows each parameter of a token request once: one given as a list
 * (a form field repeated, a JSON array) is `invalid_request`, before the input check calls it
 * a type error or the client lookup an unknown client.
 */
function refuseRepeatedParameters(form: Record<string, unknown>): void {
  const repeated = Object.keys(form).find((key) => Array.isArray(form[key]));
  if (repeated === undefined) return;
  throw new SimHttpError(
    400,
    'INVALID_REQUEST',
    `${repeated} is given more than once; a token request takes each parameter once`,
    [{ type: 'bad request', issues: [{ source: 'field', subject: repeated, description: 'given more than once' }] }],
  );
}

/** The token endpoint: no bearer token and no roles; rate limited per `client_id`. */
function answerTokenRequest(
  sim: Simulation,
  checkInput: InputCheck,
  { op, request, entry, headers }: Arrival,
): SimResponse {
  const { params, query } = paramsAndQuery(request);
  const form = (request.body ?? {}) as Record<string, unknown>;
  const clientId = typeof form.client_id === 'string' ? form.client_id : '';
  entry.clientId = clientId;
  applyRateLimit(sim.rateLimits, op, clientId, headers);
  refuseRepeatedParameters(form);
  checkInput(op, params, query, request.body);
  return { status: 200, body: sim.auth.issue(form), headers: { 'cache-control': 'no-store' } };
}

/** Every other operation: bearer token, role, rate limit, input, then the area's handler. */
async function answerPlatformRequest(sim: Simulation, checkInput: InputCheck, arrival: Arrival): Promise<SimResponse> {
  const { op, request, entry, headers } = arrival;
  const { params, query } = paramsAndQuery(request);
  const region = regionOfArrival(arrival);
  if (sim.faults.revocationDue()) sim.auth.revokeAll();
  const client = sim.auth.authenticate(request.headers.authorization);
  entry.clientId = client.clientId;
  requireRoleFor(op, client);
  applyRateLimit(sim.rateLimits, op, client.clientId, headers);
  checkInput(op, params, query, request.body);
  const handler = sim.worlds.handlerOf(op.id);
  if (!handler) throw new SimHttpError(501, 'NOT_IMPLEMENTED', `The simulator has no handler for ${op.id} yet`);
  sim.worlds.current().services.asyncOps.settle();
  const simRequest: SimRequest = {
    operationId: op.id,
    method: request.method,
    params,
    query,
    body: request.body,
    headers: request.headers as Record<string, string | undefined>,
    region,
    clientId: client.clientId,
    clientRole: client.role,
    origin: originOf(request),
    ...(op.paging ? { paging: op.paging } : {}),
  };
  // A write is what a saved world serves again on restore (world-snapshot.ts); a read changes nothing.
  if (op.isWrite) sim.history.record(simRequest, sim.clock.now());
  return handler(simRequest);
}

/** The origin the client called, as handlers write it into links. */
export function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? request.hostname}`;
}
