/**
 * The platform description (`schemas/openapi/platform.yaml`) as operation descriptors every
 * layer reads: the client's operation table, the simulator's routes and validators, the
 * playbook loader's `call` input schemas. A leaf: it imports only node and yaml.
 */
import { readPlatformDocument } from './platform-document.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type AsyncFlavour = 'dataServices' | 'devices' | 'subscriptions' | 'reporting';
export type JsonSchema = Record<string, unknown>;

export interface ParamDescriptor {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  /** The parameter's schema, refs inlined. */
  schema: JsonSchema;
  description?: string;
}

export interface OperationDescriptor {
  /** `<area>.<verbNoun>`, e.g. `privateCloud.getSystem`. */
  id: string;
  /** The part of `id` before the dot, e.g. `privateCloud`. */
  area: string;
  method: HttpMethod;
  /** Full path with `{param}` placeholders, e.g. `/private-cloud-business/v1beta1/systems/{id}`. */
  path: string;
  /** Which address the path is appended to: `{regional_url}`, `{base_url}` or `{auth_url}`. */
  base: 'regional' | 'global' | 'auth';
  /** Valid region names of a regional operation. */
  regions?: string[];
  /** Rate-limit bucket, and its published per-minute limit where one is published. */
  rateLimit?: { group: string; perMinute?: number };
  /** On operations answering 202: the flavour of the async operation at `Location`. */
  async?: AsyncFlavour;
  /** On list operations: `limit` default and range; `envelope: false` for a bare array answer (no paging parameters). */
  paging?: { default: number; min: number; max: number; envelope: boolean };
  /** The permission of the reference and the role level it needs. */
  permission?: { permission: string; level: 'view' | 'edit' | 'delete' };
  deprecated: boolean;
  /** Not a GET (the token endpoint excepted); a GET that starts an operation is a write too. */
  isWrite: boolean;
  /** On a write: what it changes and the read that shows that resource as it is (`fleetbook plan`). */
  reads?: WriteReads;
  summary: string;
  description?: string;
  pathParams: ParamDescriptor[];
  queryParams: ParamDescriptor[];
  requestBody?: { contentType: string; required: boolean; schema: JsonSchema };
  /** Response schemas by status code string ('200', '202', ...), refs resolved; `headers`: names of documented response headers. */
  responses: Record<string, { schema?: JsonSchema; contentType?: string; headers: string[] }>;
  /** The 2xx the operation answers on success. */
  successStatus: number;
}

/**
 * `x-fleetbook-reads` of a write. `with` names, per input of the read, the input of the write
 * that gives it (`id`, `body.name`); `pick` takes, from a read answering a list, the item whose
 * `field` equals the write's input `equals`; `effect`, on an action, says which field of which
 * items of the answer the write sets, and to what.
 */
export interface WriteReads {
  change: 'create' | 'update' | 'delete' | 'action';
  operation: string;
  with: Record<string, string>;
  pick?: { field: string; equals: string };
  effect?: { list: string; match?: { field: string; in: string }; field: string; to: string };
}

export interface PlatformDescription {
  /** The parsed document as written (with its `$ref`s). */
  document: Record<string, unknown>;
  /** Every operation, in document order. */
  operations: OperationDescriptor[];
  byId: ReadonlyMap<string, OperationDescriptor>;
  /** `components.schemas`, refs inlined. */
  schemas: Record<string, JsonSchema>;
}

