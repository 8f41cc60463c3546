import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createSqliteRunStore } from './sqlite-store.js';
import { StoreError, StoreErrorCode } from './store-error.js';
import type { RunStore, RunStoreOptions } from './types.js';

/** Where Fleetbook keeps its state when `FLEETBOOK_HOME` is not set (relative to the working directory). */
export const defaultFleetbookHome = '.fleetbook';

/** The store's file inside the home directory. */
export const runStoreFileName = 'runs.sqlite';

export interface OpenRunStoreOptions extends RunStoreOptions {
  /** The state directory; wins over `env.FLEETBOOK_HOME`. @default env.FLEETBOOK_HOME ?? '.fleetbook' */
  home?: string;
  /** Where `FLEETBOOK_HOME` is read from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

/** Where large step outputs are kept as files, one folder per run: `<home>/outputs/<runId>/`. */
export function outputsDirOf(home: string): string {
  return join(home, 'outputs');
}

/** The state directory in use: `home`, else `FLEETBOOK_HOME`, else `.fleetbook/`, as an absolute path. */
export function resolveFleetbookHome(options: Pick<OpenRunStoreOptions, 'home' | 'env'> = {}): string {
  const env = options.env ?? process.env;
  return resolve(options.home ?? (env.FLEETBOOK_HOME || defaultFleetbookHome));
}

/**
 * Opens the run store of a Fleetbook home (creating the directory and the store on first
 * use, migrating an older one). Async so a server-backed store can take its place.
 */
export async function openRunStore(options: OpenRunStoreOptions = {}): Promise<RunStore> {
  const home = resolveFleetbookHome(options);
  try {
    mkdirSync(home, { recursive: true });
  } catch (error) {
    throw new StoreError(`Cannot create the Fleetbook home ${home}: ${(error as Error).message}. Set FLEETBOOK_HOME to a writable directory.`, StoreErrorCode.storeUnreadable, { home });
  }
  const { home: _home, env: _env, ...storeOptions } = options;
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
