/**
 * Feeding a process's metrics (`ProcessMetrics`) from what it does, for `fleetbook server`,
 * `fleetbook worker` and `fleetbook daemon` alike: its JSON log lines (the scheduler's fires and
 * skips, the client's `platform answered` lines), its store's journal appends (step durations)
 * and its shared rate buckets' waits. And `--metrics-port`/`--metrics-host` of the worker and the
 * daemon, which serve those figures on `/metrics`.
 */
import { Writable } from 'node:stream';
import { UsageError } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { loadPlatformDescription } from '../openapi/index.js';
import {
  createProcessMetrics,
  observeStore,
  startMetricsEndpoint,
  type MetricsEndpoint,
  type ProcessMetrics,
} from '../server/index.js';
import type { RunStore } from '../store/index.js';

/**
 * The metrics fed from the process's own JSON log lines: the scheduler's fires and skips, and
 * the client's `platform answered` lines (the operation's rate-limit group from the platform
 * description). A line that is not JSON is ignored.
 */
export function metricsTee(metrics: ProcessMetrics): Writable {
  const groups = new Map(loadPlatformDescription().operations.map((op) => [op.id, op.rateLimit?.group ?? 'none']));
  let rest = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const lines = (rest + String(chunk)).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (record.event === 'schedule.fired' || record.event === 'schedule.skipped')
          metrics.schedulerEvent(
            record.event === 'schedule.fired' ? 'fired' : 'skipped',
            String(record.scheduleKey ?? ''),
          );
        else if (record.msg === 'platform answered' && typeof record.httpStatus === 'number')
          metrics.platformExchange(
            groups.get(String(record.operationId)) ?? 'none',
            record.httpStatus,
            typeof record.durationMs === 'number' ? record.durationMs : 0,
          );
      }
      done();
    },
  });
}

/** The store with the waits of its shared rate buckets counted (`connection|group` keys). */
export function countingRateWaits<S extends RunStore>(store: S, metrics: ProcessMetrics): S {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'takeRate')
        return async (key: string, intervalMs: number, toleranceMs: number) => {
          const waitMs = await target.takeRate(key, intervalMs, toleranceMs);
          metrics.rateLimitWait(key.slice(key.lastIndexOf('|') + 1), waitMs);
          return waitMs;
        };
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export interface MetricsPortOptions {
  metricsPort?: string;
  metricsHost: string;
}

/** `--metrics-port`, checked (a usage error before anything starts); undefined when not given. */
export function parseMetricsPort(options: MetricsPortOptions): number | undefined {
  if (options.metricsPort === undefined) return undefined;
  const port = Number(options.metricsPort);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(
      `--metrics-port must be a port number from 0 to 65535, got '${options.metricsPort}'.`,
      'INVALID_OPTION',
    );
  return port;
}

/**
 * A worker's or daemon's metrics, when `--metrics-port` asks for them: the tee its logger writes
 * to, `instrument` to wrap its store with (step durations of the runs it drives, rate-limit
 * waits), and `serve` to start the endpoint once the logger exists. Nothing without the option.
 */
export function processMetricsOf(options: MetricsPortOptions) {
  const port = parseMetricsPort(options);
  if (port === undefined) return undefined;
  const metrics = createProcessMetrics();
  return {
    metrics,
    tee: { stream: metricsTee(metrics), level: 'debug' as const },
    instrument: <S extends RunStore>(store: S): S =>
      countingRateWaits(
        observeStore(store, {
          appended: (runId, event, at) => metrics.journaled(runId, event, at),
          created: () => undefined,
          statusChanged: () => undefined,
        }),
        metrics,
      ),
    async serve(logger: Logger): Promise<MetricsEndpoint> {
      const endpoint = await startMetricsEndpoint(metrics, { host: options.metricsHost, port });
      logger.info({ event: 'metrics.listening', url: endpoint.url }, `metrics on ${endpoint.url}`);
      return endpoint;
    },
  };
}
