import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStore } from '../../../src/store/types.js';
import { driven, manualClock, type StoreFactory } from './kit.js';

/** The API tokens facet of the RunStore contract. */
export function describeTokensContract(factory: StoreFactory): void {
  describe('API tokens', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = driven(await factory.open({ now: clock.now }));
    });
    afterEach(async () => {
      await store.close();
    });

    it('keeps API tokens hashed: created, read by id with the hash, listed without it, revoked by name or id', async () => {
      const viewer = {
        id: 't1',
        name: 'wall screen',
        role: 'viewer' as const,
        hash: 'a'.repeat(64),
        createdAt: '2026-03-01T10:00:00.000Z',
      };
      const admin = {
        id: 't2',
        name: 'ops lead',
        role: 'admin' as const,
        hash: 'b'.repeat(64),
        createdAt: '2026-03-01T10:00:01.000Z',
      };
      expect(await store.createApiToken(viewer)).toEqual({
        id: 't1',
        name: 'wall screen',
        role: 'viewer',
        createdAt: viewer.createdAt,
      });
      await store.createApiToken(admin);
      await expect(store.createApiToken({ ...admin, id: 't3' })).rejects.toMatchObject({ code: 'TOKEN_EXISTS' });
      expect(await store.getApiToken('t2')).toEqual({
        id: 't2',
        name: 'ops lead',
        role: 'admin',
        createdAt: admin.createdAt,
        hash: admin.hash,
      });
      expect(await store.getApiToken('nope')).toBeUndefined();
      expect((await store.listApiTokens()).map((token) => [token.id, Object.keys(token).includes('hash')])).toEqual([
        ['t1', false],
        ['t2', false],
      ]);
      expect(await store.revokeApiToken('wall screen')).toMatchObject({
        id: 't1',
        revokedAt: clock.now().toISOString(),
      });
      clock.advance(1000);
      // Revoking again keeps the first time.
      expect((await store.revokeApiToken('t1'))?.revokedAt).toBe('2026-03-01T10:00:00.000Z');
      expect((await store.getApiToken('t1'))?.revokedAt).toBe('2026-03-01T10:00:00.000Z');
      expect(await store.revokeApiToken('unknown')).toBeUndefined();
      // A token whose role holds for some playbooks only keeps their patterns.
      const scoped = { ...admin, id: 't4', name: 'reports bot', role: 'operator' as const, playbooks: ['*-report*'] };
      expect(await store.createApiToken(scoped)).toMatchObject({ id: 't4', playbooks: ['*-report*'] });
      expect(await store.getApiToken('t4')).toMatchObject({ role: 'operator', playbooks: ['*-report*'] });
      expect((await store.getApiToken('t2'))?.playbooks).toBeUndefined();
      await store.revokeApiToken('t4');
    });
  });
}
