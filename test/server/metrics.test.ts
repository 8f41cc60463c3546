/**
 * The metrics the server reads from its own log lines: the scheduler's fires and skips, and
 * the client's `platform answered` lines (counted by the operation's rate-limit group, 429s
 * apart), whatever the order the chunks arrive in.
 */
import { describe, expect, it } from 'vitest';
import { metricsTee } from '../../src/cli/commands/server-action.js';
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
