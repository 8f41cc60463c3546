/**
 * `/metrics` in Prometheus text format (prom-client, a registry of the server's own). Counted
 * as things happen in this process: HTTP requests of the server, runs started through it, the
 * step durations and platform exchanges of the runs it drives (its observed store and its
 * client's log lines), rate-limit waits of the shared buckets, scheduler fires and skips (its
 * daemon's log lines), open event streams. Read from the store at each scrape: runs by
 * playbook and status (the latest `RUN_SCAN_LIMIT` runs), the queue's depth and the runs waiting
 * for an approval.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JournalEvent, RunStore } from '../store/index.js';

/** Runs a scrape looks at for the runs gauge: the history is pruned, not counted whole. */
export const RUN_SCAN_LIMIT = 5000;

export interface ServerMetrics {
  readonly contentType: string;
  render(): Promise<string>;
  httpRequest(route: string, method: string, status: number): void;
  runStarted(playbook: string): void;
  /** A journal append of a run this process drives. */
  journaled(runId: string, event: JournalEvent, at: Date): void;
  /** A platform exchange, from the client's `platform answered` log line. */
  platformExchange(group: string, httpStatus: number, durationMs: number): void;
  /** A wait the shared rate budget imposed before a platform call. */
  rateLimitWait(group: string, waitMs: number): void;
  schedulerEvent(kind: 'fired' | 'skipped', scheduleKey: string): void;
  streamOpened(): void;
  streamClosed(): void;
}

export function createServerMetrics(store: RunStore): ServerMetrics {
  const registry = new Registry();
  const runs = new Gauge({
    name: 'fleetbook_runs',
    help: `Runs by playbook and status (the latest ${RUN_SCAN_LIMIT} runs of the store)`,
    labelNames: ['playbook', 'status'],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = new Map<string, { playbook: string; status: string; count: number }>();
      for (const run of await store.listRuns({ limit: RUN_SCAN_LIMIT })) {
        const key = `${run.playbook}\u0000${run.status}`;
        const entry = counts.get(key) ?? { playbook: run.playbook, status: run.status, count: 0 };
        entry.count += 1;
        counts.set(key, entry);
      }
      for (const { playbook, status, count } of counts.values()) this.set({ playbook, status }, count);
    },
  });
  void runs;
  new Gauge({
    name: 'fleetbook_queue_depth',
    help: 'Runs queued for a worker',
    registers: [registry],
    async collect() {
      this.set((await store.listRuns({ status: 'queued', limit: RUN_SCAN_LIMIT })).length);
    },
  });
  new Gauge({
    name: 'fleetbook_waiting_approvals',
    help: 'Runs waiting for an approval',
    registers: [registry],
    async collect() {
      const waiting = await store.listRuns({ status: 'waiting', limit: RUN_SCAN_LIMIT });
      this.set(waiting.filter((run) => run.wait?.reason === 'approval').length);
    },
  });
  const started = new Counter({
    name: 'fleetbook_runs_started_total',
    help: 'Runs started (or queued) through this server',
    labelNames: ['playbook'],
    registers: [registry],
  });
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
  // step.started times of running steps, by run and path, to time them when they finish.
  const stepStarts = new Map<string, { at: number; kind: string }>();

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    httpRequest: (route, method, status) => http.inc({ route, method, status: String(status) }),
    runStarted: (playbook) => started.inc({ playbook }),
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
    streamOpened: () => streams.inc(),
    streamClosed: () => streams.dec(),
  };
}
