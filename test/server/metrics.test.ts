/**
 * The metrics the server reads from its own log lines: the scheduler's fires and skips, and
 * the client's `platform answered` lines (counted by the operation's rate-limit group, 429s
 * apart), whatever the order the chunks arrive in.
 */
import { describe, expect, it } from 'vitest';
import { metricsTee } from '../../src/cli/process-metrics.js';
import { createServerMetrics } from '../../src/server/index.js';
import { createMemoryRunStore } from '../../src/store/index.js';

describe('metrics from log lines', () => {
  it('counts fires, skips, platform answers and 429s by group', async () => {
    const metrics = createServerMetrics(createMemoryRunStore());
    const tee = metricsTee(metrics);
    const lines = [
      { event: 'schedule.fired', scheduleKey: 'nightly' },
      { event: 'schedule.fired', scheduleKey: 'nightly' },
      { event: 'schedule.skipped', scheduleKey: 'nightly' },
      { msg: 'platform answered', operationId: 'privateCloud.getSystem', httpStatus: 200, durationMs: 12 },
      { msg: 'platform answered', operationId: 'privateCloud.getSystem', httpStatus: 429, durationMs: 3 },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n');
    // A line split across two writes is still one line.
    const cut = lines.length - 20;
    await new Promise<void>((resolve) => tee.write(`${lines.slice(0, cut)}`, () => resolve()));
    await new Promise<void>((resolve) => tee.write(`${lines.slice(cut)}\nnot json\n`, () => resolve()));
    const text = await metrics.render();
    expect(text).toMatch(/^fleetbook_scheduler_events_total\{event="fired",schedule="nightly"\} 2$/m);
    expect(text).toMatch(/^fleetbook_scheduler_events_total\{event="skipped",schedule="nightly"\} 1$/m);
    expect(text).toMatch(/^fleetbook_api_requests_total\{group="[^"]+",status="200"\} 1$/m);
    expect(text).toMatch(/^fleetbook_api_throttled_total\{group="[^"]+"\} 1$/m);
    expect(text).not.toMatch(/group="none"/);
  });
});

describe('metrics read from the store', () => {
  it('counts every run of the store by playbook and status, the queue and the approvals, read once per cache period', async () => {
    const store = createMemoryRunStore();
    let reads = 0;
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'countRuns') reads += 1;
        const value = Reflect.get(target, name, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    let nowMs = 0;
    const metrics = createServerMetrics(counted, { storeCacheMs: 1500, now: () => nowMs });
    const run = (id: string, playbook: string) => ({
      id,
      playbook,
      playbookSource: `${playbook}.yaml`,
      playbookHash: 'h',
      inputs: {},
      secretInputNames: [],
      dryRun: false,
      trigger: { kind: 'manual' as const },
      startedAt: new Date().toISOString(),
    });
    await store.createRun(run('a', 'alpha'));
    await store.setRunStatus('a', 'succeeded');
    await store.createRun(run('b', 'alpha'));
    await store.setRunStatus('b', 'queued');
    await store.createRun(run('c', 'beta'));
    await store.suspendRun('c', { reason: 'approval', path: 'gate', since: new Date().toISOString() });

    // A scrape storm: one read of the store serves them all.
    const scrapes = await Promise.all(Array.from({ length: 10 }, () => metrics.render()));
    expect(reads).toBe(1);
    const text = scrapes[9] ?? '';
    expect(text).toMatch(/^fleetbook_runs\{playbook="alpha",status="succeeded"\} 1$/m);
    expect(text).toMatch(/^fleetbook_runs\{playbook="alpha",status="queued"\} 1$/m);
    expect(text).toMatch(/^fleetbook_runs\{playbook="beta",status="waiting"\} 1$/m);
    expect(text).toMatch(/^fleetbook_queue_depth 1$/m);
    expect(text).toMatch(/^fleetbook_waiting_approvals 1$/m);

    await store.setRunStatus('c', 'cancelled');
    nowMs = 1000;
    expect(await metrics.render()).toMatch(/^fleetbook_waiting_approvals 1$/m);
    expect(reads).toBe(1);
    nowMs = 1500;
    const later = await metrics.render();
    expect(reads).toBe(2);
    expect(later).toMatch(/^fleetbook_waiting_approvals 0$/m);
    expect(later).toMatch(/^fleetbook_runs\{playbook="beta",status="cancelled"\} 1$/m);
    expect(later).not.toMatch(/status="waiting"/);
  });
});
