/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a temp dir, a server on
 * a free port listening on 127.0.0.1 only (socket in the same dir), `fsync=off` since nothing
 * in it must survive. Run as the `postgres` user when this process is root (the server
 * refuses to run as root). Password authentication over TCP, so tests can also be refused.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The environment variable that hands a started cluster's admin URL to test files. */
export const POSTGRES_URL_ENV = 'FLEETBOOK_TEST_POSTGRES_URL';
/** Set instead when PostgreSQL is not installed: the reason the tests are skipped. */
export const POSTGRES_SKIP_ENV = 'FLEETBOOK_TEST_POSTGRES_SKIPPED';

export const installHint =
  'PostgreSQL tests skipped: PostgreSQL 15 is not installed (install it with `apt-get install postgresql-15`).';

export const clusterUser = 'postgres';
export const clusterPassword = 'fleetbook-test';

export interface PostgresCluster {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres` */
  adminUrl: string;
  port: number;
  dir: string;
  /** Stops the server (immediate: as a crash would), keeping its data, and starts it again. */
  pause(): void;
  resume(): void;
  stop(): void;
}

/** The directory of Debian's PostgreSQL programs (the newest installed), or undefined. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env.FLEETBOOK_PG_BIN;
  if (fromEnv) return existsSync(join(fromEnv, 'initdb')) ? fromEnv : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

const isRoot = (): boolean => process.getuid?.() === 0;

function runAsClusterUser(bin: string, args: string[]): void {
  const [command, commandArgs] = isRoot() ? ['runuser', ['-u', clusterUser, '--', bin, ...args]] : [bin, args];
  execFileSync(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts a cluster; throws (with the server's words) when it cannot. */
export async function startPostgresCluster(bin: string): Promise<PostgresCluster> {
  // The postgres user must reach the directory: under root, the suite's own temp dir is private.
  const dir = mkdtempSync(join(isRoot() ? '/tmp' : tmpdir(), 'fleetbook-pg-'));
  const data = join(dir, 'data');
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, clusterPassword);
  if (isRoot()) {
    const { uid, gid } = userIds(clusterUser);
    chownSync(dir, uid, gid);
    chownSync(passwordFile, uid, gid);
  }
  const port = await freePort();
  const start = (): void =>
    runAsClusterUser(join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-w',
      '-l',
      join(dir, 'server.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      'start',
    ]);
  try {
    runAsClusterUser(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      clusterUser,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      `--pwfile=${passwordFile}`,
      '-E',
      'UTF8',
      '--no-locale',
    ]);
    start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`Cannot start a PostgreSQL cluster: ${(error as Error).message}\n${stderr}`);
  }
  return {
    adminUrl: `postgres://${clusterUser}:${clusterPassword}@127.0.0.1:${port}/postgres`,
    port,
    dir,
    pause: () => runAsClusterUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']),
    resume: start,
    stop() {
      try {
        runAsClusterUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function userIds(name: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
  return { uid, gid };
}

/** A new empty database on the cluster of `adminUrl`; its URL. One per test file keeps files apart. */
export async function createTestDatabase(adminUrl: string, prefix = 'fleetbook_test'): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The admin URL the postgres project's global setup started, or undefined when skipped. */
export function testPostgresUrl(): string | undefined {
  return process.env[POSTGRES_URL_ENV] || undefined;
}
