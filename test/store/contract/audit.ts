import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUDIT_GENESIS, auditPages, verifyAuditChain } from '../../../src/store/audit-row.js';
import type { NewAuditEntry, RunStore } from '../../../src/store/types.js';
import { manualClock, type StoreFactory } from './kit.js';

const login = (name: string, outcome: NewAuditEntry['outcome'] = 'ok'): NewAuditEntry => ({
  actor: { kind: 'token', name, role: 'operator', tokenId: `id-${name}`, address: '192.0.2.7' },
  action: outcome === 'ok' ? 'login' : 'login.failed',
  outcome,
});

/** The audit log facet of the RunStore contract. */
export function describeAuditContract(factory: StoreFactory): void {
  describe('audit log', () => {
    let clock: ReturnType<typeof manualClock>;
    let store: RunStore;

    beforeEach(async () => {
      clock = manualClock();
      store = await factory.open({ now: clock.now });
    });
    afterEach(async () => {
      await store.close();
    });

    it('appends entries in order, each holding the hash of the one before, read back as written', async () => {
      const first = await store.appendAudit(login('alice'));
      clock.advance(1000);
      const second = await store.appendAudit({
        actor: { kind: 'system', name: 'fleetbook' },
        action: 'server.start',
        object: { kind: 'server', id: 'host-1' },
        outcome: 'ok',
        detail: { configHash: 'sha256:ab', zeta: 1, alpha: [1, 'two', { b: null, a: true }] },
      });
      expect(first).toMatchObject({ seq: 1, at: '2026-03-01T10:00:00.000Z', prevHash: AUDIT_GENESIS });
      expect(second).toMatchObject({ seq: 2, at: '2026-03-01T10:00:01.000Z', prevHash: first.hash });
      expect(first.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(await store.listAudit()).toEqual([first, second]);
      expect(await verifyAuditChain(await store.listAudit())).toEqual({ ok: true, count: 2, lastHash: second.hash });
    });

    it('filters by action, actor and time, and pages by a cursor', async () => {
      for (const name of ['alice', 'bob', 'alice', 'carol']) {
        await store.appendAudit(login(name, name === 'bob' ? 'refused' : 'ok'));
        clock.advance(60_000);
      }
      expect((await store.listAudit({ actor: 'alice' })).map((entry) => entry.seq)).toEqual([1, 3]);
      expect((await store.listAudit({ action: 'login.failed' })).map((entry) => entry.seq)).toEqual([2]);
      expect((await store.listAudit({ since: '2026-03-01T10:02:00.000Z' })).map((entry) => entry.seq)).toEqual([3, 4]);
      expect((await store.listAudit({ limit: 2 })).map((entry) => entry.seq)).toEqual([1, 2]);
      expect((await store.listAudit({ afterSeq: 2, limit: 2 })).map((entry) => entry.seq)).toEqual([3, 4]);
      const all = [];
      for await (const entry of auditPages((filter) => store.listAudit(filter))) all.push(entry.seq);
      expect(all).toEqual([1, 2, 3, 4]);
    });

    it('finds an entry changed or missing: the first broken one is named', async () => {
      for (const name of ['alice', 'bob', 'carol']) await store.appendAudit(login(name));
      const entries = await store.listAudit();
      const changed = entries.map((entry) => (entry.seq === 2 ? { ...entry, outcome: 'refused' as const } : entry));
      expect(await verifyAuditChain(changed)).toMatchObject({ ok: false, seq: 2 });
      expect(await verifyAuditChain(entries.filter((entry) => entry.seq !== 2))).toMatchObject({ ok: false, seq: 2 });
    });
  });
}
