import { asyncStateOf } from './async-operations.js';
import type { AsyncFlavour, AsyncOperationRecord, AsyncOperations, OperationHandler, SimClock } from './context.js';
import { notFound } from './errors.js';

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

function dataServicesView(record: AsyncOperationRecord, nowMs: number, common: Record<string, unknown>) {
  const { state } = asyncStateOf(record, nowMs);
  const failed = record.outcome !== undefined && record.outcome.status !== 'SUCCEEDED';
  const logMessages = [{ message: `${record.type} accepted`, timestamp: iso(record.startedAt) }];
  if (record.outcome) {
    logMessages.push({
      message: record.outcome.error ? `${record.type} ${record.outcome.status.toLowerCase()}: ${record.outcome.error.message}` : `${record.type} ${record.outcome.status.toLowerCase()}`,
      timestamp: iso(record.endedAt),
    });
  }
  return compact({
    ...common,
    state,
    healthStatus: failed ? 'ERROR' : 'OK',
    logMessages,
    associatedResources: record.resourceUri === undefined ? [] : [{ resourceUri: record.resourceUri }],
    sourceResourceUri: record.resourceUri,
    error: record.outcome?.error
      ? { error: record.outcome.error.message, errorCode: record.outcome.error.errorCode, traceId: record.id }
      : undefined,
  });
}

function logMessagesOf(record: AsyncOperationRecord): Array<{ message: string; timestamp: string | undefined }> {
  const lines = [{ message: `${record.type} accepted`, timestamp: iso(record.startedAt) }];
  if (record.outcome) {
    const { status, error } = record.outcome;
    lines.push({ message: error ? `${record.type} ${status.toLowerCase()}: ${error.message}` : `${record.type} ${status.toLowerCase()}`, timestamp: iso(record.endedAt) });
  }
  return lines;
}

/**
 * A devices or subscriptions record as published: whole-second polling hint (at least 1),
 * `result` an object, a failure's `error` in the platform's error body shape.
 */
function devicesView(record: AsyncOperationRecord, clock: SimClock, common: Record<string, unknown>, state: string): Record<string, unknown> {
  const outcome = record.outcome;
  const result = outcome?.result === undefined || typeof outcome.result === 'object' ? outcome?.result : { status: outcome.result };
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
      return dataServicesView(record, nowMs, common);
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

/** Handlers of every async GET by operation id; an id of another flavour is a 404. */
export function createAsyncViews(asyncOps: () => AsyncOperations, clock: SimClock): Record<string, OperationHandler> {
  return Object.fromEntries(
    Object.entries(ASYNC_GETS).map(([operationId, { flavour }]): [string, OperationHandler] => [
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
  );
}
