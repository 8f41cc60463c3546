/**
 * `fleetbook validate` checks reads anywhere in an expression, not only plain paths: a field
 * that no longer exists, read inside `.{ ... }` and inside a filter `[ ... ]` written over
 * several lines, is refused with exit 2 at its line and column, with the field meant.
 */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const fixture = fileURLToPath(new URL('../playbooks/invalid/inferred-cluster-ids.yaml', import.meta.url));

it('refuses hypervisorClusterIds read inside .{ } and inside hypervisorClusters[ ], located, with a did-you-mean', async () => {
  const result = await runCli(['validate', fixture]);
  expect(result.code).toBe(2);
  expect(result.stderr).toBe('');
  expect(result.stdout).toContain(
    "inferred-cluster-ids.yaml:14:53  error  `steps.paths.outputs.body.items[0].systemsWithUpdatePath` has no field 'hypervisorClusterIds': its fields are hypervisorClusters, id, name. Did you mean `hypervisorClusters.hypervisorClusterId`?",
  );
  expect(result.stdout).toContain(
    "inferred-cluster-ids.yaml:18:15  error  `steps.paths.outputs.body.items[0].systemsWithUpdatePath.hypervisorClusters` has no field 'hypervisorClusterIds': its fields are hypervisorClusterId, hypervisorClusterName. Did you mean `hypervisorClusterId`?",
  );
  expect(result.stdout).toContain('(UNKNOWN_PATH_FIELD)');
  expect(result.stdout).toContain('2 error(s), 0 warning(s) in 1 file(s)');
});

it('-o json gives the exact range of each misread name', async () => {
  const result = await runCli(['validate', '-o', 'json', fixture]);
  expect(result.code).toBe(2);
  expect(JSON.parse(result.stdout)).toMatchObject([
    {
      code: 'UNKNOWN_PATH_FIELD',
      pointer: '/steps/1/set/systems',
      range: { start: { line: 14, column: 53 }, end: { line: 14, column: 73 } },
    },
    {
      code: 'UNKNOWN_PATH_FIELD',
      pointer: '/steps/1/set/firstCluster',
      range: { start: { line: 18, column: 15 }, end: { line: 18, column: 35 } },
    },
  ]);
});
