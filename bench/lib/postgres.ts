/**
 * A throwaway PostgreSQL cluster for the team-mode benchmarks (the tests' helper): started in a
 * temp dir as the `postgres` user, removed at the end. A benchmark exits with a clear line when
 * PostgreSQL is not installed.
 */
import {
  createTestDatabase,
  findPostgresBin,
  installHint,
  startPostgresCluster,
  type PostgresCluster,
} from '../../test/support/postgres-cluster.js';

export { createTestDatabase };

export async function startBenchCluster(name: string): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  if (!bin) {
    console.log(`[${name}] skipped: ${installHint}`);
    process.exit(0);
  }
  return startPostgresCluster(bin);
}
