import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { loadPlaybook } from './load-playbook.js';

const bundled = fileURLToPath(new URL('../../playbooks/rolling-cluster-update.yaml', import.meta.url));

it('compiles the playbook schema once for the built-in step kinds, not once per file loaded', () => {
  const timed = (): number => {
    const startedAt = performance.now();
    expect(loadPlaybook(bundled).problems).toEqual([]);
    return performance.now() - startedAt;
  };
  const first = timed();
  // Measured as a ratio in the same run: the first load compiles the schema (about 0.4 s);
  // ten more loads of the same file, each recompiling it, took about ten times that.
  const tenMore = Array.from({ length: 10 }, timed).reduce((sum, ms) => sum + ms, 0);
  expect(tenMore).toBeLessThan(first);
});
