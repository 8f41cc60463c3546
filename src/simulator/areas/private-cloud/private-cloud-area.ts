/**
 * Private cloud: systems, clusters, servers, catalogs and VM provisioning policies, with
 * the software lifecycle rules (prechecks that expire, updates that fail at a step and are
 * resumed, one software operation per system at a time).
 */
import type {
  AreaModule,
  AsyncOutcome,
  ExtraRoute,
  InjectedFailure,
  OperationHandler,
  SimContext,
  SimRequest,
  SimResponse,
} from '../../context.js';
import { badRequest, conflict, notFound, SimHttpError } from '../../errors.js';
import { createListQuery } from '../../filter/index.js';
import { listPage } from '../../paging.js';
import { touch } from '../workspaces/world-time.js';
import { generatePrivateCloud, PRIVATE_CLOUD_CONFIG_SCHEMA, type PrivateCloudConfig } from './generate.js';
import {
  availableCatalogs,
  DURATIONS_MS,
  UPDATE_STEPS,
  type Cluster,
  type Policy,
  type PrivateCloudState,
  type SoftwareOperationKind,
  type System,
} from './model.js';
import { createSystemViewCache, type SystemViewCache } from './view-cache.js';
import { catalogView, isPrecheckValid, latestReport, reportView, systemView } from './views.js';

const firstOf = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

const systemsQuery = createListQuery({
  filter: {
    id: 'string',
    name: 'string',
    type: 'string',
    state: 'string',
    region: 'string',
    stackType: 'string',
    updateSupported: 'boolean',
    generation: 'integer',
    createdAt: 'timestamp',
    updatedAt: 'timestamp',
    customerId: 'string',
    'health/overallHealth': 'string',
    'softwareInfo/currentUpdateStatus/state': 'string',
  },
  sort: {
    id: 'string',
    name: 'string',
    state: 'string',
    region: 'string',
    stackType: 'string',
    createdAt: 'timestamp',
    updatedAt: 'timestamp',
  },
});
const serversQuery = createListQuery({
  filter: {
    id: 'string',
    name: 'string',
    serialNumber: 'string',
    model: 'string',
    powerState: 'string',
    createdAt: 'timestamp',
    updatedAt: 'timestamp',
  },
  sort: {
    id: 'string',
    name: 'string',
    serialNumber: 'string',
    model: 'string',
    createdAt: 'timestamp',
    updatedAt: 'timestamp',
  },
});
const reportProperties = {
  id: 'string',
  systemId: 'string',
  systemName: 'string',
  createdAt: 'timestamp',
  totalFailed: 'integer',
  totalWarning: 'integer',
} as const;
const reportsQuery = createListQuery({ filter: reportProperties, sort: reportProperties });
const catalogsQuery = createListQuery({
  filter: {
    id: 'string',
    name: 'string',
    type: 'string',
    version: 'string',
    releaseDate: 'string',
    generation: 'integer',
    createdAt: 'timestamp',
    updatedAt: 'timestamp',
  },
});
const policyProperties = {
  id: 'string',
  name: 'string',
  description: 'string',
  storageType: 'string',
  generation: 'integer',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
} as const;
const policiesQuery = createListQuery({ filter: policyProperties, sort: policyProperties });

/** The fields every platform record has, which `select` always keeps. */
const RECORD_FIELDS = ['id', 'type', 'generation', 'createdAt', 'updatedAt', 'resourceUri', 'customerId'] as const;

/** The record fields and the named top-level properties only: `select` (or a system's `filter`). */
function pick(view: Record<string, unknown>, names: string, parameter: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) if (field in view) result[field] = view[field];
  for (const name of names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)) {
    if (!(name in view)) {
      throw badRequest(`Unknown property '${name}' in ${parameter}`, [
        {
          source: 'query.parameter',
          subject: parameter,
          description: `unknown property '${name}' (known: ${Object.keys(view).join(', ')})`,
        },
      ]);
    }
    result[name] = view[name];
  }
  return result;
}

/** A private cloud 202: the operation's path in `Location`, an empty JSON object as the body. */
const accepted = (location: string): SimResponse => ({ status: 202, headers: { location }, body: {} });

/** `select` applied to one view, when the request names one. */
function selected(req: SimRequest, view: Record<string, unknown>, parameter = 'select'): Record<string, unknown> {
  const names = firstOf(req.query[parameter]);
  return names ? pick(view, names, parameter) : view;
}

