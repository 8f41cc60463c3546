import { asyncStateOf } from './async-operations.js';
import type { AsyncFlavour, AsyncOperationRecord, AsyncOperations, OperationHandler, SimClock } from './context.js';
import { notFound } from './errors.js';
import { createListQuery } from './filter/index.js';

/** The platform's suggested polling interval, in simulated seconds. */
const SUGGESTED_POLLING_SECONDS = 30;

/** The async GET of each flavour, served by the core from the registry. */
const ASYNC_GETS: Record<string, { flavour: AsyncFlavour }> = {
  'dataServices.getAsyncOperation': { flavour: 'dataServices' },
  'devices.getAsyncOperation': { flavour: 'devices' },
  'subscriptions.getAsyncOperation': { flavour: 'subscriptions' },
  'reporting.getAsyncOperation': { flavour: 'reporting' },
  'reportingV1alpha1.getAsyncOperation': { flavour: 'reporting' },
};

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

/** Drops undefined fields: the description marks absent fields as absent, not null. */
function compact<T extends Record<string, unknown>>(value: T): T {
  for (const key of Object.keys(value)) if (value[key] === undefined) delete value[key];
  return value;
}

/** The customer the data-services records belong to (the platform's record field). */
const DATA_SERVICES_CUSTOMER = 'sim-customer';

/**
 * A data-services record as the platform publishes it: a platform record (id, type, generation,
 * createdAt, updatedAt, resourceUri, customerId) with the operation's fields, and no
 * `timeoutMinutes` (a wait on it is bounded by the caller's own deadline).
 */
function dataServicesView(record: AsyncOperationRecord, nowMs: number, clock: SimClock) {
  const { state, progressPercent } = asyncStateOf(record, nowMs);
  const failed = record.outcome !== undefined && record.outcome.status !== 'SUCCEEDED';
  const logMessages = [{ message: `${record.type} accepted`, timestamp: iso(record.startedAt) }];
  if (record.outcome) {
    logMessages.push({
      message: record.outcome.error
        ? `${record.type} ${record.outcome.status.toLowerCase()}: ${record.outcome.error.message}`
        : `${record.type} ${record.outcome.status.toLowerCase()}`,
      timestamp: iso(record.endedAt),
    });
  }
  const changedAt = record.endedAt ?? record.startedAt;
  return compact({
    id: record.id,
    type: 'task',
    generation: record.endedAt === undefined ? 1 : 2,
    createdAt: iso(record.startedAt),
    updatedAt: iso(changedAt),
    resourceUri: `/data-services/v1beta1/async-operations/${record.id}`,
    customerId: DATA_SERVICES_CUSTOMER,
    displayName: record.type,
    name: record.type,
    state,
    progressPercent: Math.round(progressPercent),
    suggestedPollingIntervalSeconds: SUGGESTED_POLLING_SECONDS / clock.timeScale,
    estimatedRunningDurationMinutes: Math.max(1, Math.round((record.endsAt - record.startedAt) / 60_000)),
    startedAt: iso(record.startedAt),
    endedAt: iso(record.endedAt),
    healthStatus: failed ? 'ERROR' : 'OK',
    userId: 'sim-user',
    services: ['private-cloud-business'],
    hasChildOperations: false,
    subtreeOperationCount: 0,
    groups: [],
    recommendations: [],
    logMessages,
    associatedResources:
      record.resourceUri === undefined
        ? []
        : [{ resourceUri: record.resourceUri, type: resourceTypeOf(record.resourceUri) }],
    sourceResourceUri: record.resourceUri,
    error: record.outcome?.error
      ? { error: record.outcome.error.message, errorCode: record.outcome.error.errorCode, traceId: record.id }
      : undefined,
  });
}

/** `system` for `/private-cloud-business/v1beta1/systems/<id>`: the collection's name, singular. */
const resourceTypeOf = (resourceUri: string): string => resourceUri.split('/').at(-2)?.replace(/s$/, '') ?? 'resource';

