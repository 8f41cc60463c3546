/**
 * Compares the platform description (schemas/openapi/platform.yaml) with the platform's
 * published OpenAPI descriptions, operation by operation, and names every difference with a
 * stable key (`<area> <METHOD> <published path> <where>: <what>`), so an allowlist of
 * deliberate differences can be kept in the repository and checked both ways.
 *
 * Both documents are dereferenced first; schemas are compared field by field down to
 * MAX_DEPTH (the published schemas are recursive in places). Nullability (`type: [x, 'null']`)
 * is not compared: only the non-null type.
 */
import { dereference } from '@readme/openapi-parser';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PUBLISHED_DIR = path.resolve(REPO_ROOT, '..', 'shared', 'spec', 'published');
export const PROJECT_DESCRIPTION = path.join(REPO_ROOT, 'schemas', 'openapi', 'platform.yaml');
export const ALLOWLIST_DIR = path.join(REPO_ROOT, 'schemas', 'openapi', 'published-differences');

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const MAX_DEPTH = 8;

type Json = Record<string, unknown>;

export interface AllowlistEntry {
  key: string;
  reason: string;
}

interface Operation {
  method: string;
  /** The path as written (with the server's path prefix), placeholders named as written. */
  path: string;
  op: Json;
  /** Path-level parameters. */
  shared: unknown[];
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{systemId}` and `{id}` name the same segment: operations are matched on the path's shape. */
const shapeOf = (p: string): string => p.replace(/\{[^}]+\}/g, '{}').replace(/\/+$/, '');

/** The path part of the document's first server URL (`https://host/identity/v1` → `/identity/v1`), if any. */
function serverPrefix(document: Json): string {
  const servers = Array.isArray(document.servers) ? document.servers : [];
  const url = isObject(servers[0]) && typeof servers[0].url === 'string' ? servers[0].url : '';
  if (!url || url.startsWith('{')) return '';
  try {
    return new URL(url, 'http://host').pathname.replace(/\/+$/, '');
  } catch {
    return '';
  }
}

function operationsOf(document: Json): Operation[] {
  const prefix = serverPrefix(document);
  const found: Operation[] = [];
  for (const [p, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (isObject(op)) {
        found.push({
          method: method.toUpperCase(),
          path: prefix + p,
          op,
          shared: Array.isArray(item.parameters) ? item.parameters : [],
        });
      }
    }
  }
  return found;
}

// ------------------------------------------------------------------ schemas

interface Flat {
  types: string[];
  properties: Record<string, unknown>;
  required: string[];
  enum?: string[];
  items?: unknown;
}

/** One view of a schema: allOf merged, oneOf/anyOf alternatives' properties united, null dropped from types. */
function flatten(schema: unknown, depth = 0): Flat {
  const flat: Flat = { types: [], properties: {}, required: [] };
  if (!isObject(schema) || depth > MAX_DEPTH) return flat;
  const add = (part: Flat, withRequired: boolean): void => {
    for (const t of part.types) if (!flat.types.includes(t)) flat.types.push(t);
    for (const [name, prop] of Object.entries(part.properties)) flat.properties[name] ??= prop;
    if (withRequired) for (const r of part.required) if (!flat.required.includes(r)) flat.required.push(r);
    if (part.enum) flat.enum = [...new Set([...(flat.enum ?? []), ...part.enum])];
    flat.items ??= part.items;
  };
  const type = schema.type;
  for (const t of Array.isArray(type) ? type : type === undefined ? [] : [type]) {
    if (typeof t === 'string' && t !== 'null' && !flat.types.includes(t)) flat.types.push(t);
  }
  if (isObject(schema.properties)) Object.assign(flat.properties, schema.properties);
  if (Array.isArray(schema.required))
    flat.required.push(...schema.required.filter((r): r is string => typeof r === 'string'));
  if (Array.isArray(schema.enum)) flat.enum = schema.enum.filter((v) => v !== null).map(String);
  if (schema.const !== undefined && schema.const !== null) flat.enum = [String(schema.const)];
  if (schema.items !== undefined) flat.items = schema.items;
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) add(flatten(part, depth + 1), true);
  // Alternatives: their fields are all possible; a field is required only if every alternative requires it.
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const alternatives = Array.isArray(schema[keyword]) ? schema[keyword].map((s) => flatten(s, depth + 1)) : [];
    const nonNull = alternatives.filter((a) => a.types.length || Object.keys(a.properties).length || a.enum || a.items);
    for (const alternative of nonNull) add(alternative, false);
    if (nonNull.length) {
      const everywhere = nonNull[0]!.required.filter((r) => nonNull.every((a) => a.required.includes(r)));
      for (const r of everywhere) if (!flat.required.includes(r)) flat.required.push(r);
    }
  }
  if (!flat.types.length && Object.keys(flat.properties).length) flat.types.push('object');
  if (!flat.types.length && flat.items !== undefined) flat.types.push('array');
  flat.types.sort();
  return flat;
}

