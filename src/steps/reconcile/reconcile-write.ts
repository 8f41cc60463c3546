/**
 * Decides what to do with a write whose outcome the journal does not know, by reading the
 * state that write would have changed (see `reconciliations.ts`).
 */
import { ApiError, type PlatformClient } from '../../api/index.js';
import {
  reconciliationOf,
  type RecordsReconciliation,
  type RepeatableReconciliation,
  type UpdateStatusReconciliation,
} from './reconciliations.js';

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

interface ClusterStatus {
  id?: unknown;
  currentUpdateStatus?: { state?: unknown; catalogVersion?: unknown; taskUri?: unknown };
}

/**
 * The operation the write would have started is the one the target clusters show in their
 * `currentUpdateStatus` when all of them (and no other cluster) name the same `taskUri`, in a
 * state of the write's kind, for the write's catalog version: attach to it. Otherwise the
 * lost request left no trace and is sent.
 */
async function reconcileUpdateStatus(
  rule: UpdateStatusReconciliation,
  request: ReconcileRequest,
  context: ReconcileContext,
): Promise<ReconcileDecision> {
  const params = Object.fromEntries(
    Object.entries(rule.read.params).map(([name, pointer]) => [name, valuesAt(request.input, pointer)[0]]),
  );
  const { body } = await context.client.invoke(rule.read.operationId, params, {
    region: request.region,
    signal: context.signal,
  });
  const clusters = valuesAt(body, '/softwareInfo/hypervisorClusters/*') as ClusterStatus[];
  if (clusters.length === 0)
    return { decision: 'unknown', reason: `${rule.read.operationId} shows no cluster update status to tell from` };
  const named = valuesAt(request.input, rule.clusterIds)[0];
  const targetIds = Array.isArray(named) ? named.map(String) : clusters.map((cluster) => String(cluster.id));
  const targets = clusters.filter((cluster) => targetIds.includes(String(cluster.id)));
  const taskUris = new Set(targets.map((cluster) => cluster.currentUpdateStatus?.taskUri));
  const [taskUri] = taskUris;
  if (targets.length !== targetIds.length || taskUris.size !== 1 || typeof taskUri !== 'string') {
    return { decision: 'send', reason: 'the clusters of the write show no operation in common' };
  }
  const others = clusters.filter(
    (cluster) => !targetIds.includes(String(cluster.id)) && cluster.currentUpdateStatus?.taskUri === taskUri,
  );
  if (others.length > 0)
    return { decision: 'send', reason: `operation ${taskUri} also covers clusters the write does not name` };
  const status = targets[0]!.currentUpdateStatus!;
  const state = typeof status.state === 'string' ? status.state : '';
  if (!state.startsWith(rule.statePrefix))
    return {
      decision: 'send',
      reason: `the clusters' operation is in state ${state || 'unknown'}, not a ${rule.statePrefix.toLowerCase()}state`,
    };
  const wanted = rule.catalogVersion === undefined ? [] : valuesAt(request.input, rule.catalogVersion);
  if (wanted.length > 0 && status.catalogVersion !== wanted[0]) {
    return {
      decision: 'send',
      reason: `the clusters' operation is for catalog ${String(status.catalogVersion)}, not ${String(wanted[0])}`,
    };
  }
  if (context.knownLocations.has(taskUri))
    return { decision: 'send', reason: `operation ${taskUri} is one this run already followed to its end` };
  return { decision: 'attach', location: taskUri, state };
}

/** OData string literal: single quotes doubled. */
const literal = (value: string): string => `'${value.replaceAll("'", "''")}'`;

async function reconcileRecords(
  rule: RecordsReconciliation,
  request: ReconcileRequest,
  context: ReconcileContext,
): Promise<ReconcileDecision> {
  const keys = rule.keys.flatMap((pointer) => valuesAt(request.input, pointer)).map(String);
  if (keys.length === 0) return { decision: 'unknown', reason: `the write names no ${rule.field} to look for` };
  const input = rule.filterable ? { filter: keys.map((key) => `${rule.field} eq ${literal(key)}`).join(' or ') } : {};
  const found: Array<Record<string, unknown>> = [];
  for await (const item of context.client.paginate(rule.list as never, input as never, {
    region: request.region,
    signal: context.signal,
  })) {
    const record = item as Record<string, unknown>;
    if (keys.includes(String(record[rule.field]))) found.push(record);
  }
  const foundKeys = new Set(found.map((record) => String(record[rule.field])));
  if (foundKeys.size === 0)
    return { decision: 'send', reason: `no ${rule.field} of the write is listed by ${rule.list}` };
  if (keys.every((key) => foundKeys.has(key))) return { decision: 'done', found };
  const missing = keys.filter((key) => !foundKeys.has(key));
  return {
    decision: 'unknown',
    reason: `only part of the write is there (${rule.field} ${missing.join(', ')} missing)`,
  };
}

async function reconcileRepeatable(
  rule: RepeatableReconciliation,
  request: ReconcileRequest,
  context: ReconcileContext,
): Promise<ReconcileDecision> {
  if (!rule.goneWhen404) return { decision: 'send', reason: rule.reason };
  const params = Object.fromEntries(
    Object.entries(rule.goneWhen404.params).map(([name, pointer]) => [name, valuesAt(request.input, pointer)[0]]),
  );
  try {
    await context.client.invoke(rule.goneWhen404.operationId, params, {
      region: request.region,
      signal: context.signal,
    });
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
    case 'updateStatus':
      return reconcileUpdateStatus(rule, request, context);
    case 'records':
      return reconcileRecords(rule, request, context);
    case 'repeatable':
      return reconcileRepeatable(rule, request, context);
    case 'cannot':
      return { decision: 'unknown', reason: rule.reason };
  }
}
