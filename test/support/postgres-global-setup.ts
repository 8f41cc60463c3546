/**
 * vitest `globalSetup` of the `postgres` project: one throwaway cluster for the project's test
 * files (each file makes its own database on it), stopped and removed at the end. Without
 * PostgreSQL installed the tests are skipped and one line says how to install it; under CI
 * (`CI` set) a server that cannot start fails the run instead, so CI never skips them.
 */
import {
  findPostgresBin,
  installHint,
  POSTGRES_SKIP_ENV,
  POSTGRES_URL_ENV,
  startPostgresCluster,
} from './postgres-cluster.js';

export default async function setup(): Promise<() => void> {
  const bin = findPostgresBin();
  if (!bin) {
    if (process.env.CI) throw new Error(`CI is set and PostgreSQL is not installed: ${installHint}`);
    process.env[POSTGRES_SKIP_ENV] = installHint;
    console.warn(installHint);
    return () => {
      delete process.env[POSTGRES_SKIP_ENV];
    };
  }
  // Installed but failing to start is never a skip: the tests must see why.
  const cluster = await startPostgresCluster(bin);
  process.env[POSTGRES_URL_ENV] = cluster.adminUrl;
  return () => {
    delete process.env[POSTGRES_URL_ENV];
    cluster.stop();
  };
}
