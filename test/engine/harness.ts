/**
 * Integration harness of the engine tests: a simulator on port 0 with a large time scale, a
 * client wired to it, a memory run store, a logger whose every line is captured, and
 * builders of normalised playbooks (what the loader produces) for hand-made cases.
 */
import { Writable } from 'node:stream';
import type { LevelWithSilent } from 'pino';
import { createPlatformClient, type PlatformClient } from '../../src/api/index.js';
import { resumeRun, runPlaybook, type RunOptions, type RunResult } from '../../src/engine/index.js';
import { compileTemplate } from '../../src/expressions/index.js';
import { createLogger, createSecretRegistry, type SecretRegistry } from '../../src/logging/index.js';
import type { InputSpec, Playbook, RetryPolicy, Step } from '../../src/playbook/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { createMemoryRunStore, type RunStore } from '../../src/store/index.js';

/** A compiled template of a value as a playbook would hold it. */
export const t = (value: unknown) => compileTemplate(value, { pointer: '/test' });

export const noRetry: RetryPolicy = {
  maxAttempts: 1,
  initialDelayMs: 1,
  backoffRate: 2,
  maxDelayMs: 10,
  jitter: 'full',
  on: ['transient'],
};

type StepInit = { id: string; kind: Step['kind'] } & Record<string, unknown>;

/** A normalised step: location, retry and continueOnError filled in. */
export function step<S extends StepInit>(init: S): Step {
  return {
    location: { file: 'test.yaml', line: 1, column: 1, pointer: `/steps/${init.id}` },
    retry: noRetry,
    retryDeclared: 'retry' in init,
    continueOnError: false,
    ...init,
  } as unknown as Step;
}

export function input(type: InputSpec['type'], extra: Partial<InputSpec> = {}): InputSpec {
  return { type, secret: false, required: extra.default === undefined, schema: { type }, ...extra };
}

export function playbook(steps: Step[], extra: Partial<Playbook> = {}): Playbook {
  return {
    name: 'test-playbook',
    source: '/tmp/test-playbook.yaml',
    hash: 'test-hash',
    inputs: {},
    defaults: { retry: noRetry, wait: { minPollMs: 5, maxPollMs: 50 }, region: 'us-west' },
    schedules: [],
    steps,
    ...extra,
  };
}

export interface Harness {
  sim: Simulator;
  client: PlatformClient;
  store: RunStore;
  secrets: SecretRegistry;
  /** Every log line written so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  /** Every log line written so far, as written. */
  text(): string;
  run(book: Playbook, options?: Partial<RunOptions>): Promise<RunResult>;
  /** Resumes the stored run `runId` (after a gate's decision, say), as `fleetbook resume` does. */
  resume(book: Playbook, runId: string): Promise<RunResult>;
  close(): Promise<void>;
}

/** `logLevel`: the captured logger's level. @default 'trace' */
export interface HarnessOptions {
  logLevel?: LevelWithSilent;
  /**
   * Puts something between the client and the simulator (a proxy that rewrites answers):
   * given the simulator's origin, returns the origin the client calls and how to stop it.
   */
  via?: (simulatorUrl: string) => Promise<{ url: string; close(): Promise<void> }>;
}

export async function startHarness(
  options: SimulatorOptions = {},
  { logLevel = 'trace', via }: HarnessOptions = {},
): Promise<Harness> {
  const sim = await startSimulator({ port: 0, timeScale: 6000, ...options });
  const middle = via ? await via(sim.url) : undefined;
  const origin = middle?.url ?? sim.url;
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const secrets = createSecretRegistry();
  const admin = sim.clients.find((client) => client.clientId === 'sim-admin');
  if (!admin) throw new Error('the simulator has no sim-admin client');
  secrets.add(admin.clientSecret);
  const logger = createLogger({ destination, level: logLevel, secrets });
  const client = createPlatformClient({
    credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
    authUrl: middle ? origin : sim.authUrl,
    baseUrl: middle ? origin : sim.baseUrl,
    regionalUrl: middle ? `${origin}/regions/{region}` : sim.regionalUrl,
    region: 'us-west',
    retry: { initialDelayMs: 1, maxDelayMs: 5 },
    rateLimits: { defaultPerMinute: 600_000 },
    logger,
  });
  const store = createMemoryRunStore();
  const text = (): string => chunks.join('');
  return {
    sim,
    client,
    store,
    secrets,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    run: (book, runOptions = {}) => runPlaybook(book, { client, store, logger, secrets, ...runOptions }),
    resume: (book, runId) => resumeRun(book, { runId, client, store, logger, secrets }),
    close: async () => {
      await middle?.close();
      await sim.close();
    },
  };
}