const list = (values: string[]): string => `[${[...values].sort().join(', ')}]`;

/** Differences between a published schema and the project's, keys prefixed with `where`. */
export function compareSchemas(published: unknown, project: unknown, where: string, depth = 0): string[] {
  if (depth > MAX_DEPTH) return [];
  const pub = flatten(published);
  const own = flatten(project);
  const found: string[] = [];
  // An untyped schema on either side (`{}`) accepts anything: only compare what both state.
  if (pub.types.length && own.types.length && list(pub.types) !== list(own.types)) {
    found.push(`${where}: type published ${pub.types.join('|')}, project ${own.types.join('|')}`);
  }
  if (pub.enum || own.enum) {
    const missing = (pub.enum ?? []).filter((v) => !(own.enum ?? []).includes(v));
    const extra = (own.enum ?? []).filter((v) => !(pub.enum ?? []).includes(v));
    if (!own.enum) found.push(`${where}: enum missing`);
    else if (!pub.enum) found.push(`${where}: enum extra ${list(own.enum)}`);
    else {
      if (missing.length) found.push(`${where}: enum values missing ${list(missing)}`);
      if (extra.length) found.push(`${where}: enum values extra ${list(extra)}`);
    }
  }
  for (const [name, schema] of Object.entries(pub.properties)) {
    const field = `${where}.${name}`;
    if (!(name in own.properties)) {
      found.push(`${field}: missing`);
      continue;
    }
    const requiredHere = pub.required.includes(name);
    if (requiredHere !== own.required.includes(name)) {
      found.push(`${field}: ${requiredHere ? 'required in published only' : 'required in project only'}`);
    }
    found.push(...compareSchemas(schema, own.properties[name], field, depth + 1));
  }
  for (const name of Object.keys(own.properties)) {
    if (!(name in pub.properties) && Object.keys(pub.properties).length) found.push(`${where}.${name}: extra`);
  }
  if (pub.items !== undefined && own.items !== undefined)
    found.push(...compareSchemas(pub.items, own.items, `${where}[]`, depth + 1));
  return found;
}

// ------------------------------------------------------------------ operations

interface Param {
  name: string;
  in: string;
  required: boolean;
  schema: unknown;
}

function paramsOf(operation: Operation): Param[] {
  const byKey = new Map<string, Param>();
  for (const raw of [...operation.shared, ...(Array.isArray(operation.op.parameters) ? operation.op.parameters : [])]) {
    if (!isObject(raw) || typeof raw.name !== 'string' || typeof raw.in !== 'string') continue;
    byKey.set(`${raw.in}:${raw.name}`, {
      name: raw.name,
      in: raw.in,
      required: raw.required === true,
      schema: raw.schema,
    });
  }
  return [...byKey.values()].filter((p) => p.in !== 'cookie');
}

