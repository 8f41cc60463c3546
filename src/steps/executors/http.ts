/**
 * The `http` step: a webhook (chat notification, ticket, callback). Not a platform call, so
 * no rate limit or platform auth; the headers given are sent as they are (and redacted in
 * logs when they hold secrets).
 */
import { request } from 'undici';
import { toErrorRecord } from './error-record.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { ExecutorRuntime, LeafResult } from './types.js';
import { errorMessage } from '../../errors/index.js';

export interface HttpArgs {
  /** @default 'POST' */
  method?: string;
  url: string;
  headers?: Record<string, string>;
  /** A string is sent as it is; anything else as JSON. */
  body?: unknown;
}

const HTTP_OPERATION = 'http';

function checkArgs(value: unknown): HttpArgs {
  const args = (value ?? {}) as Partial<HttpArgs>;
  if (typeof args.url !== 'string' || !URL.canParse(args.url) || !/^https?:$/.test(new URL(args.url).protocol)) {
    throw new StepError(`http: \`url\` must be an http(s) URL, got ${JSON.stringify(args.url)}.`, {
      kind: StepFailureKind.invalidInput,
      code: 'INVALID_HTTP_REQUEST',
    });
  }
  return args as HttpArgs;
}

export async function executeHttp(value: unknown, runtime: ExecutorRuntime): Promise<LeafResult> {
  const args = checkArgs(value);
  const method = (args.method ?? 'POST').toUpperCase();
  const headers: Record<string, string> = { ...args.headers };
  let body: string | undefined;
  if (args.body !== undefined) {
    body = typeof args.body === 'string' ? args.body : JSON.stringify(args.body);
    if (typeof args.body !== 'string' && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
  }
  const described = runtime.secrets.scrubValue({
    method,
    url: args.url,
    headers,
    ...(args.body === undefined ? {} : { body: args.body }),
  });
  if (runtime.dryRun) {
    runtime.logger.info({ dryRun: true, request: described }, `dry run: ${method} ${described.url} not sent`);
    return { status: 'simulated', outputs: { simulated: true, request: described } };
  }
  const { path, attempt } = runtime;
  await runtime.journal({ type: 'request.sending', path, attempt, operationId: HTTP_OPERATION, method });
  const startedAt = runtime.clock.now();
  let response;
  try {
    response = await request(args.url, {
      method: method as 'POST',
      headers,
      ...(body === undefined ? {} : { body }),
      signal: runtime.signal,
    });
  } catch (error) {
    if (runtime.signal.aborted) throw error;
    const failure = new StepError(`http: ${method} ${described.url} could not be sent: ${errorMessage(error)}.`, {
      kind: StepFailureKind.http,
      code: 'HTTP_UNREACHABLE',
      retryable: true,
      cause: error,
    });
    await runtime.journal({
      type: 'request.failed',
      path,
      attempt,
      error: runtime.secrets.scrubValue(toErrorRecord(failure)),
      outcomeUnknown: method !== 'GET',
    });
    throw failure;
  }
  const text = await response.body.text();
  const contentType = String(response.headers['content-type'] ?? '');
  let parsed: unknown = text.length === 0 ? undefined : text;
  if (/[/+]json\b/i.test(contentType) && text.length > 0) {
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      parsed = text;
    }
  }
  const responseHeaders = Object.fromEntries(
    Object.entries(response.headers).map(([name, header]) => [
      name,
      Array.isArray(header) ? header.join(', ') : String(header),
    ]),
  );
  await runtime.journal({ type: 'request.answered', path, attempt, httpStatus: response.statusCode });
  runtime.logger.info(
    { operationId: HTTP_OPERATION, httpStatus: response.statusCode, durationMs: runtime.clock.now() - startedAt },
    `${method} ${described.url} answered ${response.statusCode}`,
  );
  if (response.statusCode >= 400) {
    const status = response.statusCode;
    throw new StepError(`http: ${method} ${described.url} answered HTTP ${status}.`, {
      kind: StepFailureKind.http,
      code: `HTTP_${status}`,
      httpStatus: status,
      retryable: status === 408 || status === 429 || status >= 500,
      details: { body: runtime.secrets.scrubValue(parsed) },
    });
  }
  return { outputs: { status: response.statusCode, headers: responseHeaders, body: parsed } };
}
