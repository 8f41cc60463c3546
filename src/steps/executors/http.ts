/**
 * The `http` step: a webhook (chat notification, ticket, callback). Not a platform call, so
 * no rate limit or platform auth; the headers given are sent as they are (and redacted in
 * logs when they hold secrets).
 */
import { request } from 'undici';
import { toErrorRecord } from './error-record.js';
import { StepError, StepFailureKind } from './step-error.js';
import type { StepRuntime, LeafResult } from './types.js';
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

/**
 * The body as sent and the headers to send it with: a non-string body goes as JSON, labelled so
 * unless the playbook chose its own content type.
 */
function encodeBody(args: HttpArgs): { headers: Record<string, string>; body: string | undefined } {
  const headers: Record<string, string> = { ...args.headers };
  if (args.body === undefined) return { headers, body: undefined };
  if (typeof args.body === 'string') return { headers, body: args.body };
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(args.body) };
}

/** A JSON answer parsed (its text kept when it does not parse), any other kept as text; empty is undefined. */
function parseAnswerBody(text: string, contentType: string | string[] | undefined): unknown {
  if (text.length === 0) return undefined;
  if (!/[/+]json\b/i.test(String(contentType ?? ''))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Repeated headers joined as HTTP allows, so the step's outputs hold one string per name. */
function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, header]) => [name, Array.isArray(header) ? header.join(', ') : String(header)]),
  );
}

export async function executeHttp(value: unknown, runtime: StepRuntime): Promise<LeafResult> {
  const args = checkArgs(value);
  const method = (args.method ?? 'POST').toUpperCase();
  const { headers, body } = encodeBody(args);
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
  const parsed = parseAnswerBody(await response.body.text(), response.headers['content-type']);
  const responseHeaders = flattenHeaders(response.headers);
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
