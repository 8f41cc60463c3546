// A saved world restored into a new simulator is the same world: the prechecks it ran are still
// valid (an update is accepted, where a new world answers 409), an operation in flight at the save
// ends in the new one with the same id, an async fault drawn before the save holds, and the request
// log goes on from the old one's.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorSnapshot } from '../../src/simulator/index.js';
import { startTestSimulator, type JsonBody } from './core-helpers.js';

const BASE = '/private-cloud-business/v1beta1';
const MINUTE = 60_000;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A simulator whose clock moves only when the test advances it. */
async function start(options: { restore?: SimulatorSnapshot; faults?: object } = {}) {
  const t = await startTestSimulator({ timeScale: 1e-6, ...options });
  closers.push(() => t.sim.close());
  return t;
}

/** Through JSON, as a file on disk would carry it. */
const throughJson = (snapshot: SimulatorSnapshot): SimulatorSnapshot =>
  JSON.parse(JSON.stringify(snapshot)) as SimulatorSnapshot;

describe('a saved simulator world', () => {
  it('keeps prechecks, operations in flight and the request log', async () => {
    const first = await start();
    const systems = (await first.call('GET', `${BASE}/systems?limit=100`)).body.items as JsonBody[];
    const [one, two] = systems.filter((s) => s.state === 'ONLINE' && s.updateSupported);
    const pathOf = (system: JsonBody) => `${BASE}/systems/${system.id}`;
    const precheck = await first.call('POST', `${pathOf(one)}/software-prechecks`, {
      body: { catalogVersion: '2.4.0' },
    });
    expect(precheck.status).toBe(202);
    first.sim.control.clock.advance(5 * MINUTE);
    // In flight when the world is saved: a precheck of the second system.
    const running = await first.call('POST', `${pathOf(two)}/software-prechecks`, {
      body: { catalogVersion: '2.4.0' },
    });
    const runningAt = running.headers.get('location')!;
    const saved = throughJson(first.sim.control.snapshot());
    await first.sim.close();
    closers.pop();

    const second = await start({ restore: saved });
    const update = await second.call('POST', `${pathOf(one)}/software-update`, { body: { catalogVersion: '2.4.0' } });
    expect(update.status).toBe(202);
    expect((await second.call('GET', runningAt)).body.state).toMatch(/^(INITIALIZED|RUNNING)$/);
    second.sim.control.clock.advance(5 * MINUTE);
    expect((await second.call('GET', runningAt)).body).toMatchObject({ state: 'SUCCEEDED' });
    const prechecks = second.sim.control.requests({ operationId: 'privateCloud.runSoftwarePrechecks' });
    expect(prechecks.map((entry) => [entry.path, entry.status])).toEqual([
      [`${pathOf(one)}/software-prechecks`, 202],
      [`${pathOf(two)}/software-prechecks`, 202],
    ]);

    // A new world never saw those prechecks.
    const fresh = await start();
    const refused = await fresh.call('POST', `${pathOf(one)}/software-update`, { body: { catalogVersion: '2.4.0' } });
    expect(refused.status).toBe(409);
    expect(refused.body.errorCode).toBe('PRECHECK_REQUIRED');
  });

  it('keeps the async faults drawn before the save, and the fault uses left', async () => {
    const faults = { asyncOperations: [{ type: 'software-prechecks', outcome: 'FAILED', count: 1 }] };
    const first = await start({ faults });
    const systems = (await first.call('GET', `${BASE}/systems?limit=100`)).body.items as JsonBody[];
    const [one, two] = systems.filter((s) => s.state === 'ONLINE' && s.updateSupported);
    const doomed = await first.call('POST', `${BASE}/systems/${one.id}/software-prechecks`, {
      body: { catalogVersion: '2.4.0' },
    });
    const saved = throughJson(first.sim.control.snapshot());
    expect(saved.faults).toEqual({ rules: [], asyncOperations: [{ ...faults.asyncOperations[0], count: 0 }] });

    const second = await start({ restore: saved });
    second.sim.control.clock.advance(5 * MINUTE);
    expect((await second.call('GET', doomed.headers.get('location')!)).body).toMatchObject({ state: 'FAILED' });
    // The one use of the rule went before the save: the next precheck passes.
    const next = await second.call('POST', `${BASE}/systems/${two.id}/software-prechecks`, {
      body: { catalogVersion: '2.4.0' },
    });
    second.sim.control.clock.advance(5 * MINUTE);
    expect((await second.call('GET', next.headers.get('location')!)).body).toMatchObject({ state: 'SUCCEEDED' });
  });

  it('is refused by a simulator that cannot read it, with what is wrong', async () => {
    await expect(startSimulator({ restore: { format: 'other' } as unknown as SimulatorSnapshot })).rejects.toThrow(
      /format/,
    );
  });
});