/** `select` applied to every item of a page. */
function selectedPage(req: SimRequest, page: { items: Array<Record<string, unknown>> }) {
  const names = firstOf(req.query.select);
  return names ? { ...page, items: page.items.map((view) => pick(view, names, 'select')) } : page;
}

/** Handlers that only read: every other one may change what a system view shows. */
const READ_ONLY = new Set([
  'privateCloud.listSystems',
  'privateCloud.getSystem',
  'privateCloud.listServers',
  'privateCloud.getServer',
  'privateCloud.listSoftwareCatalogs',
  'privateCloud.getSoftwareCatalog',
  'privateCloud.listConfigurationAnalysisReports',
  'privateCloud.getConfigurationAnalysisReport',
  'privateCloud.listProvisioningPolicies',
  'privateCloud.getProvisioningPolicy',
]);

/**
 * The area's handlers over one cache of serialized system views: a handler that may write
 * (any not in READ_ONLY) and the end of any operation the area started invalidate it.
 */
const HEALTH_STATES = ['OK', 'WARNING', 'CRITICAL'] as const;

/**
 * `PUT /_sim/private-cloud/systems/:id/health` `{ "overallHealth": "CRITICAL" }`: a system made
 * unhealthy (or well again) by hand, so a rollout's health gate meets a real answer.
 */
function healthRoute(state: PrivateCloudState): ExtraRoute {
  return {
    name: '_sim.setSystemHealth',
    method: 'PUT',
    path: '/_sim/private-cloud/systems/:id/health',
    handler: (req) => {
      const system = state.systemsById.get(req.params.id ?? '') ?? state.systems.find((s) => s.name === req.params.id);
      if (!system) throw notFound('System (an id or a name)', req.params.id ?? '');
      const wanted = (req.body as { overallHealth?: unknown } | undefined)?.overallHealth;
      const health = HEALTH_STATES.find((state) => state === wanted);
      if (!health) throw badRequest(`overallHealth must be one of ${HEALTH_STATES.join(', ')}`);
      system.healthStatus = health;
      viewCacheOf(state).invalidate();
      return { status: 200, body: { id: system.id, name: system.name, overallHealth: health } };
    },
  };
}

