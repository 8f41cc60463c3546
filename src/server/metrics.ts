/**
 * Prometheus metrics in text format (prom-client, a registry of the process's own).
 *
 * Per process (`createProcessMetrics`), counted as things happen where the run is driven: the
 * step durations and platform exchanges of the runs this process drives (its observed store and
 * its client's log lines), rate-limit waits of the shared buckets, scheduler fires and skips (its
 * daemon's log lines). `fleetbook server` serves them on `/metrics`; `fleetbook worker` and
 * `fleetbook daemon` with `--metrics-port` (metrics-endpoint.ts), as Prometheus scrapes each
 * process.
 *
 * The server's own (`createServerMetrics`) adds its HTTP requests, runs started through it, open
 * event streams, and what is true of the whole store whatever process drives the runs, read from
 * the store at scrape time: runs by playbook and status (one grouped count), the queue's depth
 * and the runs waiting for an approval. That read is cached for `storeCacheMs`, so a scrape storm
 * costs the store one read per period.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RunStatus, type JournalEvent, type RunCount, type RunStore } from '../store/index.js';

/** Waiting runs a scrape reads to count those at an approval gate (waiting runs are few; the counts are exact). */
export const WAITING_SCAN_LIMIT = 5000;

export interface ProcessMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  render(): Promise<string>;
  /** A journal append of a run this process drives. */
  journaled(runId: string, event: JournalEvent, at: Date): void;
  /** A platform exchange, from the client's `platform answered` log line. */
  platformExchange(group: string, httpStatus: number, durationMs: number): void;
  /** A wait the shared rate budget imposed before a platform call. */
  rateLimitWait(group: string, waitMs: number): void;
  schedulerEvent(kind: 'fired' | 'skipped', scheduleKey: string): void;
}

export interface ServerMetrics extends ProcessMetrics {
  httpRequest(route: string, method: string, status: number): void;
  runStarted(playbook: string): void;
  streamOpened(): void;
  streamClosed(): void;
}

