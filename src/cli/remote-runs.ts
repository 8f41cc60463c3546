/**
 * `runs list|show|logs` against a `fleetbook server` instead of the store: with
 * `FLEETBOOK_SERVER=https://...` and `FLEETBOOK_TOKEN=...` they read the server's API (undici),
 * so a laptop needs no database access. The answers are the store's records, so the commands
 * print them with the same code as from the store.
 */
import { request } from 'undici';
import { FleetbookError, UsageError } from '../errors/index.js';
import { CliErrorCode } from './error-codes.js';
import type { JournalEntry, RunFilter, RunRecord, RunStore, StepNode, StepRecord } from '../store/index.js';

/** What `runs` reads, from the store or from a server. */
export type RunSource = Pick<RunStore, 'getRun' | 'listRuns' | 'journal' | 'steps'> & {
  /** A store's kept view of a run's journal (a server's runs have none: their journal is read). */
  journalView?: RunStore['journalView'];
  /** A store's read of entries by seq (a server's runs cannot be read so: `runs show -o json` folds their journal). */
  journalAt?: RunStore['journalAt'];
  /** The server's address when the source is one (its runs' leases are the server's to judge). */
  remote?: string;
};

/** The API's largest page. */
const PAGE_LIMIT = 200;

export interface ServerSettings {
  url: string;
  token: string;
}

/** `FLEETBOOK_SERVER` and `FLEETBOOK_TOKEN`, or undefined when no server is set. */
export function serverSettings(env: NodeJS.ProcessEnv): ServerSettings | undefined {
  const url = env.FLEETBOOK_SERVER?.trim();
  if (!url) return undefined;
  if (!/^https?:\/\/[^\s/]+/.test(url))
    throw new UsageError(
      `FLEETBOOK_SERVER must be an http(s) address like https://fleetbook.example:8080, got '${url}'`,
      CliErrorCode.invalidServer,
    );
  const token = env.FLEETBOOK_TOKEN?.trim();
  if (!token)
    throw new UsageError(
      'FLEETBOOK_SERVER is set: set FLEETBOOK_TOKEN too (fleetbook tokens create --role viewer --name <you>)',
      CliErrorCode.noToken,
    );
  return { url: url.replace(/\/+$/, ''), token };
}

/**
 * POSTs `body` to the server's `path` (approve, deny, cancel); its answer. A refusal the server
 * names (`NOT_AN_APPROVER`, `RUN_NOT_WAITING`...) is a `UsageError` with that code, exit 2, as
 * the same refusal from the store would be.
 */
export async function postToServer<T>(settings: ServerSettings, path: string, body: unknown): Promise<T> {
  return callServer<T>(settings, path, { method: 'POST', body });
}

async function callServer<T>(
  settings: ServerSettings,
  path: string,
  options: { method?: 'GET' | 'POST'; body?: unknown; missing?: () => T } = {},
): Promise<T> {
  let answer;
  try {
    answer = await request(`${settings.url}${path}`, {
      method: options.method ?? 'GET',
      headers: {
        authorization: `Bearer ${settings.token}`,
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      headersTimeout: 30_000,
      bodyTimeout: 60_000,
    });
  } catch (error) {
    throw new FleetbookError(`the server ${settings.url} cannot be reached: ${(error as Error).message}`, {
      code: CliErrorCode.serverUnreachable,
    });
  }
  const text = await answer.body.text();
  if (answer.statusCode === 404 && options.missing) return options.missing();
  if (answer.statusCode === 401)
    throw new UsageError(
      `the server ${settings.url} refused FLEETBOOK_TOKEN (unknown, revoked or mistyped)`,
      CliErrorCode.tokenRefused,
    );
  if (answer.statusCode >= 300) {
    let error: { code?: string; message?: string } = { message: text.slice(0, 300) };
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error ?? error;
    } catch {
      // Not JSON: the text itself.
    }
    const message = `the server ${settings.url} answered ${answer.statusCode}: ${error.message ?? ''}`;
    if (answer.statusCode < 500 && error.code) throw new UsageError(message, error.code);
    throw new FleetbookError(message, { code: CliErrorCode.serverRefused });
  }
  return JSON.parse(text) as T;
}

export function remoteRunSource(settings: ServerSettings): RunSource {
  async function get<T>(path: string, missing?: () => T): Promise<T> {
    return callServer<T>(settings, path, missing ? { missing } : {});
  }
  const flatten = (nodes: readonly StepNode[]): StepRecord[] =>
    nodes.flatMap((node) => {
      const { label: _label, children, durationMs: _duration, asyncOperationId: _operation, ...record } = node;
      return [record, ...flatten(children)];
    });
  const id = (runId: string) => encodeURIComponent(runId);
  return {
    remote: settings.url,
    getRun: async (runId) =>
      (await get<{ run: RunRecord } | undefined>(`/api/v1/runs/${id(runId)}`, () => undefined))?.run,
    async listRuns(filter: RunFilter = {}) {
      const wanted = filter.limit ?? 50;
      const runs: RunRecord[] = [];
      let cursor: string | undefined;
      do {
        const query = new URLSearchParams({ limit: String(Math.min(PAGE_LIMIT, wanted - runs.length)) });
        for (const name of ['status', 'playbook', 'since', 'idPrefix'] as const) {
          const value = filter[name];
          if (value !== undefined) query.set(name, value);
        }
        if (cursor) query.set('cursor', cursor);
        const page = await get<{ runs: RunRecord[]; nextCursor?: string }>(`/api/v1/runs?${query.toString()}`);
        runs.push(...page.runs);
        cursor = page.nextCursor;
      } while (cursor && runs.length < wanted);
      return runs;
    },
    journal: async (runId, afterSeq = 0) =>
      (await get<{ entries: JournalEntry[] }>(`/api/v1/runs/${id(runId)}/journal?afterSeq=${afterSeq}`)).entries,
    steps: async (runId) => flatten((await get<{ steps: StepNode[] }>(`/api/v1/runs/${id(runId)}`)).steps),
  };
}
