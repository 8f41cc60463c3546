import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';
import { loadPlaybook } from './load-playbook.js';
import type * as playbookAjv from './playbook-ajv.js';
import { createPlaybookAjv } from './playbook-ajv.js';

// Every ajv instance a load makes goes through this spy (the real one still does the work).
vi.mock('./playbook-ajv.js', async (importOriginal) => {
  const original = await importOriginal<typeof playbookAjv>();
  return { createPlaybookAjv: vi.fn(original.createPlaybookAjv) };
});

const bundled = fileURLToPath(new URL('../../playbooks/rolling-cluster-update.yaml', import.meta.url));

it('compiles the playbook schema once for the built-in step kinds, not once per file loaded', () => {
  expect(loadPlaybook(bundled).problems).toEqual([]);
  const afterFirst = vi.mocked(createPlaybookAjv).mock.calls.length;
  // Under vitest there is no build's precompiled validator: the first load compiled the schema (about 0.4 s).
  expect(afterFirst).toBeGreaterThanOrEqual(1);
  for (let load = 0; load < 2; load += 1) expect(loadPlaybook(bundled).problems).toEqual([]);
  expect(vi.mocked(createPlaybookAjv).mock.calls.length).toBe(afterFirst);
  // A load takes a fraction of a second; a loaded machine (the whole suite at once) may take seconds.
}, 30_000);