export function createProcessMetrics(registry: Registry = new Registry()): ProcessMetrics {
  const stepDurations = new Histogram({
    name: 'fleetbook_step_duration_seconds',
    help: 'Durations of the steps of runs this process drives, by kind and status',
    labelNames: ['kind', 'status'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
    registers: [registry],
  });
  const platformRequests = new Counter({
    name: 'fleetbook_api_requests_total',
    help: 'Platform API exchanges of runs this process drives, by rate-limit group and HTTP status',
    labelNames: ['group', 'status'],
    registers: [registry],
  });
  const throttled = new Counter({
    name: 'fleetbook_api_throttled_total',
    help: 'Platform API answers 429 (rate limited), by rate-limit group',
    labelNames: ['group'],
    registers: [registry],
  });
  const platformDurations = new Histogram({
    name: 'fleetbook_api_request_duration_seconds',
    help: 'Platform API exchange durations, by rate-limit group',
    labelNames: ['group'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const rateWaits = new Histogram({
    name: 'fleetbook_rate_limit_wait_seconds',
    help: 'Waits the shared rate-limit buckets imposed before platform calls, by group',
    labelNames: ['group'],
    buckets: [0, 0.1, 0.5, 1, 5, 15, 60],
    registers: [registry],
  });
  const scheduler = new Counter({
    name: 'fleetbook_scheduler_events_total',
    help: 'Scheduler fires and skips of this process (while it leads)',
    labelNames: ['event', 'schedule'],
    registers: [registry],
  });
  // step.started times of running steps, by run and path, to time them when they finish.
  const stepStarts = new Map<string, { at: number; kind: string }>();
  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    journaled(runId, event, at) {
      if (event.type === 'step.started')
        stepStarts.set(`${runId} ${event.path}`, { at: at.getTime(), kind: event.kind });
      else if (event.type === 'step.finished') {
        const key = `${runId} ${event.path}`;
        // A quiet step's one entry: its start is its end (it took microseconds).
        if (event.kind !== undefined) return stepDurations.observe({ kind: event.kind, status: event.status }, 0);
        const start = stepStarts.get(key);
        if (!start) return;
        stepStarts.delete(key);
        stepDurations.observe({ kind: start.kind, status: event.status }, (at.getTime() - start.at) / 1000);
      }
    },
    platformExchange(group, httpStatus, durationMs) {
      platformRequests.inc({ group, status: String(httpStatus) });
      if (httpStatus === 429) throttled.inc({ group });
      platformDurations.observe({ group }, durationMs / 1000);
    },
    rateLimitWait: (group, waitMs) => rateWaits.observe({ group }, waitMs / 1000),
    schedulerEvent: (event, schedule) => scheduler.inc({ event, schedule }),
  };
}

interface StoreSnapshot {
  counts: RunCount[];
  waitingApprovals: number;
}

export interface ServerMetricsOptions {
  /** How long one read of the store serves scrapes. @default 1500 */
  storeCacheMs?: number;
  /** @default Date.now */
  now?: () => number;
}

export function createServerMetrics(store: RunStore, options: ServerMetricsOptions = {}): ServerMetrics {
  const cacheMs = options.storeCacheMs ?? 1500;
  const now = options.now ?? Date.now;
  const own = createProcessMetrics();
  const { registry } = own;

  let cached: { atMs: number; snapshot: Promise<StoreSnapshot> } | undefined;
  async function read(): Promise<StoreSnapshot> {
    const counts = await store.countRuns();
    const anyWaiting = counts.some((count) => count.status === RunStatus.waiting);
    const waiting = anyWaiting ? await store.listRuns({ status: RunStatus.waiting, limit: WAITING_SCAN_LIMIT }) : [];
    return { counts, waitingApprovals: waiting.filter((run) => run.wait?.reason === 'approval').length };
  }
  /** One read of the store per `cacheMs`, shared by the gauges of a scrape and by concurrent scrapes. */
  function snapshot(): Promise<StoreSnapshot> {
    const at = now();
    if (!cached || at - cached.atMs >= cacheMs) {
      const fresh = { atMs: at, snapshot: read() };
      // A failed read is not kept: the next scrape tries again.
      fresh.snapshot.catch(() => {
        if (cached === fresh) cached = undefined;
      });
      cached = fresh;
    }
    return cached.snapshot;
  }

  new Gauge({
    name: 'fleetbook_runs',
    help: 'Runs in the store by playbook and status, whatever process drives them',
    labelNames: ['playbook', 'status'],
    registers: [registry],
    async collect() {
      const { counts } = await snapshot();
      this.reset();
      for (const { playbook, status, count } of counts) this.set({ playbook, status }, count);
    },
  });
  new Gauge({
    name: 'fleetbook_queue_depth',
    help: 'Runs queued for a worker',
    registers: [registry],
    async collect() {
      const { counts } = await snapshot();
      this.set(
        counts.filter((count) => count.status === RunStatus.queued).reduce((sum, count) => sum + count.count, 0),
      );
    },
  });
  new Gauge({
    name: 'fleetbook_waiting_approvals',
    help: 'Runs waiting for an approval',
    registers: [registry],
    async collect() {
      this.set((await snapshot()).waitingApprovals);
    },
  });
  const started = new Counter({
    name: 'fleetbook_runs_started_total',
    help: 'Runs started (or queued) through this server',
    labelNames: ['playbook'],
    registers: [registry],
  });
  const streams = new Gauge({
    name: 'fleetbook_event_streams',
    help: 'Open run event streams',
    registers: [registry],
  });
  const http = new Counter({
    name: 'fleetbook_http_requests_total',
    help: 'Requests to this server, by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });

  return {
    ...own,
    httpRequest: (route, method, status) => http.inc({ route, method, status: String(status) }),
    runStarted: (playbook) => started.inc({ playbook }),
    streamOpened: () => streams.inc(),
    streamClosed: () => streams.dec(),
  };
}
