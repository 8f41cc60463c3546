/**
 * What the fast tests of the engine's semantics run with: a fake platform client (no port),
 * a virtual clock, a memory store, captured log lines, and builders of loaded steps.
 */
import { Writable } from 'node:stream';
import { ApiError, type CallInput, type CallResult, type PlatformClient } from '../api/index.js';
import { compileTemplate } from '../expressions/index.js';
import { createLogger } from '../logging/index.js';
import { loadPlatformDescription } from '../openapi/description.js';
import type { Playbook, RetryPolicy, Step } from '../playbook/index.js';
import { createMemoryRunStore, type JournalEvent, type RunStore } from '../store/index.js';
import { createVirtualClock, type VirtualClock } from '../timers/index.js';
import type { RunOptions, RunResult } from './run-options.js';
import { runPlaybook } from './run-playbook.js';

/** A compiled template of a value as a loaded playbook holds it. */
export const t = (value: unknown) => compileTemplate(value, { pointer: '/test' });

export const noRetry: RetryPolicy = {
  maxAttempts: 1,
  initialDelayMs: 1000,
  backoffRate: 2,
  maxDelayMs: 60_000,
  jitter: 'none',
  on: ['transient'],
};

/** A loaded step: location, retry and continueOnError filled in. */
export function step(init: { id: string; kind: string } & Record<string, unknown>): Step {
  return {
    location: { file: 'test.yaml', line: 1, column: 1, pointer: `/steps/${init.id}` },
    retry: noRetry,
    retryDeclared: 'retry' in init,
    continueOnError: false,
    ...init,
  } as Step;
}

export function playbook(steps: Step[], extra: Partial<Playbook> = {}): Playbook {
  return {
    name: 'fast',
    source: '/tmp/fast.yaml',
    hash: 'h',
    inputs: {},
    defaults: { retry: noRetry, wait: {} },
    schedules: [],
    steps,
    ...extra,
  };
}

/** What the fake platform answers a call with: a body, or an error to throw. */
export type FakeAnswer = { body: unknown; status?: number } | { error: ApiError };

/** A transient failure of a read, as the client classifies it. */
export const unavailable = (operationId: string, retryAfterMs?: number): FakeAnswer => ({
  error: new ApiError('service unavailable', 'SERVER_ERROR', {
    operationId,
    status: 503,
    retryable: true,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  }),
});

let description: ReturnType<typeof loadPlatformDescription> | undefined;

/** A client whose `invoke` answers from `script` (per operation, in order; the last repeats). */
export function fakeClient(
  script: Record<string, FakeAnswer[]>,
): PlatformClient & { calls: Array<{ operationId: string; input: CallInput | undefined }> } {
  const catalogue = (description ??= loadPlatformDescription());
  const calls: Array<{ operationId: string; input: CallInput | undefined }> = [];
  const invoke = async (operationId: string, input?: CallInput): Promise<CallResult> => {
    calls.push({ operationId, input });
    const answers = script[operationId] ?? [{ body: {} }];
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    if (answer === undefined) throw new Error(`the fake platform has no answer for ${operationId}`);
    if ('error' in answer) throw answer.error;
    const operation = catalogue.byId.get(operationId);
    if (operation === undefined) throw new Error(`unknown operation ${operationId}`);
    return { status: answer.status ?? 200, headers: {}, body: answer.body, operation };
  };
  return { invoke, catalogue, calls } as unknown as PlatformClient & { calls: typeof calls };
}

export interface FastRun {
  result: RunResult;
  /** The journal's events, in order. */
  events: JournalEvent[];
  lines: Array<Record<string, unknown>>;
  clock: VirtualClock;
  store: RunStore;
}

/** Runs `book` in virtual time against `client` (default: a platform answering `{}`). */
export async function fastRun(
  book: Playbook,
  options: Partial<RunOptions> & { clock?: VirtualClock } = {},
): Promise<FastRun> {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const clock = options.clock ?? createVirtualClock(Date.parse('2026-01-01T00:00:00Z'));
  const store = createMemoryRunStore();
  const result = await runPlaybook(book, {
    client: fakeClient({}),
    store,
    logger: createLogger({ level: 'debug', destination }),
    env: {},
    outputsDir: '/nonexistent/fleetbook-fast-tests',
    random: () => 0.5,
    ...options,
    clock,
  });
  const events = (await store.journal(result.runId)).map((entry) => entry.event);
  return { result, events, lines, clock, store };
}

export const summary = (run: FastRun, path: string) => run.result.steps.find((line) => line.path === path);
