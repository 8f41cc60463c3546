import { describe, expect, it } from 'vitest';
import { createTestContext } from './testing.js';

describe('createTestContext', () => {
  it('gives an area the same rng the server would for the same seed and key', () => {
    expect(createTestContext({ seed: 4, areaKey: 'devices' }).rng.uuid()).toBe(
      createTestContext({ seed: 4, areaKey: 'devices' }).rng.uuid(),
    );
  });

  it('settles async operations on advance() and records mail in the outbox', () => {
    const ctx = createTestContext({ startMs: 0, timeScale: 1e-9 });
    const record = ctx.asyncOps.start({
      flavour: 'reporting',
      type: 'report-export',
      durationMs: 1000,
      complete: () => {
        ctx.sendMail({ to: ['a@example.com'], subject: 'Report ready', body: '', links: [], kind: 'report' });
        return { status: 'SUCCEEDED' };
      },
    });
    ctx.advance(1000);
    expect(record.outcome?.status).toBe('SUCCEEDED');
    expect(ctx.outbox).toMatchObject([{ to: ['a@example.com'], kind: 'report', sentAt: '1970-01-01T00:00:01.000Z' }]);
  });

  it('builds requests with defaults and names missing states', () => {
    const ctx = createTestContext({ states: { subscriptions: { n: 1 } } });
    expect(ctx.request('devices.listDevices', { query: { limit: '5' } })).toMatchObject({
      method: 'GET',
      region: '',
      clientId: 'sim-admin',
      query: { limit: '5' },
    });
    expect(ctx.stateOf('subscriptions')).toEqual({ n: 1 });
    expect(() => ctx.stateOf('users')).toThrow(/given: subscriptions/);
  });
});
