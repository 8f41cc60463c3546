/**
 * The conformance suite's harness: a simulator on port 0 that validates every response
 * against the description, and one API client (`createPlatformClient`) per default role,
 * so every operation is driven the way Fleetbook drives the platform.
 */
import { expect } from 'vitest';
import {
  ApiError,
  createPlatformClient,
  type AsyncOperationResult,
  type CallResult,
  type PlatformClient,
  type PlatformClientOptions,
} from '../../src/api/index.js';
import { loadPlatformDescription } from '../../src/openapi/description.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { OPERATION_TESTS, type ConformanceFile } from './operation-tests.js';

/** Response bodies in tests: the assertions check their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type JsonBody = any;

export const ROLE_CLIENTS = { observer: 'sim-observer', operator: 'sim-operator', admin: 'sim-admin' } as const;
export type RoleName = keyof typeof ROLE_CLIENTS;

/** A simulated hour per real second: a 45-minute update ends in under a second. */
export const CONFORMANCE_TIME_SCALE = 3_600;

/** What a call answered, success or platform error alike. */
export interface Answer {
  status: number;
  body: JsonBody;
  headers: Record<string, string>;
  /** `errorCode` of an error body. */
  errorCode?: string;
}

export interface Conformance {
  sim: Simulator;
  admin: PlatformClient;
  operator: PlatformClient;
  observer: PlatformClient;
  /** A client for any API client id of the simulator (`<id>-secret` unless given). */
  clientFor(clientId: string, overrides?: Partial<PlatformClientOptions>): PlatformClient;
  close(): Promise<void>;
}

/** No client-side waiting on published limits: the tests that check limits set their own. */
function unthrottled(): Record<string, number> {
  const groups = loadPlatformDescription().operations.flatMap((operation) =>
    operation.rateLimit ? [operation.rateLimit.group] : [],
  );
  return Object.fromEntries(groups.map((group) => [group, 600_000]));
}

/**
 * Starts a simulator with `validateResponses` and the suite's time scale (both overridable)
 * and a client per role that does not retry, so each answer is seen as the platform gave it.
 */
export async function startConformance(
  options: SimulatorOptions = {},
  clientOptions: Partial<PlatformClientOptions> = {},
): Promise<Conformance> {
  const sim = await startSimulator({
    validateResponses: true,
    timeScale: CONFORMANCE_TIME_SCALE,
    rateLimitScale: 1_000,
    // Tokens outlive the suite at this time scale unless a test asks for short ones.
    tokenLifetimeSeconds: 30 * 24 * 3_600,
    ...options,
  });
  const clientFor = (clientId: string, overrides: Partial<PlatformClientOptions> = {}): PlatformClient =>
    createPlatformClient({
      credentials: { clientId, clientSecret: `${clientId}-secret` },
      authUrl: sim.authUrl,
      baseUrl: sim.baseUrl,
      regionalUrl: sim.regionalUrl,
      region: 'eu-central',
      retry: { maxAttempts: 1 },
      rateLimits: { perMinute: unthrottled() },
      ...clientOptions,
      ...overrides,
    });
  return {
    sim,
    admin: clientFor(ROLE_CLIENTS.admin),
    operator: clientFor(ROLE_CLIENTS.operator),
    observer: clientFor(ROLE_CLIENTS.observer),
    clientFor,
    close: () => sim.close(),
  };
}

/** The answer of a call, whether it succeeded or the platform refused it; other failures rethrow. */
export async function answerOf(call: Promise<CallResult>): Promise<Answer> {
  try {
    const result = await call;
    return { status: result.status, body: result.body as JsonBody, headers: result.headers };
  } catch (error) {
    if (error instanceof ApiError && error.status !== undefined) {
      return {
        status: error.status,
        body: error.body?.raw as JsonBody,
        headers: {},
        ...(error.body?.errorCode ? { errorCode: error.body.errorCode } : {}),
      };
    }
    throw error;
  }
}

/** Every response of this simulator matched the description (`GET /_sim/violations`). */
export async function expectNoViolations(sim: Simulator): Promise<void> {
  const violations = (await (await fetch(`${sim.url}/_sim/violations`)).json()) as { items: unknown[] };
  expect(violations.items).toEqual([]);
}

/**
 * The closing checks of a conformance file: every response matched the description
 * (`/_sim/violations` is empty) and every operation the table assigns to this file was
 * answered with its success status at least once.
 */
export async function expectConformant(sim: Simulator, file: ConformanceFile): Promise<void> {
  await expectNoViolations(sim);
  const description = loadPlatformDescription();
  const served = new Set(
    sim.control
      .requests()
      .filter((entry) => entry.status >= 200 && entry.status < 300)
      .map((entry) => entry.operationId),
  );
  const owed = Object.entries(OPERATION_TESTS)
    .filter(([, test]) => test.file === file)
    .map(([operationId]) => operationId);
  const missing = owed.filter((operationId) => !served.has(operationId));
  expect(missing, `operations of ${file} never answered 2xx`).toEqual([]);
  for (const operationId of owed) expect(description.byId.has(operationId)).toBe(true);
}

/**
 * Follows a 202 through the client while moving the simulated clock `stepMs` every few real
 * milliseconds: the rules of a test stay exact (nothing ends while the test looks at it)
 * and a wait still ends quickly.
 */
export async function followDriving(
  sim: Simulator,
  client: PlatformClient,
  accepted: CallResult,
  stepMs = 60_000,
): Promise<AsyncOperationResult> {
  const timer = setInterval(() => sim.control.clock.advance(stepMs), 2);
  try {
    return await client.waitForOperation(accepted, { minPollMs: 1, maxPollMs: 5, timeoutMs: 15_000 });
  } finally {
    clearInterval(timer);
  }
}
