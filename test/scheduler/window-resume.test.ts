/**
 * The daemon's side of a maintenance window closing mid-loop, on a manual clock: the scheduled
 * run (the real engine, a fake platform) starts no item after the window closes, ends
 * `waiting` (reason window, until the next opening), and is resumed at that opening, one week
 * later across the end of summer time, where the remaining items run.
 */
import { describe, expect, it } from 'vitest';
import { captureLogs } from '../../src/api/testing.js';
import { fakeClient, playbook as enginePlaybook, step, t } from '../../src/engine/engine.test-kit.js';
import { createFireDriver } from '../../src/admission/index.js';
import { RunStatus, type RunStore } from '../../src/store/index.js';
import { createSchedulerHarness, schedule } from './harness.js';

const HOUR = 3_600_000;

async function itemStarts(store: RunStore, runId: string): Promise<Array<[number, string]>> {
  return (await store.journal(runId)).flatMap((entry) =>
    entry.event.type === 'item.started' ? [[entry.event.index, entry.at] as [number, string]] : [],
  );
}

describe('scheduler: a window closing mid-loop', () => {
  it('stops new items, waits, and resumes the run at the next opening across a DST change', async () => {
    // Sundays 01:00–03:30 Berlin: on 2026-10-25 (clocks back at 03:00) 23:00Z to 02:30Z, on 2026-11-01 00:00Z to 02:30Z.
    const book = enginePlaybook(
      [
        step({
          id: 'systems',
          kind: 'forEach',
          items: t([0, 1, 2, 3, 4, 5, 6, 7]),
          as: 'n',
          concurrency: t(1),
          steps: [step({ id: 'update', kind: 'sleep', duration: t(HOUR) })],
        }),
      ],
      {
        name: 'weekly-update',
        window: {
          timezone: 'Europe/Berlin',
          weekly: [{ days: ['sun'], from: '01:00', to: '03:30' }],
          onClose: 'wait',
        },
        schedules: [],
      },
    );
    const logs = captureLogs();
    const h = createSchedulerHarness('2026-10-24T22:00:00Z', {
      scheduler: {
        execute: (request) =>
          createFireDriver({
            client: fakeClient({}),
            store: h.store,
            logger: logs.logger,
            clock: h.clock,
          })(request),
      },
    });
    const weekly = schedule({ key: 'weekly', cron: '0 1 * * 0', timezone: 'Europe/Berlin' });
    await h.scheduler.load([{ ...book, schedules: [weekly] }]);

    for (let at = Date.parse('2026-10-24T22:00:00Z'); at <= Date.parse('2026-10-25T06:00:00Z'); at += HOUR / 4)
      await h.advanceTo(new Date(at).toISOString());
    const [fired] = h.events('schedule.fired');
    const runId = String(fired?.runId);
    expect(fired).toMatchObject({ scheduledAt: '2026-10-24T23:00:00.000Z' });
    expect(await itemStarts(h.store, runId)).toEqual([
      [0, '2026-10-24T23:00:00.000Z'],
      [1, '2026-10-25T00:00:00.000Z'],
      [2, '2026-10-25T01:00:00.000Z'],
      [3, '2026-10-25T02:00:00.000Z'],
    ]);
    expect(await h.store.getRun(runId)).toMatchObject({
      status: RunStatus.waiting,
      wait: { reason: 'window', path: 'systems', until: '2026-11-01T00:00:00.000Z' },
    });
    expect((await h.store.getRun(runId))?.wait?.message).toContain('4 of 8 items wait for it');
    expect(h.events('schedule.runWaiting')).toEqual([
      expect.objectContaining({ runId, reason: 'window', until: '2026-11-01T00:00:00.000Z' }),
    ]);

    // Nothing happens during the week; at the opening the run is resumed and the rest runs.
    for (let at = Date.parse('2026-10-31T23:00:00Z'); at <= Date.parse('2026-11-01T06:00:00Z'); at += HOUR / 4)
      await h.advanceTo(new Date(at).toISOString());
    expect(h.events('schedule.recovered')).toEqual([expect.objectContaining({ runId, resume: true })]);
    expect((await itemStarts(h.store, runId)).slice(4)).toEqual([
      [4, '2026-11-01T00:00:00.000Z'],
      [5, '2026-11-01T01:00:00.000Z'],
      [6, '2026-11-01T02:00:00.000Z'],
    ]);
    // The week's own fire found the resumed run running (overlap skip): one run, not two.
    expect(h.events('schedule.fired')).toHaveLength(1);
    expect(await h.store.getRun(runId)).toMatchObject({
      status: RunStatus.waiting,
      wait: { reason: 'window', until: '2026-11-08T00:00:00.000Z' },
    });

    for (let at = Date.parse('2026-11-07T23:00:00Z'); at <= Date.parse('2026-11-08T03:00:00Z'); at += HOUR / 4)
      await h.advanceTo(new Date(at).toISOString());
    expect(await h.store.getRun(runId)).toMatchObject({ status: RunStatus.succeeded });
    expect((await itemStarts(h.store, runId)).map(([index]) => index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await h.scheduler.stop();
  });
});
