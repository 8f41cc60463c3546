/**
 * Decides what to do with a write whose outcome the journal does not know, by reading the
 * state that write would have changed (see `reconciliations.ts`).
 */
import { ApiError, type PlatformClient } from '../../api/index.js';
import { reconciliationOf, type LastOperationReconciliation, type RecordsReconciliation, type RepeatableReconciliation } from './reconciliations.js';

/**
 * - `attach`: the write's async operation is on the platform: follow `location`.
 * - `done`: the write's effect is there (`found` holds what the read returned for it).
 * - `send`: no trace of it: sending it is safe.
 * - `unknown`: the read cannot tell (`reason`): only the operator can decide.
 */
export type ReconcileDecision =
  | { decision: 'attach'; location: string; state?: string }
  | { decision: 'done'; found: unknown[] }
  | { decision: 'send'; reason: string }
  | { decision: 'unknown'; reason: string };

export interface ReconcileRequest {
  operationId: string;
  /** The write's rendered input (path and query parameters, `body`). */
  input: Record<string, unknown>;
  region?: string | undefined;
}

export interface ReconcileContext {
  client: PlatformClient;
  signal: AbortSignal;
  /**
   * Locations of operations the run already saw to their end: an operation found on the
   * resource that is one of these was started by an earlier write, not the unanswered one.
   */
  knownLocations: ReadonlySet<string>;
}

/** The values at a pointer (`/body/items/*\/name`); `*` fans out over arrays. Missing parts give none. */
export function valuesAt(value: unknown, pointer: string): unknown[] {
  let current: unknown[] = [value];
  for (const part of pointer.split('/').slice(1)) {
    const next: unknown[] = [];
    for (const item of current) {
      if (part === '*') {
        if (Array.isArray(item)) next.push(...(item as unknown[]));
      } else if (item !== null && typeof item === 'object' && part in item) {
        next.push((item as Record<string, unknown>)[part]);
      }
    }
    current = next;
  }
  return current.filter((item) => item !== undefined);
}

const sameValue = (found: unknown, wanted: unknown): boolean =>
  Array.isArray(wanted) && Array.isArray(found)
    ? wanted.length === found.length && wanted.every((item) => found.some((other) => JSON.stringify(other) === JSON.stringify(item)))
    : JSON.stringify(found) === JSON.stringify(wanted);

async function reconcileLastOperation(rule: LastOperationReconciliation, request: ReconcileRequest, context: ReconcileContext): Promise<ReconcileDecision> {
  const params = Object.fromEntries(Object.entries(rule.read.params).map(([name, pointer]) => [name, valuesAt(request.input, pointer)[0]]));
  const { body } = await context.client.invoke(rule.read.operationId, params, { region: request.region, signal: context.signal });
  const found = valuesAt(body, rule.at)[0] as Record<string, unknown> | undefined;
  if (!found) return { decision: 'send', reason: `${rule.read.operationId} shows no operation` };
  const location = typeof found.location === 'string' ? found.location : undefined;
  if (found.type !== rule.type) return { decision: 'send', reason: `the last operation is a ${String(found.type)}, not a ${rule.type}` };
  const differing = Object.entries(rule.sameAs).filter(([field, pointer]) => {
    const wanted = valuesAt(request.input, pointer);
    return wanted.length > 0 && !sameValue(found[field], wanted[0]);
  });
  if (differing.length > 0) return { decision: 'send', reason: `the last ${rule.type} differs in ${differing.map(([field]) => field).join(', ')}` };
  if (location === undefined) return { decision: 'unknown', reason: `the last ${rule.type} has the same inputs but no location to follow` };
  if (context.knownLocations.has(location)) return { decision: 'send', reason: `the last ${rule.type} is one this run already followed to its end` };
  return { decision: 'attach', location, ...(typeof found.state === 'string' ? { state: found.state } : {}) };
}

/** OData string literal: single quotes doubled. */
const literal = (value: string): string => `'${value.replaceAll("'", "''")}'`;

async function reconcileRecords(rule: RecordsReconciliation, request: ReconcileRequest, context: ReconcileContext): Promise<ReconcileDecision> {
  const keys = rule.keys.flatMap((pointer) => valuesAt(request.input, pointer)).map(String);
  if (keys.length === 0) return { decision: 'unknown', reason: `the write names no ${rule.field} to look for` };
  const input = rule.filterable ? { filter: keys.map((key) => `${rule.field} eq ${literal(key)}`).join(' or ') } : {};
  const found: Array<Record<string, unknown>> = [];
  for await (const item of context.client.paginate(rule.list as never, input as never, { region: request.region, signal: context.signal })) {
    const record = item as Record<string, unknown>;
    if (keys.includes(String(record[rule.field]))) found.push(record);
  }
  const foundKeys = new Set(found.map((record) => String(record[rule.field])));
  if (foundKeys.size === 0) return { decision: 'send', reason: `no ${rule.field} of the write is listed by ${rule.list}` };
  if (keys.every((key) => foundKeys.has(key))) return { decision: 'done', found };
  const missing = keys.filter((key) => !foundKeys.has(key));
  return { decision: 'unknown', reason: `only part of the write is there (${rule.field} ${missing.join(', ')} missing)` };
}

async function reconcileRepeatable(rule: RepeatableReconciliation, request: ReconcileRequest, context: ReconcileContext): Promise<ReconcileDecision> {
  if (!rule.goneWhen404) return { decision: 'send', reason: rule.reason };
  const params = Object.fromEntries(Object.entries(rule.goneWhen404.params).map(([name, pointer]) => [name, valuesAt(request.input, pointer)[0]]));
  try {
    await context.client.invoke(rule.goneWhen404.operationId, params, { region: request.region, signal: context.signal });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { decision: 'done', found: [] };
    throw error;
  }
  return { decision: 'send', reason: `${rule.goneWhen404.operationId} still finds it: ${rule.reason}` };
}

/** Reads the state the write would have changed and decides; `unknown` for operations declared `cannot`. */
export async function reconcileWrite(request: ReconcileRequest, context: ReconcileContext): Promise<ReconcileDecision> {
  const rule = reconciliationOf(request.operationId);
  switch (rule.kind) {
    case 'lastOperation':
      return reconcileLastOperation(rule, request, context);
    case 'records':
      return reconcileRecords(rule, request, context);
    case 'repeatable':
      return reconcileRepeatable(rule, request, context);
    case 'cannot':
      return { decision: 'unknown', reason: rule.reason };
  }
}
