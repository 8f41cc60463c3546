/**
 * Where `fleetbook run` sends its calls: the embedded simulator (`--target simulator`), or
 * a platform named by the `FLEETBOOK_*` environment variables, optionally on top of a
 * profile of `fleetbook.yaml` (`profiles: { <name>: { clientId, clientSecret, authUrl,
 * baseUrl, regionalUrl, region, rateLimits } }`). Variables win over the profile.
 * A profile's `rateLimits: { defaultPerMinute, perMinute: { <group>: n } }` sets the client's
 * pace: groups without a published limit go at `defaultPerMinute` (600 unless set), and a
 * group named in `perMinute` at that many requests a minute. A server that sends
 * `ratelimit-limit` headers is followed over both.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  createPlatformClient,
  type PlatformClient,
  type PlatformClientOptions,
  type SharedRateBudget,
} from '../api/index.js';
import { didYouMean, UsageError } from '../errors/index.js';
import type { Logger, SecretRegistry } from '../logging/index.js';
import { startSimulator, type Simulator, type SimulatorSnapshot } from '../simulator/index.js';
import type { RunStore } from '../store/index.js';

export interface ConnectionOptions {
  /** `simulator`, or absent for a real platform. */
  target?: string | undefined;
  /** Name of a profile in `fleetbook.yaml`. */
  profile?: string | undefined;
  /** Simulated ms per real ms of the embedded simulator; refused against a real platform. @default 60 */
  timeScale?: number | undefined;
  /** The embedded simulator's world file, fault file and seed (`run --world/--faults/--seed`); refused against a real platform. */
  simulator?: {
    world?: string | undefined;
    faults?: string | undefined;
    seed?: number | undefined;
    /** A saved world to continue (saved-world.ts), instead of a new one; `timeScale` defaults to its own. */
    restore?: SimulatorSnapshot | undefined;
  };
  env: NodeJS.ProcessEnv;
  /** The embedded simulator's region of regional calls, whatever FLEETBOOK_REGION says (the demo's). */
  region?: string;
  /** Where `fleetbook.yaml` is looked for. @default process.cwd() */
  cwd?: string;
  logger: Logger;
  /** The client secret is registered here so no log line shows it. */
  secrets: SecretRegistry;
  /**
   * The run store whose rate buckets the client shares with every other process using it (a
   * daemon and a manual run on one machine, workers of a team), per connection and group.
   */
  store?: RunStore;
}

/**
 * The store's GCRA buckets as the client's shared budget: a bucket per (connection, group),
 * the connection named by its client id and base URL (never its secret).
 */
export function storeRateBudget(store: RunStore, connectionKey: string): SharedRateBudget {
  const timing = (perMinute: number, burst: number) => {
    const intervalMs = 60_000 / perMinute;
    return { intervalMs, toleranceMs: Math.max(0, burst - 1) * intervalMs };
  };
  return {
    take(group, perMinute, burst) {
      const { intervalMs, toleranceMs } = timing(perMinute, burst);
      return store.takeRate(`${connectionKey}|${group}`, intervalMs, toleranceMs);
    },
    push(group, ms, perMinute, burst) {
      return store.pushRate(`${connectionKey}|${group}`, Date.now() + ms, timing(perMinute, burst).toleranceMs);
    },
  };
}

