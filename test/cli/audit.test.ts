/**
 * `fleetbook audit` and `fleetbook audit verify` on the embedded store: token changes are
 * recorded, the chain verifies, and a row changed or deleted by hand in the SQLite file (its
 * append-only triggers dropped first, as a hand with the file can) is named by `verify`, exit 1.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';

let home: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'fleetbook-audit-'));
  env = { FLEETBOOK_HOME: home, USER: 'alice' };
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function threeEntries(): Promise<void> {
  expect((await runCli(['tokens', 'create', '--role', 'operator', '--name', 'ci'], { env })).code).toBe(0);
  expect((await runCli(['tokens', 'create', '--role', 'viewer', '--name', 'dash'], { env })).code).toBe(0);
  expect((await runCli(['tokens', 'revoke', 'ci'], { env })).code).toBe(0);
}

/** Opens the store's file as a person with access to it would, without Fleetbook's append-only triggers. */
function handEdit(sql: string): void {
  const db = new Database(join(home, 'runs.sqlite'));
  db.exec('DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;');
  db.exec(sql);
  db.close();
}

describe('fleetbook audit', () => {
  it('lists token creation and revocation, who did it and on which token, as JSON lines and a table', async () => {
    await threeEntries();
    const listed = await runCli(['audit', '-o', 'json'], { env });
    expect(listed.code).toBe(0);
    const entries = jsonLines(listed.stdout);
    expect(entries.map((entry) => [entry.seq, entry.action, entry.outcome])).toEqual([
      [1, 'token.create', 'ok'],
      [2, 'token.create', 'ok'],
      [3, 'token.revoke', 'ok'],
    ]);
    expect(entries[2]).toMatchObject({
      actor: { kind: 'user', name: 'alice', address: 'local' },
      detail: { name: 'ci' },
    });
    expect(entries[2]!.object).toEqual(entries[0]!.object);
    const table = await runCli(['audit', '--action', 'token.revoke'], { env });
    expect(table.stdout).toMatch(/^SEQ +AT +ACTOR/);
    expect(table.stdout).toContain('token.revoke');
    expect(table.stdout).not.toContain('token.create');
    expect((await runCli(['audit', '--since', '2999-01-01'], { env })).stdout).toBe('No audit entries.\n');
  });

  it('refuses a --since that is neither a duration nor a date, exit 2', async () => {
    const refused = await runCli(['audit', '--since', 'yesterday'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "--since must be a duration like 7d, 12h or 1h30m, or a date like 2026-03-01, got 'yesterday'",
    );
  });

  it('verifies an intact log: exit 0', async () => {
    await threeEntries();
    const verified = await runCli(['audit', 'verify'], { env });
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^The audit log is intact: 3 entries, the last hash [0-9a-f]{64}\.\n$/);
  });

  it('names an entry whose row was edited by hand: exit 1', async () => {
    await threeEntries();
    handEdit(`UPDATE audit_log SET actor_json = '{"kind":"user","name":"mallory","address":"local"}' WHERE seq = 2`);
    const verified = await runCli(['audit', 'verify'], { env });
    expect(verified.code).toBe(1);
    expect(verified.stderr).toBe(
      'The audit log is broken at entry 2: its content does not match its hash (it was changed).\n',
    );
  });

  it('names an entry whose hash was made again after an edit: the next one no longer chains to it', async () => {
    await threeEntries();
    const hashes = jsonLines((await runCli(['audit', '-o', 'json'], { env })).stdout).map((entry) => entry.hash);
    handEdit(`UPDATE audit_log SET hash = '${'f'.repeat(64)}' WHERE seq = 1`);
    expect(hashes[0]).not.toBe('f'.repeat(64));
    const verified = await runCli(['audit', 'verify'], { env });
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain('The audit log is broken at entry 1');
  });

  it('names a deleted entry: exit 1', async () => {
    await threeEntries();
    handEdit('DELETE FROM audit_log WHERE seq = 2');
    const verified = await runCli(['audit', 'verify'], { env });
    expect(verified.code).toBe(1);
    expect(verified.stderr).toBe('The audit log is broken at entry 2: entries 2 to 2 are missing.\n');
  });

  it('refuses an edit through an ordinary connection: the log is append-only', async () => {
    await threeEntries();
    const db = new Database(join(home, 'runs.sqlite'));
    expect(() => db.exec('DELETE FROM audit_log WHERE seq = 2')).toThrow(/append-only/);
    db.close();
  });
});