/** The description is malformed (a bug of platform.yaml, not of the caller). */
export class PlatformDescriptionError extends Error {
  readonly code = 'PLATFORM_DESCRIPTION_INVALID';
  constructor(message: string) {
    super(`schemas/openapi/platform.yaml: ${message}`);
    this.name = 'PlatformDescriptionError';
  }
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const BASES = ['regional', 'global', 'auth'] as const;
const FLAVOURS = ['dataServices', 'devices', 'subscriptions', 'reporting'] as const;
const LEVELS = ['view', 'edit', 'delete'] as const;
const CHANGES = ['create', 'update', 'delete', 'action'] as const;

let cached: PlatformDescription | undefined;

/** Loads, resolves and caches the platform description; every later call returns the same (frozen) object. */
export function loadPlatformDescription(): PlatformDescription {
  cached ??= buildPlatformDescription(readPlatformDocument().document);
  return cached;
}

const inputSchemas = new WeakMap<OperationDescriptor, JsonSchema>();

/**
 * The JSON Schema (2020-12) of a call's input: path and query parameters by name, plus `body`
 * when the operation takes one; `additionalProperties: false` so a misspelt name is an error.
 */
export function inputSchemaOf(op: OperationDescriptor): JsonSchema {
  let schema = inputSchemas.get(op);
  if (!schema) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const param of [...op.pathParams, ...op.queryParams]) {
      properties[param.name] =
        param.description !== undefined && param.schema.description === undefined
          ? { ...param.schema, description: param.description }
          : param.schema;
      if (param.required) required.push(param.name);
    }
    if (op.requestBody) {
      properties.body = op.requestBody.schema;
      if (op.requestBody.required) required.push('body');
    }
    schema = deepFreeze({
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    });
    inputSchemas.set(op, schema);
  }
  return schema;
}

/** The description of a parsed OpenAPI document (`loadPlatformDescription` builds the package's). */
export function buildPlatformDescription(document: unknown): PlatformDescription {
  if (!isObject(document)) throw new PlatformDescriptionError('not a YAML mapping');
  const resolver = createResolver(document);
  const paths = isObject(document.paths) ? document.paths : {};
  const operations: OperationDescriptor[] = [];
  const byId = new Map<string, OperationDescriptor>();
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = resolver.resolve(rawItem, `paths.${path}`);
    for (const method of METHODS) {
      const rawOp = item[method];
      if (rawOp === undefined) continue;
      const op = describeOperation(path, method, resolver.resolve(rawOp, `${method} ${path}`), item, resolver);
      if (byId.has(op.id)) throw new PlatformDescriptionError(`duplicate operationId '${op.id}'`);
      byId.set(op.id, op);
      operations.push(op);
    }
  }
  checkWriteReads(operations, byId);
  const components = isObject(document.components) ? document.components : {};
  const rawSchemas = isObject(components.schemas) ? components.schemas : {};
  const schemas: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(rawSchemas)) {
    schemas[name] = resolver.resolve(schema, `components.schemas.${name}`);
  }
  return deepFreeze({ document, operations, byId, schemas });
}

function describeOperation(
  path: string,
  method: (typeof METHODS)[number],
  op: Record<string, unknown>,
  pathItem: Record<string, unknown>,
  resolver: Resolver,
): OperationDescriptor {
  const where = `${method.toUpperCase()} ${path}`;
  const id = op.operationId;
  if (typeof id !== 'string' || !id.includes('.')) {
    throw new PlatformDescriptionError(`${where}: operationId must be '<area>.<verbNoun>', got ${JSON.stringify(id)}`);
  }
  const at = `${id} (${where})`;
  const base = oneOf(op['x-fleetbook-base'], BASES, `${at}: x-fleetbook-base`);

  const params = [...asArray(pathItem.parameters), ...asArray(op.parameters)].map((raw) =>
    describeParam(resolver.resolve(raw, `${at}: parameter`), at),
  );
  const responses = describeResponses(op, at, resolver);
  const successes = Object.keys(responses)
    .map(Number)
    .filter((status) => status >= 200 && status < 300)
    .sort((a, b) => a - b);
  const successStatus = successes[0];
  if (successStatus === undefined) throw new PlatformDescriptionError(`${at}: no 2xx response`);

  const requestBody = describeRequestBody(op, at, resolver);
  const httpMethod = method.toUpperCase() as HttpMethod;
  const explicitWrite = op['x-fleetbook-write'];
  return {
    id,
    area: id.slice(0, id.indexOf('.')),
    method: httpMethod,
    path,
    base,
    ...platformExtensions(op, at),
    deprecated: op.deprecated === true,
    isWrite: typeof explicitWrite === 'boolean' ? explicitWrite : httpMethod !== 'GET',
    summary: typeof op.summary === 'string' ? op.summary : id,
    ...(typeof op.description === 'string' ? { description: op.description.trim() } : {}),
    pathParams: params.filter((p) => p.in === 'path'),
    queryParams: params.filter((p) => p.in === 'query'),
    ...(requestBody ? { requestBody } : {}),
    responses,
    successStatus,
  };
}