/** Whether the update of `system` to `version` that just succeeded leaves it unhealthy (each pinned system once). */
function degradesAfterUpdate(
  degrade: PrivateCloudState['degradeAfterUpdate'],
  system: System,
  version: string,
): boolean {
  if (degrade.pinned.delete(system.id)) return true;
  if (degrade.probability <= 0) return false;
  // FNV-1a of the system and the version: the same systems degrade whatever the updates' order.
  let hash = 0x811c9dc5;
  for (const char of `${system.id}@${version}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return (hash >>> 0) / 0x1_0000_0000 < degrade.probability;
}

/** One view cache per world: the handlers and the `/_sim/` health route both invalidate it. */
const viewCaches = new WeakMap<PrivateCloudState, SystemViewCache>();
function viewCacheOf(state: PrivateCloudState): SystemViewCache {
  let cache = viewCaches.get(state);
  if (!cache) viewCaches.set(state, (cache = createSystemViewCache(state)));
  return cache;
}

export function createPrivateCloudHandlers(
  state: PrivateCloudState,
  ctx: SimContext,
): Record<string, OperationHandler> {
  const cache = viewCacheOf(state);
  const { asyncOps } = ctx;
  const invalidatingCtx: SimContext = {
    ...ctx,
    asyncOps: {
      ...asyncOps,
      start: (spec) =>
        asyncOps.start({
          ...spec,
          complete: (injected) => {
            try {
              return spec.complete(injected);
            } finally {
              cache.invalidate();
            }
          },
        }),
    },
  };
  const handlers: Record<string, OperationHandler> = systemHandlers(state, invalidatingCtx, cache);
  for (const [operationId, handler] of Object.entries(handlers)) {
    if (READ_ONLY.has(operationId)) continue;
    handlers[operationId] = (req) => {
      try {
        return handler(req);
      } finally {
        cache.invalidate();
      }
    };
  }
  return handlers;
}

function systemHandlers(state: PrivateCloudState, ctx: SimContext, cache: SystemViewCache) {
  const findSystem = (req: SimRequest, id = req.params.id ?? ''): System => {
    const system = state.systemsById.get(id);
    if (!system || (req.region && system.region !== req.region)) throw notFound('System', id);
    return system;
  };

  /** The checks every software operation on a system makes first: offline 403, one at a time 409. */
  const checkIdle = (system: System): void => {
    if (system.state === 'OFFLINE') {
      throw new SimHttpError(
        403,
        'SYSTEM_OFFLINE',
        `System ${system.name} is OFFLINE: the operation is forbidden in the current state of the system`,
      );
    }
    if (ctx.asyncOps.running(system.id).length > 0) {
      throw conflict(
        'OPERATION_IN_PROGRESS',
        `A software precheck or update operation is already in progress on system ${system.name}`,
      );
    }
  };

  const checkUpdatable = (system: System): void => {
    if (!system.updateSupported) {
      throw badRequest(`System ${system.name} belongs to a family that does not support software updates`);
    }
  };

  /** The clusters a precheck or update covers; 400 for unknown clusters or a catalog one of them does not offer. */
  const targetsOf = (system: System, body: { catalogVersion: string; hypervisorClusterIds?: string[] }): Cluster[] => {
    const ids = body.hypervisorClusterIds;
    const clusters = ids
      ? ids.map((id) => {
          const cluster = system.clusters.find((c) => c.id === id);
          if (!cluster) {
            throw badRequest(
              `hypervisorClusterIds: hypervisor cluster '${id}' is not a cluster of system ${system.name}`,
              [{ source: 'field', subject: 'hypervisorClusterIds', description: `unknown cluster '${id}'` }],
            );
          }
          return cluster;
        })
      : system.clusters;
    const lacking = clusters.filter(
      (cluster) => !availableCatalogs(state, system, cluster).some((c) => c.version === body.catalogVersion),
    );
    if (lacking.length > 0) {
      throw badRequest(
        `catalogVersion: catalog ${body.catalogVersion} is not available on cluster(s) ${lacking.map((c) => c.name).join(', ')} of system ${system.name}` +
          (ids ? '' : '; name the clusters that offer it in hypervisorClusterIds'),
        [
          {
            source: 'field',
            subject: 'catalogVersion',
            description: `not an available catalog of ${lacking.map((c) => c.name).join(', ')}`,
          },
        ],
      );
    }
    return clusters;
  };

  /** Starts a software operation on a system and records it as the system's last one. */
  const startOperation = (
    system: System,
    kind: SoftwareOperationKind,
    durationMs: number,
    clusters: readonly Cluster[],
    inputs: { catalogVersion?: string },
    finish: (injected: InjectedFailure | undefined, endsAtMs: number) => AsyncOutcome,
  ): SimResponse => {
    const clusterIds = clusters.map((c) => c.id);
    system.active = { kind, clusterIds };
    const record = ctx.asyncOps.start({
      flavour: 'dataServices',
      type: kind,
      resourceId: system.id,
      resourceUri: system.resourceUri,
      durationMs,
      complete: (injected) => {
        system.active = undefined;
        touch(system, new Date(record.endsAt).toISOString());
        return finish(injected, record.endsAt);
      },
    });
    const location = ctx.asyncOps.locationOf(record);
    system.lastOperation = { record, location, ...inputs, ...(clusters.length > 0 ? { clusterIds } : {}) };
    return accepted(location);
  };

  const takeFailure = (
    system: System,
    operation: 'update' | 'precheck',
    clusterIds: readonly string[],
    fromStep: number,
  ) => {
    const failure = state.failures.find(
      (f) =>
        f.remaining > 0 &&
        f.systemId === system.id &&
        f.operation === operation &&
        (f.clusterId === undefined || clusterIds.includes(f.clusterId)) &&
        (f.step === undefined || UPDATE_STEPS.indexOf(f.step) >= fromStep),
    );
    if (failure) failure.remaining -= 1;
    return failure;
  };

  /** Runs the update steps from `fromStep`; a pinned failure ends it at its step, a degrade leaves the system unhealthy. */
  const startUpdate = (
    system: System,
    kind: SoftwareOperationKind,
    catalogVersion: string,
    clusters: Cluster[],
    fromStep: number,
  ): SimResponse => {
    const clusterIds = clusters.map((c) => c.id);
    const failure = takeFailure(system, 'update', clusterIds, fromStep);
    const failStep = failure ? (failure.step ? UPDATE_STEPS.indexOf(failure.step) : fromStep) : undefined;
    const lastStep = failStep ?? UPDATE_STEPS.length - 1;
    const failedCluster = clusters.find((c) => c.id === failure?.clusterId) ?? clusters[0];
    return startOperation(
      system,
      kind,
      (lastStep - fromStep + 1) * DURATIONS_MS.updateStep,
      clusters,
      { catalogVersion },
      (injected, endsAtMs) => {
        if (failStep !== undefined || injected) {
          const failedStep = UPDATE_STEPS[lastStep]!;
          system.failedUpdate = { catalogVersion, clusterIds, failedStep };
          return {
            status: 'FAILED',
            error: injected ?? {
              errorCode: 'UPDATE_STEP_FAILED',
              message: `Update to ${catalogVersion} failed at step ${failedStep} on cluster ${failedCluster?.name ?? ''}; fix the cause, then resume the update`,
            },
            result: { failedStep },
          };
        }
        system.failedUpdate = undefined;
        for (const cluster of clusters) {
          cluster.currentVersion = catalogVersion;
          cluster.precheck = undefined;
          cluster.precheckFailed = undefined;
          cluster.lastUpdatedAtMs = endsAtMs;
        }
        if (degradesAfterUpdate(state.degradeAfterUpdate, system, catalogVersion))
          system.healthStatus = state.degradeAfterUpdate.to;
        return { status: 'SUCCEEDED' };
      },
    );
  };

  type SoftwareBody = { catalogVersion: string; hypervisorClusterIds?: string[] };

  /** The version refresh, by the platform's POST or the reference's GET. */
  const refreshVersions = (req: SimRequest): SimResponse => {
    const system = findSystem(req);
    checkIdle(system);
    // Versions are computed from the catalogs, so what a refresh changes is when they were
    // last read from the system (`softwareInfo.versionsRefreshedAt`); a failed one changes nothing.
    return startOperation(system, 'software-version-refresh', DURATIONS_MS.refresh, [], {}, (injected, endsAtMs) => {
      if (injected) return { status: 'FAILED', error: injected };
      system.versionsRefreshedAtMs = endsAtMs;
      return { status: 'SUCCEEDED' };
    });
  };

  return {
    'privateCloud.listSystems': (req: SimRequest): SimResponse => {
      const now = ctx.clock.now();
      const inRegion = req.region ? state.systems.filter((s) => s.region === req.region) : state.systems;
      if (firstOf(req.query.filter) === undefined && firstOf(req.query.sort) === undefined) {
        // Without a filter or sort only the page is rendered: lists of thousands stay cheap.
        const page = listPage(inRegion, req);
        if (firstOf(req.query.select) === undefined) {
          return {
            status: 200,
            json: cache.page(req.region, page.items, page, now),
          };
        }
        return {
          status: 200,
          body: selectedPage(req, { ...page, items: page.items.map((s) => systemView(state, s, now)) }),
        };
      }
      return {
        status: 200,
        body: selectedPage(
          req,
          systemsQuery.page(
            inRegion.map((s) => systemView(state, s, now)),
            req,
          ),
        ),
      };
    },
    'privateCloud.getSystem': (req: SimRequest): SimResponse => {
      if (firstOf(req.query.select) === undefined && firstOf(req.query.filter) === undefined) {
        return { status: 200, json: cache.json(findSystem(req), ctx.clock.now()) };
      }
      const view = systemView(state, findSystem(req), ctx.clock.now());
      // `select` is the platform's parameter; the reference's `filter` names properties the same way.
      return {
        status: 200,
        body: selected(
          req,
          view,
          firstOf(req.query.select) === undefined && firstOf(req.query.filter) !== undefined ? 'filter' : 'select',
        ),
      };
    },
    'privateCloud.updateSystem': (req: SimRequest): SimResponse => {
      const system = findSystem(req);
      const body = req.body as { location?: Partial<System['location']> | null };
      // A merge patch: a field set to null goes back to empty.
      if (body.location) {
        for (const [key, value] of Object.entries(body.location)) {
          (system.location as Record<string, string>)[key] = value ?? '';
        }
      }
      touch(system, ctx.clock.nowIso());
      return { status: 200, body: systemView(state, system, ctx.clock.now()) };
    },
    'privateCloud.listServers': (req: SimRequest): SimResponse => ({
      status: 200,
      body: selectedPage(req, serversQuery.page(findSystem(req).servers, req)),
    }),
    'privateCloud.getServer': (req: SimRequest): SimResponse => {
      const system = findSystem(req, req.params.systemId ?? '');
      const server = system.servers.find((s) => s.id === req.params.serverId);
      if (!server) throw notFound('Server', req.params.serverId ?? '');
      return { status: 200, body: selected(req, server) };
    },
    'privateCloud.runSoftwarePrechecks': (req: SimRequest): SimResponse => {
      const system = findSystem(req);
      checkIdle(system);
      checkUpdatable(system);
      const body = req.body as SoftwareBody;
      const clusters = targetsOf(system, body);
      const failure = takeFailure(
        system,
        'precheck',
        clusters.map((c) => c.id),
        0,
      );
      return startOperation(
        system,
        'software-prechecks',
        DURATIONS_MS.precheck,
        clusters,
        { catalogVersion: body.catalogVersion },
        (injected, endsAtMs) => {
          const failed = clusters.filter(
            (c) => injected || (failure && (failure.clusterId === undefined || failure.clusterId === c.id)),
          );
          for (const cluster of clusters) {
            cluster.lastPrecheck = { catalogVersion: body.catalogVersion, endedAtMs: endsAtMs };
            if (failed.includes(cluster)) {
              cluster.precheck = undefined;
              cluster.precheckFailed = body.catalogVersion;
            } else {
              cluster.precheck = {
                catalogVersion: body.catalogVersion,
                validUntilMs: endsAtMs + state.precheckValidityMs,
              };
              cluster.precheckFailed = undefined;
            }
          }
          if (failed.length === 0) return { status: 'SUCCEEDED' };
          return {
            status: 'FAILED',
            error: injected ?? {
              errorCode: 'PRECHECK_FAILED',
              message: `Prechecks for ${body.catalogVersion} failed on cluster(s) ${failed.map((c) => c.name).join(', ')}; correct the cause and rerun them`,
            },
          };
        },
      );
    },
    'privateCloud.runSoftwareUpdate': (req: SimRequest): SimResponse => {
      const system = findSystem(req);
      checkIdle(system);
      checkUpdatable(system);
      const body = req.body as SoftwareBody;
      const clusters = targetsOf(system, body);
      const now = ctx.clock.now();
      const stale = clusters.filter((cluster) => !isPrecheckValid(cluster, body.catalogVersion, now));
      if (stale.length > 0) {
        // 409: the published statuses of software-update have no 412; the update conflicts
        // with the clusters' precheck state.
        throw new SimHttpError(
          409,
          'PRECHECK_REQUIRED',
          `No valid prechecks for ${body.catalogVersion} on cluster(s) ${stale.map((c) => `${c.name} (${c.id})`).join(', ')}: rerun the prechecks on the same inputs, then retry the update`,
          [
            {
              type: 'precondition failed',
              issues: stale.map((cluster) => ({
                source: 'field' as const,
                subject: 'hypervisorClusterIds',
                description: `cluster ${cluster.name} (${cluster.id}) has ${cluster.precheck ? 'an expired or different-version' : 'no successful'} precheck for ${body.catalogVersion}`,
              })),
            },
          ],
        );
      }
      return startUpdate(system, 'software-update', body.catalogVersion, clusters, 0);
    },
    'privateCloud.resumeSoftwareUpdate': (req: SimRequest): SimResponse => {
      const system = findSystem(req);
      checkIdle(system);
      checkUpdatable(system);
      const failed = system.failedUpdate;
      if (!failed)
        throw badRequest(`The last software update of system ${system.name} did not fail: there is nothing to resume`);
      const clusters = system.clusters.filter((c) => failed.clusterIds.includes(c.id));
      return startUpdate(
        system,
        'software-update-resume',
        failed.catalogVersion,
        clusters,
        UPDATE_STEPS.indexOf(failed.failedStep),
      );
    },
    'privateCloud.refreshSoftwareVersions': (req: SimRequest): SimResponse => refreshVersions(req),
    'privateCloud.refreshSoftwareVersionsByGet': (req: SimRequest): SimResponse => refreshVersions(req),
    ...configurationAnalysisHandlers(state, ctx, findSystem),
    'privateCloud.addHypervisorCluster': (req: SimRequest): SimResponse => {
      const system = findSystem(req);
      checkIdle(system);
      const given = (req.body as { hypervisorClusterName?: string }).hypervisorClusterName;
      // The name is optional: the platform names a cluster it is not given one for.
      const body = { hypervisorClusterName: given ?? `cluster-${String.fromCharCode(97 + system.clusters.length)}` };
      if (system.clusters.some((c) => c.name === body.hypervisorClusterName)) {
        throw conflict(
          'CLUSTER_EXISTS',
          `System ${system.name} already has a hypervisor cluster named ${body.hypervisorClusterName}`,
        );
      }
      const cluster: Cluster = {
        id: ctx.rng.uuid(),
        name: body.hypervisorClusterName,
        type: 'HYPERVISOR_TYPE_STANDARD',
        currentVersion: system.clusters[0]?.currentVersion ?? state.catalogs[0]?.version ?? '',
        unavailable: [],
      };
      return startOperation(system, 'add-hypervisor-cluster', DURATIONS_MS.addCluster, [], {}, (injected) => {
        if (injected) return { status: 'FAILED', error: injected };
        system.clusters.push(cluster);
        return { status: 'SUCCEEDED', result: { hypervisorClusterId: cluster.id } };
      });
    },
    'privateCloud.listSoftwareCatalogs': (req: SimRequest): SimResponse => {
      const views = state.catalogs.map((catalog) => catalogView(state, catalog, req.region));
      return { status: 200, body: selectedPage(req, catalogsQuery.page(views, req)) };
    },
    'privateCloud.getSoftwareCatalog': (req: SimRequest): SimResponse => {
      const catalog = state.catalogs.find((c) => c.id === req.params.id);
      if (!catalog) throw notFound('Software catalog', req.params.id ?? '');
      return { status: 200, body: selected(req, catalogView(state, catalog, req.region)) };
    },
    ...policyHandlers(state, ctx),
  };
}

/** Configuration analysis: a run on a system (async), then its report; the list shows each system's latest. */
function configurationAnalysisHandlers(
  state: PrivateCloudState,
  ctx: SimContext,
  findSystem: (req: SimRequest, id: string) => System,
) {
  return {
    'privateCloud.startConfigurationAnalysis': (req: SimRequest): SimResponse => {
      const { systemId } = req.body as { systemId?: string };
      if (systemId === undefined)
        throw badRequest('systemId: name the system to analyse', [
          { source: 'field', subject: 'systemId', description: 'required' },
        ]);
      const system = findSystem(req, systemId);
      const startedAtMs = ctx.clock.now();
      const record = ctx.asyncOps.start({
        flavour: 'dataServices',
        type: 'configuration-analysis',
        resourceId: `analysis:${system.id}`,
        resourceUri: system.resourceUri,
        durationMs: DURATIONS_MS.refresh,
        complete: (injected) => {
          if (injected) return { status: 'FAILED', error: injected };
          // Findings follow the system's health: a warning system fails a rule and warns on two.
          const warning = system.healthStatus !== 'OK';
          state.reports.push({
            id: ctx.rng.uuid(),
            systemId: system.id,
            systemName: system.name,
            createdBy: req.clientId,
            runStartedAtMs: startedAtMs,
            createdAtMs: ctx.clock.now(),
            totalPassed: warning ? 37 : 40,
            totalFailed: warning ? 1 : 0,
            totalWarning: warning ? 2 : 0,
          });
          return { status: 'SUCCEEDED' };
        },
      });
      return accepted(ctx.asyncOps.locationOf(record));
    },
    'privateCloud.listConfigurationAnalysisReports': (req: SimRequest): SimResponse => {
      const inRegion = state.systems.filter((system) => !req.region || system.region === req.region);
      const latest = inRegion.flatMap((system) => {
        const report = latestReport(state, system.id);
        return report ? [reportView(state, report)] : [];
      });
      return { status: 200, body: reportsQuery.page(latest, req) };
    },
    'privateCloud.getConfigurationAnalysisReport': (req: SimRequest): SimResponse => {
      const report = state.reports.find((r) => r.id === req.params.reportId);
      if (!report || (req.region && state.systemsById.get(report.systemId)?.region !== req.region)) {
        throw notFound('Configuration analysis report', req.params.reportId ?? '');
      }
      return { status: 200, body: reportView(state, report) };
    },
  };
}

/** `createProvisioningPolicy`: a new policy named as asked (a taken name is a 409), with the published defaults. */
function createPolicy(state: PrivateCloudState, ctx: SimContext, req: SimRequest): SimResponse {
  const body = req.body as Partial<Policy> & { name: string };
  if (state.policies.some((p) => p.name === body.name)) {
    throw conflict('POLICY_NAME_EXISTS', `A VM provisioning policy named '${body.name}' already exists`);
  }
  const id = ctx.rng.uuid();
  const now = ctx.clock.nowIso();
  const policy: Policy = {
    id,
    type: 'vm-provisioning-policy',
    generation: 1,
    createdAt: now,
    updatedAt: now,
    customerId: state.customerId,
    resourceUri: `/private-cloud-business/v1beta1/vm-provisioning-policies/${id}`,
    name: body.name,
    description: body.description ?? '',
    // The published default of the one published storage type.
    storageType: body.storageType ?? 'dHCI',
    performancePolicy: { id: ctx.rng.uuid() },
    ...(body.protectionPolicy ? { protectionPolicy: body.protectionPolicy } : {}),
    volumeInfo: body.volumeInfo ?? {},
    associatedObjects: [],
  };
  state.policies.push(policy);
  return { status: 200, body: policy };
}

function policyHandlers(state: PrivateCloudState, ctx: SimContext) {
  const findPolicy = (id: string): Policy => {
    const policy = state.policies.find((p) => p.id === id);
    if (!policy) throw notFound('VM provisioning policy', id);
    return policy;
  };
  const checkIdle = (policy: Policy): void => {
    if (ctx.asyncOps.running(policy.id).length > 0) {
      throw conflict(
        'OPERATION_IN_PROGRESS',
        `A change to VM provisioning policy ${policy.name} is already in progress`,
      );
    }
  };
  const startChange = (policy: Policy, type: string, apply: () => void): SimResponse => {
    const record = ctx.asyncOps.start({
      flavour: 'dataServices',
      type,
      resourceId: policy.id,
      resourceUri: policy.resourceUri,
      durationMs: DURATIONS_MS.policyChange,
      complete: (injected) => {
        if (injected) return { status: 'FAILED', error: injected };
        apply();
        return { status: 'SUCCEEDED' };
      },
    });
    return accepted(ctx.asyncOps.locationOf(record));
  };

  return {
    'privateCloud.listProvisioningPolicies': (req: SimRequest): SimResponse => ({
      status: 200,
      body: selectedPage(req, policiesQuery.page(state.policies as unknown as Array<Record<string, unknown>>, req)),
    }),
    'privateCloud.getProvisioningPolicy': (req: SimRequest): SimResponse => ({
      status: 200,
      body: findPolicy(req.params.id ?? ''),
    }),
    'privateCloud.createProvisioningPolicy': (req: SimRequest): SimResponse => createPolicy(state, ctx, req),
    'privateCloud.updateProvisioningPolicy': (req: SimRequest): SimResponse => {
      const policy = findPolicy(req.params.id ?? '');
      checkIdle(policy);
      const changes = req.body as Partial<
        Pick<Policy, 'description' | 'storageType' | 'protectionPolicy' | 'volumeInfo'>
      >;
      return startChange(policy, 'vm-provisioning-policy-update', () => {
        Object.assign(policy, changes);
        touch(policy, ctx.clock.nowIso());
      });
    },
    'privateCloud.deleteProvisioningPolicy': (req: SimRequest): SimResponse => {
      const policy = findPolicy(req.params.id ?? '');
      checkIdle(policy);
      return startChange(policy, 'vm-provisioning-policy-delete', () => {
        state.policies.splice(state.policies.indexOf(policy), 1);
      });
    },
  };
}

/** The private cloud area module (world-file section `privateCloud`). */
export const privateCloudArea: AreaModule<PrivateCloudState> = {
  key: 'privateCloud',
  configSchema: PRIVATE_CLOUD_CONFIG_SCHEMA,
  createState: (ctx) => generatePrivateCloud(ctx.rng, ctx.config as PrivateCloudConfig),
  handlers: (state, ctx) => createPrivateCloudHandlers(state, ctx),
  extraRoutes: (state) => [healthRoute(state)],
  summary: (state) => ({
    systems: state.systems.length,
    hypervisorClusters: state.systems.reduce((n, s) => n + s.clusters.length, 0),
    servers: state.systems.reduce((n, s) => n + s.serverCount, 0),
    catalogs: state.catalogs.length,
    provisioningPolicies: state.policies.length,
  }),
};
