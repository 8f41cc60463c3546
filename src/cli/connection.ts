/**
 * Where `fleetbook run` sends its calls: the embedded simulator (`--target simulator`), or
 * a platform named by the `FLEETBOOK_*` environment variables, optionally on top of a
 * profile of `fleetbook.yaml` (`profiles: { <name>: { clientId, clientSecret, authUrl,
 * baseUrl, regionalUrl, region } }`). Variables win over the profile.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createPlatformClient, type PlatformClient } from '../api/index.js';
import { UsageError } from '../errors/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import { startSimulator, type Simulator } from '../simulator/index.js';

export interface ConnectionOptions {
  /** `simulator`, or absent for a real platform. */
  target?: string | undefined;
  /** Name of a profile in `fleetbook.yaml`. */
  profile?: string | undefined;
  /** Simulated ms per real ms of the embedded simulator. @default 60 */
  timeScale?: number | undefined;
  env: NodeJS.ProcessEnv;
  /** Where `fleetbook.yaml` is looked for. @default process.cwd() */
  cwd?: string;
  logger: Logger;
  /** The client secret is registered here so no log line shows it. */
  secrets: SecretRegistry;
}

export interface Connection {
  client: PlatformClient;
  /** What the run talks to, for the first lines of output. */
  description: string;
  close(): Promise<void>;
}

/** The connection settings and the variable that sets each. */
const settings = {
  clientId: 'FLEETBOOK_CLIENT_ID',
  clientSecret: 'FLEETBOOK_CLIENT_SECRET',
  authUrl: 'FLEETBOOK_AUTH_URL',
  baseUrl: 'FLEETBOOK_BASE_URL',
  regionalUrl: 'FLEETBOOK_REGIONAL_URL',
  region: 'FLEETBOOK_REGION',
} as const;
type Setting = keyof typeof settings;

/** Region of regional calls against the embedded simulator when FLEETBOOK_REGION names none. */
const SIMULATOR_REGION = 'us-west';

function readProfileDocument(name: string, cwd: string): Record<string, unknown> {
  const file = join(cwd, 'fleetbook.yaml');
  if (!existsSync(file)) throw new UsageError(`--profile ${name}: there is no fleetbook.yaml in ${cwd}.`, 'PROFILE_NOT_FOUND');
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${file} is not valid YAML: ${(error as Error).message}`, 'INVALID_CONFIG');
  }
  const profiles = (document as { profiles?: Record<string, unknown> } | null)?.profiles ?? {};
  const profile = profiles[name];
  if (profile === null || typeof profile !== 'object') {
    const known = Object.keys(profiles);
    throw new UsageError(`${file} has no profile '${name}'${known.length > 0 ? ` (profiles: ${known.join(', ')})` : ''}.`, 'PROFILE_NOT_FOUND');
  }
  return profile as Record<string, unknown>;
}

function readProfile(name: string, cwd: string): Partial<Record<Setting, string>> {
  const profile = readProfileDocument(name, cwd);
  const values: Partial<Record<Setting, string>> = {};
  for (const key of Object.keys(settings) as Setting[]) {
    const value = profile[key];
    if (value !== undefined) values[key] = String(value);
  }
  return values;
}

/**
 * A client of `simulator` as its Administrator API client (`sim-admin`, else the first), whose
 * secret is registered in `secrets` so no log line shows it.
 */
export function simulatorClient(simulator: Simulator, options: { logger: Logger; secrets: SecretRegistry; region?: string }): PlatformClient {
  const admin = simulator.clients.find((client) => client.clientId === 'sim-admin') ?? simulator.clients[0];
  if (!admin) throw new Error('the embedded simulator has no API client');
  options.secrets.add(admin.clientSecret);
  return createPlatformClient({
    credentials: { clientId: admin.clientId, clientSecret: admin.clientSecret },
    authUrl: simulator.authUrl,
    baseUrl: simulator.baseUrl,
    regionalUrl: simulator.regionalUrl,
    region: options.region ?? SIMULATOR_REGION,
    logger: options.logger,
  });
}

export async function openConnection(options: ConnectionOptions): Promise<Connection> {
  const { env, logger, secrets } = options;
  if (options.target !== undefined && options.target !== 'simulator') {
    throw new UsageError(`--target must be 'simulator', got '${options.target}'. Without --target, the FLEETBOOK_* variables name the platform.`, 'INVALID_OPTION');
  }
  if (options.target === 'simulator') {
    const simulator = await startSimulator({ port: 0, timeScale: options.timeScale ?? 60 });
    const client = simulatorClient(simulator, { logger, secrets, region: env.FLEETBOOK_REGION || SIMULATOR_REGION });
    return { client, description: `the embedded simulator at ${simulator.url} (time scale ${options.timeScale ?? 60})`, close: () => simulator.close() };
  }

  const values: Partial<Record<Setting, string>> = options.profile ? readProfile(options.profile, options.cwd ?? process.cwd()) : {};
  for (const [key, variable] of Object.entries(settings) as Array<[Setting, string]>) {
    if (env[variable]) values[key] = env[variable];
  }
  const required: Setting[] = ['clientId', 'clientSecret', 'authUrl', 'baseUrl', 'regionalUrl'];
  const missing = required.filter((key) => !values[key]).map((key) => settings[key]);
  if (missing.length > 0) {
    throw new UsageError(
      `No platform to connect to: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set. ` +
        'Set the FLEETBOOK_* variables (or pick a profile of fleetbook.yaml with --profile), ' +
        'or rehearse against the embedded simulator with --target simulator.',
      'NO_CONNECTION',
      { missing },
    );
  }
  secrets.add(values.clientSecret);
  const client = createPlatformClient({
    credentials: { clientId: values.clientId as string, clientSecret: values.clientSecret as string },
    authUrl: values.authUrl as string,
    baseUrl: values.baseUrl as string,
    regionalUrl: values.regionalUrl as string,
    ...(values.region ? { region: values.region } : {}),
    logger,
  });
  return { client, description: `${values.baseUrl} as ${values.clientId}`, close: async () => undefined };
}

/**
 * The shared store a profile names (`store: postgres://...`), for `openRunStore`; undefined
 * without a profile or without `store:` in it (FLEETBOOK_STORE wins over it there).
 */
export function profileStore(profile: string | undefined, cwd: string = process.cwd()): string | undefined {
  if (!profile) return undefined;
  const value = readProfileDocument(profile, cwd).store;
  return value === undefined || value === null ? undefined : String(value);
}
