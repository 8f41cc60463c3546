import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createPostgresRunStore, redactStoreUrl } from './postgres/index.js';
import { createSqliteRunStore } from './sqlite/index.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import type { RunStore, RunStoreOptions } from './types.js';

/** Where Fleetbook keeps its state when `FLEETBOOK_HOME` is not set (relative to the working directory). */
export const defaultFleetbookHome = '.fleetbook';

/** The store's file inside the home directory. */
export const runStoreFileName = 'runs.sqlite';

export interface OpenRunStoreOptions extends RunStoreOptions {
  /** The state directory; wins over `env.FLEETBOOK_HOME`. @default env.FLEETBOOK_HOME ?? '.fleetbook' */
  home?: string;
  /** Where `FLEETBOOK_HOME` and `FLEETBOOK_STORE` are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** A shared store's URL from a profile's `store:`; `FLEETBOOK_STORE` wins over it. */
  store?: string | undefined;
}

/**
 * The PostgreSQL URL of the shared store in use (`FLEETBOOK_STORE`, else a profile's
 * `store:`), or undefined for the embedded SQLite store. Anything but a `postgres://` or
 * `postgresql://` URL is refused (exit 2) with the form expected, never echoing a password.
 */
export function resolveStoreUrl(options: Pick<OpenRunStoreOptions, 'env' | 'store'> = {}): string | undefined {
  const env = options.env ?? process.env;
  const [source, value] = env.FLEETBOOK_STORE
    ? ['FLEETBOOK_STORE', env.FLEETBOOK_STORE]
    : ["the profile's `store:`", options.store];
  if (!value) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') || !parsed.hostname) {
    const shown = parsed ? redactStoreUrl(value) : `'${value.replace(/:[^:@/]*@/, ':***@')}'`;
    throw new StoreError(
      `${source} ${shown} is not a PostgreSQL URL: expected postgres://user:password@host:5432/database (unset it to keep the SQLite store under FLEETBOOK_HOME).`,
      StoreErrorCode.invalidArgument,
      { source },
    );
  }
  return value;
}

/** Where large step outputs are kept as files, one folder per run: `<home>/outputs/<runId>/`. */
export function outputsDirOf(home: string): string {
  return join(home, 'outputs');
}

/** The folder of rehearsals' saved worlds in a Fleetbook home (`<runId>.json`: the CLI's saved-world.ts). */
export function worldsDirOf(home: string): string {
  return join(home, 'worlds');
}

/** The state directory in use: `home`, else `FLEETBOOK_HOME`, else `.fleetbook/`, as an absolute path. */
export function resolveFleetbookHome(options: Pick<OpenRunStoreOptions, 'home' | 'env'> = {}): string {
  const env = options.env ?? process.env;
  return resolve(options.home ?? (env.FLEETBOOK_HOME || defaultFleetbookHome));
}

/**
 * Opens the run store in use: the shared PostgreSQL store when `FLEETBOOK_STORE` (or the
 * profile's `store:`) names one, else the SQLite store of the Fleetbook home (creating the
 * directory and the store on first use). Either is migrated on opening, or refused when a
 * newer Fleetbook migrated it.
 */
export async function openRunStore(options: OpenRunStoreOptions = {}): Promise<RunStore> {
  const { home: _home, env: _env, store: _store, ...storeOptions } = options;
  const url = resolveStoreUrl(options);
  if (url) return createPostgresRunStore({ ...storeOptions, url });
  const home = resolveFleetbookHome(options);
  try {
    mkdirSync(home, { recursive: true });
  } catch (error) {
    throw new StoreError(
      `Cannot create the Fleetbook home ${home}: ${(error as Error).message}. Set FLEETBOOK_HOME to a writable directory.`,
      StoreErrorCode.storeUnreadable,
      { home },
    );
  }
  return createSqliteRunStore({ ...storeOptions, file: join(home, runStoreFileName) });
}

/** Opens the run store of a Fleetbook home, runs `use` with it, and closes it whatever happens. */
export async function withRunStore<T>(options: OpenRunStoreOptions, use: (store: RunStore) => Promise<T>): Promise<T> {
  const store = await openRunStore(options);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}
