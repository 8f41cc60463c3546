/**
 * A write planned instead of sent (`fleetbook plan`): the resource it touches read as it is,
 * through the read the platform description names for the write (`x-fleetbook-reads`), and the
 * change the write would make, field by field. Reads only: nothing here sends a write.
 */
import type { CallOptions, PlatformClient } from '../../api/index.js';
import type { OperationDescriptor, WriteReads } from '../../openapi/index.js';

/** One field the write changes: its dotted path in the resource, the value now and the value after. */
export interface FieldChange {
  path: string;
  from: unknown;
  to: unknown;
}

export type PlannedChange = WriteReads['change'];

export interface PlannedWrite {
  operationId: string;
  change: PlannedChange;
  /** What a reader knows the resource by: its name, else its id (a create: the name it will have). */
  resource: string;
  /** The resource's id, when it exists. */
  id?: string;
  /** The field changes (an update, or an action whose effect the description states). */
  changes: FieldChange[];
  /** The read sent to see the resource as it is; absent for a create. */
  read?: { operationId: string; with: Record<string, unknown> };
  /** Why the resource could not be read (it does not exist, a 404): the write would fail or create. */
  readError?: string;
}

/**
 * One plan's reads, kept for the plan: nothing is written while it is made, so a resource two
 * writes touch (a system's precheck, then its update) is read once. Never kept across plans, and
 * `fleetbook apply` reads afresh before every write.
 */
export interface PlanSession {
  reads: Map<string, Promise<unknown>>;
}

export const createPlanSession = (): PlanSession => ({ reads: new Map() });

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `body.name` of `{ body: { name } }`. */
function valueAt(value: unknown, path: string): unknown {
  let at = value;
  for (const name of path.split('.')) at = isObject(at) ? at[name] : undefined;
  return at;
}

/** The name a person knows a resource by. */
function labelOf(resource: unknown, fallback: unknown): string {
  if (isObject(resource))
    for (const field of ['name', 'displayName', 'email', 'serialNumber', 'subscriptionKey', 'id']) {
      const value = resource[field];
      if (typeof value === 'string' && value !== '') return value;
    }
  return fallback === undefined ? '(unnamed)' : String(fallback);
}

/**
 * The leaves of `wanted` that differ from `current` at the same path (a merge patch's view:
 * what a PATCH or PUT body sets; `null` removes). Lists compare whole.
 */
export function fieldChanges(current: unknown, wanted: unknown, prefix = ''): FieldChange[] {
  if (!isObject(wanted)) {
    return JSON.stringify(current) === JSON.stringify(wanted) ? [] : [{ path: prefix, from: current, to: wanted }];
  }
  const changes: FieldChange[] = [];
  for (const [name, value] of Object.entries(wanted)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    changes.push(...fieldChanges(isObject(current) ? current[name] : undefined, value, path));
  }
  return changes;
}

/** What an action's stated effect changes in the resource read: e.g. the clusters' version an update sets. */
function effectChanges(effect: NonNullable<WriteReads['effect']>, resource: unknown, input: Json): FieldChange[] {
  const items = valueAt(resource, effect.list);
  if (!Array.isArray(items)) return [];
  const named = effect.match ? valueAt(input, effect.match.in) : undefined;
  const chosen = Array.isArray(named)
    ? items.filter((item) => named.includes(valueAt(item, effect.match!.field)))
    : items;
  const to = valueAt(input, effect.to);
  return chosen
    .map((item) => ({
      path: `${labelOf(item, valueAt(item, 'id'))}.${effect.field}`,
      from: valueAt(item, effect.field),
      to,
    }))
    .filter((change) => JSON.stringify(change.from) !== JSON.stringify(change.to));
}

/** The read's answer narrowed to the resource: an item of a list by `pick`, else the answer. */
function resourceOf(reads: WriteReads, body: unknown, input: Json): unknown {
  if (!reads.pick) return body;
  const wanted = valueAt(input, reads.pick.equals);
  const list = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.items) ? body.items : [];
  return (list as unknown[]).find((item) => valueAt(item, reads.pick!.field) === wanted);
}