function describeResponses(
  op: Record<string, unknown>,
  at: string,
  resolver: Resolver,
): OperationDescriptor['responses'] {
  const responses: OperationDescriptor['responses'] = {};
  for (const [status, rawResponse] of Object.entries(isObject(op.responses) ? op.responses : {})) {
    const response = resolver.resolve(rawResponse, `${at}: response ${status}`);
    const media = firstMedia(response.content);
    responses[status] = {
      ...(media?.schema ? { schema: media.schema } : {}),
      ...(media ? { contentType: media.contentType } : {}),
      headers: Object.keys(isObject(response.headers) ? response.headers : {}),
    };
  }
  return responses;
}

function describeRequestBody(
  op: Record<string, unknown>,
  at: string,
  resolver: Resolver,
): OperationDescriptor['requestBody'] {
  if (op.requestBody === undefined) return undefined;
  const body = resolver.resolve(op.requestBody, `${at}: requestBody`);
  const media = firstMedia(body.content);
  if (!media?.schema) throw new PlatformDescriptionError(`${at}: requestBody without a schema`);
  return { contentType: media.contentType, required: body.required === true, schema: media.schema };
}

/** The platform's own `x-fleetbook-*` facts of an operation, each only when the description gives it. */
function platformExtensions(
  op: Record<string, unknown>,
  at: string,
): Pick<OperationDescriptor, 'regions' | 'rateLimit' | 'async' | 'paging' | 'permission' | 'reads'> {
  const rateLimit = op['x-fleetbook-rate-limit'];
  const paging = op['x-fleetbook-paging'];
  const permission = op['x-fleetbook-permission'];
  const regions = op['x-fleetbook-regions'];
  const reads = op['x-fleetbook-reads'];
  return {
    ...(isObject(reads) ? { reads: describeReads(reads, at) } : {}),
    ...(Array.isArray(regions) ? { regions: regions.map(String) } : {}),
    ...(isObject(rateLimit)
      ? {
          rateLimit: {
            group: String(rateLimit.group),
            ...(typeof rateLimit.perMinute === 'number' ? { perMinute: rateLimit.perMinute } : {}),
          },
        }
      : {}),
    ...(op['x-fleetbook-async'] !== undefined
      ? { async: oneOf(op['x-fleetbook-async'], FLAVOURS, `${at}: x-fleetbook-async`) }
      : {}),
    ...(isObject(paging)
      ? {
          paging: {
            default: Number(paging.default),
            min: Number(paging.min),
            max: Number(paging.max),
            envelope: paging.envelope !== false,
          },
        }
      : {}),
    ...(isObject(permission)
      ? {
          permission: {
            permission: String(permission.permission),
            level: oneOf(permission.level, LEVELS, `${at}: x-fleetbook-permission.level`),
          },
        }
      : {}),
  };
}

function describeReads(reads: Record<string, unknown>, at: string): WriteReads {
  const strings = (value: unknown, field: string): Record<string, string> => {
    if (value === undefined) return {};
    if (!isObject(value) || Object.values(value).some((entry) => typeof entry !== 'string'))
      throw new PlatformDescriptionError(`${at}: x-fleetbook-reads.${field} must map names to input names`);
    return value as Record<string, string>;
  };
  const effect = reads.effect;
  const pick = strings(reads.pick, 'pick');
  return {
    change: oneOf(reads.change, CHANGES, `${at}: x-fleetbook-reads.change`),
    operation: String(reads.operation),
    with: strings(reads.with, 'with'),
    ...(pick.field !== undefined && pick.equals !== undefined
      ? { pick: { field: pick.field, equals: pick.equals } }
      : {}),
    ...(isObject(effect)
      ? {
          effect: {
            list: String(effect.list),
            ...(isObject(effect.match)
              ? { match: { field: String(effect.match.field), in: String(effect.match.in) } }
              : {}),
            field: String(effect.field),
            to: String(effect.to),
          },
        }
      : {}),
  };
}

