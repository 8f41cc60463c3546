/**
 * From an operation and its flat input (`{ id, filter, body }`) to the URL, headers and body
 * to send: picks the base address (regional, global), checks the region, fills the path,
 * writes the query and serialises the body. Every mistake is an error before anything is sent.
 */
import type { OperationDescriptor } from '../openapi/index.js';
import { didYouMean } from '../errors/index.js';
import { InvalidInputError, UnknownRegionError } from './errors.js';

/** A call's input: path and query parameters by name, plus `body`. */
export type CallInput = Record<string, unknown>;

export interface Addresses {
  /** `{base_url}` of the global areas. */
  baseUrl: string;
  /** `{regional_url}`: a template with `{region}`, or one URL serving every region. */
  regionalUrl: string;
}

/** Header naming the region when one regional URL serves them all (the simulator reads it). */
export const REGION_HEADER = 'x-fleetbook-region';

export interface BuiltRequest {
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The region the call goes to (regional operations only). */
  region?: string;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function scalar(operation: OperationDescriptor, name: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  throw new InvalidInputError(
    `${operation.id}: parameter '${name}' must be a string, number or boolean, got ${value === null ? 'null' : typeof value}.`,
  );
}

/** The region a regional call goes to, checked against the operation's regions. */
export function resolveRegion(operation: OperationDescriptor, region: string | undefined): string {
  const valid = operation.regions ?? [];
  const list = valid.length > 0 ? valid.join(', ') : '(none listed)';
  if (region === undefined || region === '') {
    throw new UnknownRegionError(
      `${operation.id} is regional: pass a region (one of ${list}), or set a default region (FLEETBOOK_REGION).`,
    );
  }
  if (valid.length > 0 && !valid.includes(region)) {
    throw new UnknownRegionError(
      `${operation.id} is not served in region '${region}'. Valid regions: ${list}.${didYouMean(region, valid)}`,
    );
  }
  return region;
}

/** The base address of an operation (`auth` operations are never built here). */
export function baseUrlOf(
  operation: OperationDescriptor,
  addresses: Addresses,
  region: string | undefined,
): { base: string; region?: string; regionHeader: boolean } {
  if (operation.base !== 'regional') return { base: trimSlash(addresses.baseUrl), regionHeader: false };
  const resolved = resolveRegion(operation, region);
  const templated = addresses.regionalUrl.includes('{region}');
  return {
    base: trimSlash(templated ? addresses.regionalUrl.replaceAll('{region}', resolved) : addresses.regionalUrl),
    region: resolved,
    regionHeader: !templated,
  };
}

export function buildRequest(
  operation: OperationDescriptor,
  input: CallInput,
  addresses: Addresses,
  region: string | undefined,
): BuiltRequest {
  const pathNames = new Set(operation.pathParams.map((param) => param.name));
  const queryNames = new Set(operation.queryParams.map((param) => param.name));
  const known = [...pathNames, ...queryNames, ...(operation.requestBody ? ['body'] : [])];
  for (const key of Object.keys(input)) {
    if (!known.includes(key) && input[key] !== undefined) {
      const accepted = known.length > 0 ? `It takes: ${known.join(', ')}.` : 'It takes no input.';
      throw new InvalidInputError(`${operation.id} has no input '${key}'.${didYouMean(key, known)} ${accepted}`);
    }
  }

  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = input[name];
    if (value === undefined || value === null || value === '') {
      throw new InvalidInputError(`${operation.id} needs '${name}' (path parameter of ${operation.path}).`);
    }
    return encodeURIComponent(scalar(operation, name, value));
  });

  const query: string[] = [];
  for (const param of operation.queryParams) {
    const value = input[param.name];
    if (value === undefined || value === null) {
      if (param.required) throw new InvalidInputError(`${operation.id} needs the query parameter '${param.name}'.`);
      continue;
    }
    // Repeated keys (`id=a&id=b`) for arrays, as the device update takes its ids.
    for (const item of Array.isArray(value) ? value : [value]) {
      query.push(`${encodeURIComponent(param.name)}=${encodeURIComponent(scalar(operation, param.name, item))}`);
    }
  }

  const headers: Record<string, string> = { accept: 'application/json' };
  let body: string | undefined;
  if (input.body !== undefined) {
    const requestBody = operation.requestBody;
    if (!requestBody) throw new InvalidInputError(`${operation.id} takes no body.`);
    headers['content-type'] = requestBody.contentType;
    body = JSON.stringify(input.body);
  } else if (operation.requestBody?.required) {
    throw new InvalidInputError(`${operation.id} needs a body.`);
  }

  const address = baseUrlOf(operation, addresses, region);
  if (address.regionHeader && address.region) headers[REGION_HEADER] = address.region;
  return {
    url: `${address.base}${path}${query.length > 0 ? `?${query.join('&')}` : ''}`,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(address.region === undefined ? {} : { region: address.region }),
  };
}