/** Path parameters by position: `{id}` here may be `{systemId}` there. */
function pathParamNames(p: string): string[] {
  return [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

function compareParams(published: Operation, project: Operation): string[] {
  const found: string[] = [];
  const ownPathNames = pathParamNames(project.path);
  const pubPathNames = pathParamNames(published.path);
  const ownParams = paramsOf(project);
  const pubParams = paramsOf(published);
  const ownByKey = new Map(ownParams.map((p) => [`${p.in}:${p.name}`, p]));
  const counterpart = (p: Param): Param | undefined =>
    p.in === 'path'
      ? ownByKey.get(`path:${ownPathNames[pubPathNames.indexOf(p.name)] ?? p.name}`)
      : ownByKey.get(`${p.in}:${p.name}`);
  for (const param of pubParams) {
    const where = `param.${param.in}.${param.name}`;
    const own = counterpart(param);
    if (!own) {
      found.push(`${where}: missing`);
      continue;
    }
    if (param.required !== own.required)
      found.push(`${where}: ${param.required ? 'required in published only' : 'required in project only'}`);
    found.push(...compareSchemas(param.schema, own.schema, where));
  }
  const matched = new Set(pubParams.map((p) => counterpart(p)).filter(Boolean));
  for (const own of ownParams) if (!matched.has(own)) found.push(`param.${own.in}.${own.name}: extra`);
  return found;
}

function contentOf(holder: unknown): Record<string, Json> {
  const content = isObject(holder) && isObject(holder.content) ? holder.content : {};
  return Object.fromEntries(Object.entries(content).filter((e): e is [string, Json] => isObject(e[1])));
}

/** The schema of the JSON-ish media type (merge-patch and `application/json` count as one body). */
function jsonSchemaOf(content: Record<string, Json>): unknown {
  const type = Object.keys(content).find((t) => /json/.test(t)) ?? Object.keys(content)[0];
  return type === undefined ? undefined : content[type]!.schema;
}

function compareContent(published: unknown, project: unknown, where: string): string[] {
  const found: string[] = [];
  const pub = contentOf(published);
  const own = contentOf(project);
  for (const type of Object.keys(pub)) if (!(type in own)) found.push(`${where}.contentType ${type}: missing`);
  for (const type of Object.keys(own)) if (!(type in pub)) found.push(`${where}.contentType ${type}: extra`);
  const pubSchema = jsonSchemaOf(pub);
  const ownSchema = jsonSchemaOf(own);
  if (pubSchema !== undefined && ownSchema !== undefined) found.push(...compareSchemas(pubSchema, ownSchema, where));
  else if (pubSchema !== undefined && Object.keys(own).length === 0) found.push(`${where}: body missing`);
  else if (ownSchema !== undefined && Object.keys(pub).length === 0) found.push(`${where}: body extra`);
  return found;
}

function compareOperation(published: Operation, project: Operation): string[] {
  const found = compareParams(published, project);
  const pubBody = published.op.requestBody;
  const ownBody = project.op.requestBody;
  if (isObject(pubBody) || isObject(ownBody)) {
    if (!isObject(ownBody)) found.push('requestBody: missing');
    else if (!isObject(pubBody)) found.push('requestBody: extra');
    else {
      if ((pubBody.required === true) !== (ownBody.required === true)) {
        found.push(
          `requestBody: ${pubBody.required === true ? 'required in published only' : 'required in project only'}`,
        );
      }
      found.push(...compareContent(pubBody, ownBody, 'requestBody'));
    }
  }
  const pubResponses = isObject(published.op.responses) ? published.op.responses : {};
  const ownResponses = isObject(project.op.responses) ? project.op.responses : {};
  for (const [status, response] of Object.entries(pubResponses)) {
    if (!(status in ownResponses)) {
      found.push(`response.${status}: missing`);
      continue;
    }
    found.push(...compareContent(response, ownResponses[status], `response.${status}`));
  }
  for (const status of Object.keys(ownResponses))
    if (!(status in pubResponses)) found.push(`response.${status}: extra`);
  return found;
}

// ------------------------------------------------------------------ areas

/** The basenames of the published files: the areas of the comparison. */
export function publishedAreas(): string[] {
  return readdirSync(PUBLISHED_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

const apiPrefix = (p: string): string => p.split('/').slice(0, 3).join('/');
const commonSegments = (a: string, b: string): number => {
  const x = shapeOf(a).split('/');
  const y = shapeOf(b).split('/');
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n]) n++;
  return n;
};

export interface Comparison {
  /** Differences by area, each list sorted. */
  byArea: Map<string, string[]>;
}

/** Compares the project's description with every published file. */
export async function comparePublished(): Promise<Comparison> {
  const projectDocument = (await dereference(PROJECT_DESCRIPTION)) as unknown as Json;
  const projectOps = operationsOf(projectDocument);
  const areas = publishedAreas();
  const publishedByArea = new Map<string, Operation[]>();
  for (const area of areas) {
    const document = (await dereference(path.join(PUBLISHED_DIR, `${area}.json`))) as unknown as Json;
    publishedByArea.set(area, operationsOf(document));
  }
  return compareOperations(projectOps, publishedByArea);
}

/** The comparison of already-collected operations (the unit tests give it small documents). */
export function compareDocuments(project: unknown, publishedByArea: Record<string, unknown>): Comparison {
  const published = new Map(Object.entries(publishedByArea).map(([area, doc]) => [area, operationsOf(doc as Json)]));
  return compareOperations(operationsOf(project as Json), published);
}

function compareOperations(projectOps: Operation[], publishedByArea: Map<string, Operation[]>): Comparison {
  const byArea = new Map<string, string[]>();
  const matched = new Set<Operation>();
  for (const [area, operations] of publishedByArea) {
    const found: string[] = [];
    for (const published of operations) {
      const label = `${area} ${published.method} ${published.path}`;
      const own = projectOps.find((o) => o.method === published.method && shapeOf(o.path) === shapeOf(published.path));
      if (!own) {
        found.push(`${label}: missing`);
        continue;
      }
      matched.add(own);
      for (const difference of compareOperation(published, own)) found.push(`${label} ${difference}`);
    }
    byArea.set(area, found);
  }
  // A project operation under an area's API prefix that no published file has: an extra, in
  // the area whose paths it shares most segments with.
  for (const own of projectOps) {
    if (matched.has(own)) continue;
    let best: { area: string; score: number } | undefined;
    for (const [area, operations] of publishedByArea) {
      for (const published of operations) {
        if (apiPrefix(published.path) !== apiPrefix(own.path)) continue;
        const score = commonSegments(published.path, own.path);
        if (!best || score > best.score) best = { area, score };
      }
    }
    if (best) byArea.get(best.area)!.push(`${best.area} ${own.method} ${own.path}: extra`);
  }
  for (const [area, found] of byArea) byArea.set(area, [...new Set(found)].sort());
  return { byArea };
}

// ------------------------------------------------------------------ allowlist

export const allowlistPath = (area: string): string => path.join(ALLOWLIST_DIR, `${area}.yaml`);

export function readAllowlist(area: string): AllowlistEntry[] {
  const file = allowlistPath(area);
  if (!existsSync(file)) return [];
  const parsed: unknown = parse(readFileSync(file, 'utf8'));
  if (parsed === null || parsed === undefined) return [];
  if (!Array.isArray(parsed)) throw new Error(`${file}: expected a list of {key, reason}`);
  return parsed.map((entry, index) => {
    if (!isObject(entry) || typeof entry.key !== 'string' || typeof entry.reason !== 'string' || !entry.reason.trim()) {
      throw new Error(`${file}: entry ${index + 1} needs a string key and a non-empty reason`);
    }
    return { key: entry.key, reason: entry.reason };
  });
}

export const NOT_RECONCILED = 'not yet reconciled';

/** Writes the area's current differences as its allowlist, keeping the reasons of keys already listed. */
export function writeAllowlist(area: string, differences: string[]): void {
  const reasons = new Map(readAllowlist(area).map((e) => [e.key, e.reason]));
  const entries = differences.map((key) => ({ key, reason: reasons.get(key) ?? NOT_RECONCILED }));
  const header =
    `# Deliberate differences between schemas/openapi/platform.yaml and the platform's published\n` +
    `# description of the '${area}' area, each with its reason. test/openapi/published-comparison.test.ts\n` +
    `# fails on a difference not listed here and on an entry that no longer matches one.\n` +
    `# UPDATE_PUBLISHED_DIFFERENCES=${area} npx vitest run test/openapi/published-comparison.test.ts rewrites it.\n`;
  writeFileSync(allowlistPath(area), header + (entries.length ? stringify(entries, { lineWidth: 0 }) : '[]\n'));
}
