import { loadConfigFile } from './config-file.js';
import type { AreaModule } from './context.js';

export const ROLES = ['Administrator', 'Operator', 'Observer'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiClient {
  clientId: string;
  clientSecret: string;
  role: Role;
}

/**
 * A world file: the seed, extra API clients, the platform's limits (token lifetime, rate
 * limits) and one section per area key (that area's `ctx.config`).
 */
export interface WorldFile {
  seed?: number;
  clients?: ApiClient[];
  /** Lifetime of issued tokens, in wall-clock seconds (the `tokenLifetimeSeconds` option wins). */
  tokenLifetimeSeconds?: number;
  /** Multiplies every published per-minute limit (the `rateLimitScale` option wins). */
  rateLimitScale?: number;
  /** Per-minute limits by rate-limit group (merged under the `rateLimits` option). */
  rateLimits?: Record<string, number>;
  [areaKey: string]: unknown;
}

/**
 * Reads and checks a world file (YAML path or object) against the sections the given
 * areas accept and, for `rateLimits`, the given rate-limit groups; problems are reported with their file location (`UsageError`
 * `INVALID_WORLD_FILE`).
 */
export function loadWorldFile(
  source: string | object,
  areas: readonly AreaModule[],
  rateLimitGroups: readonly string[] = [],
): WorldFile {
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      seed: { type: 'integer' },
      clients: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['clientId', 'clientSecret', 'role'],
          properties: {
            clientId: { type: 'string', minLength: 1 },
            clientSecret: { type: 'string', minLength: 1 },
            role: { enum: ROLES },
          },
        },
      },
      tokenLifetimeSeconds: { type: 'integer', minimum: 1 },
      rateLimitScale: { type: 'number', exclusiveMinimum: 0 },
      rateLimits: {
        type: 'object',
        // A misspelt group would silently limit nothing.
        ...(rateLimitGroups.length > 0 ? { propertyNames: { enum: [...rateLimitGroups] } } : {}),
        additionalProperties: { type: 'integer', minimum: 1 },
      },
      ...Object.fromEntries(areas.map((area) => [area.key, area.configSchema ?? { type: 'object' }])),
    },
  };
  return loadConfigFile<WorldFile>(source, schema, 'INVALID_WORLD_FILE', 'world file');
}