function logMessagesOf(record: AsyncOperationRecord): Array<{ message: string; timestamp: string | undefined }> {
  const lines = [{ message: `${record.type} accepted`, timestamp: iso(record.startedAt) }];
  if (record.outcome) {
    const { status, error } = record.outcome;
    lines.push({
      message: error
        ? `${record.type} ${status.toLowerCase()}: ${error.message}`
        : `${record.type} ${status.toLowerCase()}`,
      timestamp: iso(record.endedAt),
    });
  }
  return lines;
}

/**
 * A devices or subscriptions record as published: whole-second polling hint (at least 1),
 * `result` an object, a failure's `error` in the platform's error body shape.
 */
function devicesView(
  record: AsyncOperationRecord,
  clock: SimClock,
  common: Record<string, unknown>,
  state: string,
): Record<string, unknown> {
  const outcome = record.outcome;
  const result =
    outcome?.result === undefined || typeof outcome.result === 'object' ? outcome?.result : { status: outcome.result };
  return compact({
    ...common,
    suggestedPollingIntervalSeconds: Math.max(1, Math.round(SUGGESTED_POLLING_SECONDS / clock.timeScale)),
    status: state === 'CANCELLED' || state === 'TIMEOUT' ? 'FAILED' : state,
    result,
    resultType: outcome?.resultType,
    error: outcome?.error
      ? { httpStatusCode: 500, errorCode: outcome.error.errorCode, message: outcome.error.message, debugId: record.id }
      : undefined,
  });
}

function view(record: AsyncOperationRecord, clock: SimClock): Record<string, unknown> {
  const nowMs = clock.now();
  const { state, progressPercent } = asyncStateOf(record, nowMs);
  const common = compact({
    id: record.id,
    type: record.type,
    startedAt: iso(record.startedAt),
    endedAt: iso(record.endedAt),
    progressPercent,
    suggestedPollingIntervalSeconds: SUGGESTED_POLLING_SECONDS / clock.timeScale,
    timeoutMinutes: record.timeoutMinutes,
  });
  switch (record.flavour) {
    case 'dataServices':
      return dataServicesView(record, nowMs, clock);
    case 'devices':
    case 'subscriptions':
      return devicesView(record, clock, common, state);
    case 'reporting': {
      // The published reporting record has no polling hint and no timeout; it has log lines.
      const { suggestedPollingIntervalSeconds: _hint, timeoutMinutes: _timeout, ...rest } = common;
      return compact({
        ...rest,
        state,
        sourceResourceUri: record.resourceUri ?? `/reporting/v1/statuses/${record.id}`,
        logMessages: logMessagesOf(record),
        results: record.outcome?.results ?? [],
        error: record.outcome?.error
          ? { debugId: record.id, message: record.outcome.error.message, timestamp: iso(record.endedAt) }
          : undefined,
      });
    }
  }
}

const dataServicesQuery = createListQuery({
  filter: {
    id: 'string',
    displayName: 'string',
    state: 'string',
    sourceResourceUri: 'string',
    startedAt: 'timestamp',
    endedAt: 'timestamp',
  },
  sort: {
    id: 'string',
    displayName: 'string',
    state: 'string',
    startedAt: 'timestamp',
    endedAt: 'timestamp',
    updatedAt: 'timestamp',
  },
});

/** Handlers of every async GET by operation id (an id of another flavour is a 404), and the data-services list. */
export function createAsyncViews(asyncOps: () => AsyncOperations, clock: SimClock): Record<string, OperationHandler> {
  const listDataServices: OperationHandler = (req) => ({
    status: 200,
    body: dataServicesQuery.page(
      asyncOps()
        .list('dataServices')
        .map((record) => view(record, clock)),
      req,
    ),
  });
  return Object.fromEntries([
    ['dataServices.listAsyncOperations', listDataServices],
    ...Object.entries(ASYNC_GETS).map(([operationId, { flavour }]): [string, OperationHandler] => [
      operationId,
      (req) => {
        const id = req.params.id ?? '';
        const record = asyncOps().get(id);
        if (!record || record.flavour !== flavour) throw notFound('Async operation', id);
        return {
          status: 200,
          body: view(record, clock),
        };
      },
    ]),
  ]);
}