/** Every write names its read, and that read is an operation of the description that changes nothing. */
function checkWriteReads(operations: readonly OperationDescriptor[], byId: ReadonlyMap<string, OperationDescriptor>) {
  for (const op of operations) {
    if (!op.isWrite || op.base === 'auth') continue;
    if (!op.reads) throw new PlatformDescriptionError(`${op.id}: a write without x-fleetbook-reads`);
    const read = byId.get(op.reads.operation);
    if (!read || read.isWrite)
      throw new PlatformDescriptionError(`${op.id}: x-fleetbook-reads.operation '${op.reads.operation}' is not a read`);
  }
}

function describeParam(param: Record<string, unknown>, at: string): ParamDescriptor {
  const location = param.in;
  if (location !== 'path' && location !== 'query') {
    throw new PlatformDescriptionError(
      `${at}: parameter ${String(param.name)} is in '${String(location)}'; only path and query are supported`,
    );
  }
  return {
    name: String(param.name),
    in: location,
    required: location === 'path' || param.required === true,
    schema: isObject(param.schema) ? param.schema : {},
    ...(typeof param.description === 'string' ? { description: param.description } : {}),
  };
}

function firstMedia(content: unknown): { contentType: string; schema?: JsonSchema } | undefined {
  if (!isObject(content)) return undefined;
  const [contentType, media] = Object.entries(content)[0] ?? [];
  if (contentType === undefined) return undefined;
  return { contentType, ...(isObject(media) && isObject(media.schema) ? { schema: media.schema } : {}) };
}

interface Resolver {
  /** `value` with every local `$ref` inlined, recursively (a mapping is expected). */
  resolve(value: unknown, where: string): Record<string, unknown>;
}

/**
 * Inlines local `$ref`s (`#/components/...`). Each target is resolved once and shared, so the
 * result is a DAG; a recursive schema is refused, since consumers need fully inlined schemas.
 * Keywords beside a `$ref` (3.1 allows them, e.g. a `description`) override the target's.
 */
function createResolver(document: Record<string, unknown>): Resolver {
  const done = new Map<string, unknown>();
  const active: string[] = [];

  function target(ref: string): unknown {
    if (!ref.startsWith('#/')) throw new PlatformDescriptionError(`only local $refs are supported, got '${ref}'`);
    let node: unknown = document;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (!isObject(node) || !(key in node)) throw new PlatformDescriptionError(`unresolved $ref '${ref}'`);
      node = node[key];
    }
    return node;
  }

  function inline(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(inline);
    if (!isObject(value)) return value;
    const { $ref, ...rest } = value;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(rest)) out[key] = inline(child);
    if (typeof $ref !== 'string') return out;
    if (active.includes($ref)) {
      throw new PlatformDescriptionError(
        `recursive $ref '${$ref}' (via ${active.join(' → ')}): keep schemas non-recursive`,
      );
    }
    let resolved = done.get($ref);
    if (resolved === undefined) {
      active.push($ref);
      resolved = inline(target($ref));
      active.pop();
      done.set($ref, resolved);
    }
    return Object.keys(out).length && isObject(resolved) ? { ...resolved, ...out } : resolved;
  }

  return {
    resolve(value, where) {
      const resolved = inline(value);
      if (!isObject(resolved)) throw new PlatformDescriptionError(`${where}: expected a mapping`);
      return resolved;
    },
  };
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new PlatformDescriptionError(`${what} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    const children = value instanceof Map ? [...value.values()] : Object.values(value);
    for (const child of children) deepFreeze(child);
  }
  return value;
}