export interface Connection {
  client: PlatformClient;
  /** What the run talks to, for the first lines of output. */
  description: string;
  /** The embedded simulator's world as it is now, to save beside the run (saved-world.ts); absent for a platform. */
  snapshot?: () => SimulatorSnapshot;
  /** The embedded simulator itself (its URL, its outbox); absent for a platform. */
  simulator?: Simulator;
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

/** Simulated ms per real ms of the embedded simulator when `--time-scale` is not given. */
export const DEFAULT_TIME_SCALE = 60;

/** Region of regional calls against the embedded simulator when FLEETBOOK_REGION names none, and the one `fleetbook simulate` prints. */
export const SIMULATOR_REGION = 'us-west';

type RateLimits = NonNullable<PlatformClientOptions['rateLimits']>;

/** A profile's `rateLimits`, checked: whole numbers of requests a minute, at least 1. */
function readRateLimits(value: unknown, where: string): RateLimits | undefined {
  if (value === undefined) return undefined;
  const count = (field: string, n: unknown): number => {
    if (typeof n === 'number' && Number.isInteger(n) && n >= 1) return n;
    throw new UsageError(
      `${where}.rateLimits.${field} must be a whole number of requests a minute (at least 1), got ${JSON.stringify(n)}`,
      'INVALID_CONFIG',
    );
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(
      `${where}.rateLimits must be a mapping: { defaultPerMinute: 1200, perMinute: { privateCloud: 300 } }`,
      'INVALID_CONFIG',
    );
  const { defaultPerMinute, perMinute, ...unknown } = value as Record<string, unknown>;
  const extra = Object.keys(unknown);
  if (extra.length > 0)
    throw new UsageError(
      `${where}.rateLimits has no '${extra[0]}': it takes defaultPerMinute and perMinute.${didYouMean(extra[0] ?? '', ['defaultPerMinute', 'perMinute'])}`,
      'INVALID_CONFIG',
    );
  if (perMinute !== undefined && (perMinute === null || typeof perMinute !== 'object' || Array.isArray(perMinute)))
    throw new UsageError(
      `${where}.rateLimits.perMinute must map rate-limit groups to requests a minute`,
      'INVALID_CONFIG',
    );
  return {
    ...(defaultPerMinute === undefined ? {} : { defaultPerMinute: count('defaultPerMinute', defaultPerMinute) }),
    ...(perMinute === undefined
      ? {}
      : {
          perMinute: Object.fromEntries(
            Object.entries(perMinute as Record<string, unknown>).map(([group, n]) => [
              group,
              count(`perMinute.${group}`, n),
            ]),
          ),
        }),
  };
}

function readProfileDocument(name: string, cwd: string): Record<string, unknown> {
  const file = join(cwd, 'fleetbook.yaml');
  if (!existsSync(file))
    throw new UsageError(`--profile ${name}: there is no fleetbook.yaml in ${cwd}.`, 'PROFILE_NOT_FOUND');
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
    throw new UsageError(
      `${file} has no profile '${name}'${known.length > 0 ? ` (profiles: ${known.join(', ')})` : ''}.`,
      'PROFILE_NOT_FOUND',
    );
  }
  return profile as Record<string, unknown>;
}

function readProfile(name: string, cwd: string): Partial<Record<Setting, string>> & { rateLimits?: RateLimits } {
  const profile = readProfileDocument(name, cwd);
  const values: Partial<Record<Setting, string>> & { rateLimits?: RateLimits } = {};
  for (const key of Object.keys(settings) as Setting[]) {
    const value = profile[key];
    if (value !== undefined) values[key] = String(value);
  }
  const rateLimits = readRateLimits(profile.rateLimits, `${join(cwd, 'fleetbook.yaml')}: profiles.${name}`);
  if (rateLimits) values.rateLimits = rateLimits;
  return values;
}

/**
 * A client of `simulator` as its Administrator API client (`sim-admin`, else the first), whose
 * secret is registered in `secrets` so no log line shows it.
 */
export function simulatorClient(
  simulator: Simulator,
  options: { logger: Logger; secrets: SecretRegistry; region?: string },
): PlatformClient {
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

type PlatformSettings = Partial<Record<Setting, string>> & { rateLimits?: RateLimits };

/**
 * The platform's settings from the profile and the FLEETBOOK_* variables (these win), or the
 * `NO_CONNECTION` error naming the ones missing. Reads no network: a command checks with it
 * that it can connect before it records anything (`approve`).
 */
export function platformSettings(options: Pick<ConnectionOptions, 'env' | 'profile' | 'cwd'>): PlatformSettings {
  const values: PlatformSettings = options.profile ? readProfile(options.profile, options.cwd ?? process.cwd()) : {};
  for (const [key, variable] of Object.entries(settings) as Array<[Setting, string]>) {
    if (options.env[variable]) values[key] = options.env[variable];
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
  return values;
}

export async function openConnection(options: ConnectionOptions): Promise<Connection> {
  const { env, logger, secrets } = options;
  if (options.target !== undefined && options.target !== 'simulator') {
    throw new UsageError(
      `--target must be 'simulator', got '${options.target}'. Without --target, the FLEETBOOK_* variables name the platform.`,
      'INVALID_OPTION',
    );
  }
  const { world, faults, seed, restore } = options.simulator ?? {};
  const timeScale = options.timeScale ?? restore?.timeScale ?? DEFAULT_TIME_SCALE;
  if (options.target === 'simulator') {
    const simulator = await startSimulator({
      port: 0,
      timeScale,
      ...(world === undefined ? {} : { world }),
      ...(faults === undefined ? {} : { faults }),
      ...(seed === undefined ? {} : { seed }),
      ...(restore === undefined ? {} : { restore }),
    });
    const client = simulatorClient(simulator, {
      logger,
      secrets,
      region: options.region ?? (env.FLEETBOOK_REGION || SIMULATOR_REGION),
    });
    const rehearsal = [
      restore === undefined ? '' : 'the saved world of the run',
      world === undefined ? '' : `world ${world}`,
      faults === undefined ? '' : `faults ${faults}`,
      `seed ${simulator.control.world().seed}`,
    ]
      .filter(Boolean)
      .join(', ');
    return {
      client,
      description: `the embedded simulator at ${simulator.url} (time scale ${timeScale}, ${rehearsal})`,
      snapshot: () => simulator.control.snapshot(),
      simulator,
      close: () => simulator.close(),
    };
  }
  // Against a real platform these would be silently ignored: time passes as it does, the world is the account's.
  const simulatorOnly = [
    options.timeScale === undefined ? '' : '--time-scale',
    world === undefined ? '' : '--world',
    faults === undefined ? '' : '--faults',
    seed === undefined ? '' : '--seed',
  ].filter(Boolean);
  if (simulatorOnly.length > 0) {
    throw new UsageError(
      `${simulatorOnly.join(', ')} ${simulatorOnly.length === 1 ? 'applies' : 'apply'} only to the embedded simulator: add --target simulator, or leave ${simulatorOnly.length === 1 ? 'it' : 'them'} out to run against the platform the FLEETBOOK_* variables name.`,
      'INVALID_OPTION',
    );
  }

  const values = platformSettings(options);
  secrets.add(values.clientSecret);
  const client = createPlatformClient({
    credentials: { clientId: values.clientId as string, clientSecret: values.clientSecret as string },
    authUrl: values.authUrl as string,
    baseUrl: values.baseUrl as string,
    regionalUrl: values.regionalUrl as string,
    ...(values.region ? { region: values.region } : {}),
    ...(values.rateLimits ? { rateLimits: values.rateLimits } : {}),
    ...(options.store
      ? { sharedRateBudget: storeRateBudget(options.store, `${values.clientId}@${values.baseUrl}`) }
      : {}),
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
