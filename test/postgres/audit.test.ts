/**
 * `fleetbook audit verify` on the team store: intact, then with a row edited and a row deleted
 * by hand in PostgreSQL (its append-only trigger dropped first, as the database's owner can).
 */
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { createPostgresRunStore } from '../../src/store/postgres/index.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, testPostgresUrl } from '../support/postgres-cluster.js';

const adminUrl = testPostgresUrl();

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(!adminUrl)('fleetbook audit verify on PostgreSQL', () => {
  let url: string;
  beforeEach(async () => {
    url = await createTestDatabase(adminUrl ?? '');
    const store = await createPostgresRunStore({ url });
    for (const name of ['alice', 'bob', 'carol'])
      await store.appendAudit({
        actor: { kind: 'token', name, role: 'operator', tokenId: `id-${name}`, address: '192.0.2.9' },
        action: 'login',
        outcome: 'ok',
      });
    await store.close();
  });
  const verify = () => runCli(['audit', 'verify'], { env: { FLEETBOOK_STORE: url } });

  it('verifies an intact log: exit 0', async () => {
    const verified = await verify();
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^The audit log is intact: 3 entries/);
  });

  it('refuses a change through an ordinary connection: the log is append-only', async () => {
    await expect(sql(url, `UPDATE audit_log SET outcome = 'refused' WHERE seq = 2`)).rejects.toThrow(/append-only/);
  });

  it('names an entry whose row was edited by hand: exit 1', async () => {
    await sql(
      url,
      `DROP TRIGGER audit_log_append_only ON audit_log; UPDATE audit_log SET outcome = 'refused' WHERE seq = 2`,
    );
    const verified = await verify();
    expect(verified.code).toBe(1);
    expect(verified.stderr).toBe(
      'The audit log is broken at entry 2: its content does not match its hash (it was changed).\n',
    );
  });

  it('names a deleted entry: exit 1', async () => {
    await sql(url, `DROP TRIGGER audit_log_append_only ON audit_log; DELETE FROM audit_log WHERE seq = 1`);
    const verified = await verify();
    expect(verified.code).toBe(1);
    expect(verified.stderr).toBe('The audit log is broken at entry 1: entries 1 to 1 are missing.\n');
  });
});