/**
 * Plans one write: reads the resource it touches (not for a create) and says what would change.
 * A read that fails is reported in `readError`, not thrown: the plan goes on and shows it.
 */
export async function planWrite(
  client: PlatformClient,
  operation: OperationDescriptor,
  input: Json,
  options: Pick<CallOptions, 'region' | 'signal'>,
  session?: PlanSession,
): Promise<PlannedWrite> {
  const reads = operation.reads;
  const base = { operationId: operation.id, changes: [] as FieldChange[] };
  if (!reads) return { ...base, change: 'action', resource: labelOf(undefined, input.id) };
  if (reads.change === 'create')
    return { ...base, change: 'create', resource: labelOf(valueAt(input, 'body'), undefined) };
  const readWith: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(reads.with)) readWith[name] = valueAt(input, source);
  // A write of several resources by id (devices, subscriptions: `?id=a&id=b`) reads each.
  const listed = Object.entries(readWith).find(([, value]) => Array.isArray(value));
  const reads1 = listed ? (listed[1] as unknown[]).map((value) => ({ ...readWith, [listed[0]]: value })) : [readWith];
  const planned: PlannedWrite[] = [];
  for (const oneWith of reads1)
    planned.push(await planOne({ client, session }, operation, reads, input, oneWith, options));
  if (planned.length === 1) return planned[0]!;
  return {
    ...base,
    change: reads.change,
    resource: planned.map((one) => one.resource).join(', '),
    changes: planned.flatMap((one) =>
      one.changes.map((change) => ({ ...change, path: `${one.resource}.${change.path}` })),
    ),
    read: { operationId: reads.operation, with: readWith },
    ...(planned.some((one) => one.readError)
      ? {
          readError: planned
            .map((one) => one.readError)
            .filter(Boolean)
            .join('; '),
        }
      : {}),
  };
}

/** The body of a read, through the plan's session when there is one (a failed read is not kept). */
function readBody(
  { client, session }: { client: PlatformClient; session: PlanSession | undefined },
  operationId: string,
  readWith: Record<string, unknown>,
  options: Pick<CallOptions, 'region' | 'signal'>,
): Promise<unknown> {
  const read = () => client.invoke(operationId, readWith, options).then((answer) => answer.body);
  if (!session) return read();
  const key = JSON.stringify([operationId, options.region ?? '', readWith]);
  let kept = session.reads.get(key);
  if (!kept) {
    kept = read();
    session.reads.set(key, kept);
    kept.catch(() => session.reads.delete(key));
  }
  return kept;
}

async function planOne(
  reader: { client: PlatformClient; session: PlanSession | undefined },
  operation: OperationDescriptor,
  reads: WriteReads,
  input: Json,
  readWith: Record<string, unknown>,
  options: Pick<CallOptions, 'region' | 'signal'>,
): Promise<PlannedWrite> {
  const read = { operationId: reads.operation, with: readWith };
  const fallback = reads.pick ? valueAt(input, reads.pick.equals) : Object.values(readWith)[0];
  const planned: PlannedWrite = {
    operationId: operation.id,
    change: reads.change,
    resource: String(fallback),
    changes: [],
    read,
  };
  let resource: unknown;
  try {
    resource = resourceOf(reads, await readBody(reader, reads.operation, readWith, options), input);
  } catch (error) {
    return { ...planned, readError: error instanceof Error ? error.message : String(error) };
  }
  if (resource === undefined)
    return { ...planned, readError: `no resource ${String(fallback)} in the answer of ${reads.operation}` };
  const id = valueAt(resource, 'id');
  const named = { ...planned, resource: labelOf(resource, fallback), ...(typeof id === 'string' ? { id } : {}) };
  if (reads.change === 'update') return { ...named, changes: fieldChanges(resource, valueAt(input, 'body') ?? {}) };
  if (reads.change === 'action' && reads.effect)
    return { ...named, changes: effectChanges(reads.effect, resource, input) };
  return named;
}
