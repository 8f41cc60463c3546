import type { FastifyInstance } from 'fastify';
import { isFleetbookError } from '../errors/index.js';
import type { OutboxMessage, SimClock } from './context.js';
import { badRequest, refuseMalformedBody, SimHttpError } from './errors.js';
import { loadFaultSettings, type FaultSettings } from './faults.js';
import type { RequestLogEntry } from './request-log.js';
import type { ResponseViolation } from './response-check.js';
import type { Simulation } from './simulation.js';
import { takeSnapshot, type SimulatorSnapshot } from './world-snapshot.js';

/** What `/_sim/` exposes, also handed to in-process callers as `simulator.control`. */
export interface SimulatorControl {
  requests(filter?: { operationId?: string }): RequestLogEntry[];
  clearRequests(): void;
  outbox(): readonly OutboxMessage[];
  /** Puts a message in the outbox: an `email` step rehearsed here mails no one. */
  postMail(message: Omit<OutboxMessage, 'id' | 'sentAt'>): OutboxMessage;
  faults: {
    get(): FaultSettings;
    /** Replaces the fault settings (checked; a `UsageError` when invalid). */
    set(settings: FaultSettings): void;
  };
  clock: SimClock;
  /** Rebuilds the world from the seed; the clock, tokens, faults and request log stay. */
  reset(): void;
  world(): { seed: number; timeScale: number; areas: Record<string, Record<string, number | string>> };
  violations(): readonly ResponseViolation[];
  /** Whether answers are checked against the description (`validateResponses`, `--check-responses`). */
  checksResponses(): boolean;
  revokeTokens(): void;
  /** The world as it is now (plain JSON), for `startSimulator({ restore })` in another process. */
  snapshot(): SimulatorSnapshot;
}

/** The control of a simulation, as `/_sim/` and in-process callers use it. */
export function createControl(sim: Simulation): SimulatorControl {
  return {
    requests: (filter) => sim.requestLog.list(filter),
    clearRequests: () => sim.requestLog.clear(),
    outbox: () => sim.worlds.current().services.outbox.messages,
    postMail: (message) => sim.worlds.current().services.outbox.sendMail(message),
    faults: { get: () => sim.faults.current(), set: (settings) => sim.faults.set(loadFaultSettings(settings)) },
    clock: sim.clock,
    reset: () => sim.worlds.rebuild(),
    world: () => ({ seed: sim.seed, timeScale: sim.clock.timeScale, areas: sim.worlds.current().summary() }),
    violations: () => sim.violations,
    checksResponses: () => sim.validateResponses,
    revokeTokens: () => {
      sim.auth.revokeAll();
    },
    snapshot: () => takeSnapshot(sim),
  };
}

/** The `/_sim/` control surface: not part of the platform, no auth. */
export function registerControlRoutes(app: FastifyInstance, control: SimulatorControl): void {
  app.get('/_sim/requests', (request) => {
    const { operationId } = request.query as { operationId?: string };
    return { items: control.requests(operationId ? { operationId } : {}) };
  });
  app.delete('/_sim/requests', (_request, reply) => {
    control.clearRequests();
    return reply.code(204).send();
  });
  app.get('/_sim/outbox', () => ({ items: control.outbox() }));
  app.post('/_sim/outbox', (request, reply) => {
    refuseMalformedBody(request.body);
    const body = (request.body ?? {}) as Partial<OutboxMessage>;
    if (!Array.isArray(body.to) || typeof body.subject !== 'string' || typeof body.body !== 'string')
      throw badRequest('an outbox message needs to (a list), subject and body');
    return reply
      .code(201)
      .send(control.postMail({ links: [], kind: 'posted', ...body } as Omit<OutboxMessage, 'id' | 'sentAt'>));
  });
  app.get('/_sim/faults', () => control.faults.get());
  app.put('/_sim/faults', (request) => {
    refuseMalformedBody(request.body);
    try {
      control.faults.set((request.body ?? {}) as FaultSettings);
    } catch (error) {
      if (isFleetbookError(error)) throw badRequest(error.message);
      throw error;
    }
    return control.faults.get();
  });
  app.post('/_sim/tokens/revoke', (_request, reply) => {
    control.revokeTokens();
    return reply.code(204).send();
  });
  const clockView = () => ({
    now: control.clock.nowIso(),
    nowMs: control.clock.now(),
    timeScale: control.clock.timeScale,
  });
  app.get('/_sim/clock', clockView);
  app.post('/_sim/clock', (request) => {
    refuseMalformedBody(request.body);
    const { advanceMs } = (request.body ?? {}) as { advanceMs?: unknown };
    if (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0) {
      throw new SimHttpError(400, 'BAD_REQUEST', 'advanceMs must be a non-negative number of simulated milliseconds', [
        {
          type: 'bad request',
          issues: [{ source: 'field', subject: 'advanceMs', description: 'must be a non-negative number' }],
        },
      ]);
    }
    control.clock.advance(advanceMs);
    return clockView();
  });
  app.post('/_sim/reset', () => {
    control.reset();
    return control.world();
  });
  app.get('/_sim/world', () => control.world());
  app.get('/_sim/violations', () => ({ checking: control.checksResponses(), items: control.violations() }));
}
