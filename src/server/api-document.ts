/**
 * The API's description, `schemas/openapi/fleetbook-api.yaml`: the routes take their request
 * schemas (path, query, header parameters and JSON bodies) and the role they need from it,
 * so what the document says is what the server checks.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { TokenRole } from '../store/index.js';

// src/server/ under vitest and dist/server/ after the build: the package root is two levels up.
export const API_DOCUMENT_PATH = fileURLToPath(new URL('../../schemas/openapi/fleetbook-api.yaml', import.meta.url));

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Json;
}

/** What a route of the API is, from the document. */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** In fastify's spelling: `/api/v1/runs/:runId`. */
  url: string;
  /** The role the operation needs; undefined for the open ones (`/healthz`). */
  role?: TokenRole;
  /** fastify's `schema` of the route: params, querystring, headers, body. */
  schema: Json;
  /** The body may be left out (`requestBody.required` false): it is then validated as `{}`. */
  optionalBody: boolean;
}

let cached: Json | undefined;

export function readApiDocument(): Json {
  cached ??= parse(readFileSync(API_DOCUMENT_PATH, 'utf8')) as Json;
  return cached;
}

/** `value` with every local `$ref` replaced by what it points at (request schemas hold no cycles). */
function inline(document: Json, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => inline(document, item));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, key) => (node as Json | undefined)?.[key.replaceAll('~1', '/').replaceAll('~0', '~')],
        document,
      );
    if (target === undefined) throw new Error(`fleetbook-api.yaml: ${ref} points at nothing`);
    return inline(document, target);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inline(document, item)]));
}

/** The route of `operationId`, with its request schemas for fastify. */
export function apiRoute(operationId: string, document: Json = readApiDocument()): ApiRoute {
  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation.operationId !== operationId) continue;
      const parameters = (inline(document, operation.parameters ?? []) as Parameter[]).map((parameter) => ({
        ...parameter,
        // fastify sees header names in lower case.
        name: parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name,
      }));
      const group = (where: Parameter['in']): Json | undefined => {
        const chosen = parameters.filter((parameter) => parameter.in === where);
        if (chosen.length === 0) return undefined;
        return {
          type: 'object',
          properties: Object.fromEntries(chosen.map((parameter) => [parameter.name, parameter.schema])),
          required: chosen.filter((parameter) => parameter.required === true).map((parameter) => parameter.name),
        };
      };
      const requestBody = inline(document, operation.requestBody) as Json | undefined;
      const body = requestBody?.content as Record<string, { schema: Json }> | undefined;
      const schema: Json = {};
      for (const [key, where] of [
        ['params', 'path'],
        ['querystring', 'query'],
        ['headers', 'header'],
      ] as const) {
        const built = group(where);
        if (built) schema[key] = built;
      }
      if (body?.['application/json']) schema.body = body['application/json'].schema;
      const role = operation['x-fleetbook-role'] as TokenRole | undefined;
      return {
        method: method.toUpperCase() as ApiRoute['method'],
        url: path.replace(/\{(\w+)\}/g, ':$1'),
        schema,
        optionalBody: requestBody !== undefined && requestBody.required !== true,
        ...(role ? { role } : {}),
      };
    }
  }
  throw new Error(`fleetbook-api.yaml has no operation ${operationId}`);
}
