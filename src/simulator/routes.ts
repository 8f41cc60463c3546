import type { FastifyInstance } from 'fastify';
import type { OperationDescriptor } from '../openapi/index.js';
import { asSimHttpError, frameworkError } from './error-responses.js';
import { refuseMalformedBody, SimHttpError } from './errors.js';
import { originOf, type ServeOperation } from './operation-pipeline.js';
import { sendResponse } from './replies.js';
import { elapsedSince, logArrival, withoutQuery } from './request-log.js';
import type { Simulation } from './simulation.js';

/** `{id}` templates as fastify `:id` parameters. */
const routePath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

/**
 * Routes every operation of the description to the pipeline; a regional one also under
 * `/regions/:region`. Handlers resolve to the reply itself: an async handler resolving to
 * undefined lets fastify finish the response before a streamed body (CSV, report download) is sent.
 */
export function registerOperationRoutes(
  app: FastifyInstance,
  operations: readonly OperationDescriptor[],
  serve: ServeOperation,
): void {
  for (const op of operations) {
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
}

/**
 * Routes the areas' extra routes (not platform operations: no auth, no faults, no checks).
 * They keep their paths across resets; each request uses the current world's handler.
 */
export function registerExtraRoutes(app: FastifyInstance, sim: Simulation): void {
  for (const route of sim.worlds.current().extraRoutes.values()) {
    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => {
        const entry = logArrival(sim.requestLog, request, route.name, sim.clock.nowIso());
        const startedReal = performance.now();
        try {
          refuseMalformedBody(request.body);
          const world = sim.worlds.current();
          world.services.asyncOps.settle();
          const current = world.extraRoutes.get(route.name);
          if (!current) throw new SimHttpError(404, 'NOT_FOUND', `No route at ${entry.path}`);
          const response = await current.handler({
            operationId: route.name,
            method: request.method,
            params: request.params as Record<string, string>,
            query: request.query as Record<string, string | string[]>,
            body: request.body,
            headers: request.headers as Record<string, string | undefined>,
            region: '',
            clientId: '',
            origin: originOf(request),
          });
          sendResponse(reply, response);
        } catch (error) {
          const simError = asSimHttpError(error);
          sendResponse(reply, { status: simError.status, body: simError.toBody(), headers: simError.headers });
        } finally {
          entry.status = reply.statusCode;
          entry.durationMs = elapsedSince(startedReal);
        }
        return reply;
      },
    });
  }
}

/** A path no route serves is a logged 404; a failure fastify raises itself is answered as a platform error. */
export function registerFallbacks(app: FastifyInstance, sim: Simulation): void {
  app.setNotFoundHandler((request, reply) => {
    const path = withoutQuery(request.url);
    // No body is kept: nothing served the request.
    const entry = logArrival(
      sim.requestLog,
      { method: request.method, url: path, body: undefined },
      '',
      sim.clock.nowIso(),
    );
    entry.status = 404;
    const error = new SimHttpError(404, 'NOT_FOUND', `No operation at ${request.method} ${path}`);
    void reply.code(404).type('application/json').send(error.toBody());
  });
  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    const simError = frameworkError(error);
    void reply.code(simError.status).headers(simError.headers).type('application/json').send(simError.toBody());
  });
}
