import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../src/playbook/index.js';
import type { Playbook } from '../../src/playbook/index.js';
import { noRetry, playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const again = { ...noRetry, maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 2, on: ['any' as const] };

describe('retry on containers', () => {
  it('runs a failing block again as a whole, up to its maxAttempts', async () => {
    harness = await startHarness();
    const result = await harness.run(
      playbook([
        step({
          id: 'group',
          kind: 'block',
          retry: again,
          steps: [step({ id: 'boom', kind: 'fail', message: t('no') })],
        }),
      ]),
    );
    expect(result.status).toBe('failed');
    expect(result.steps.find((s) => s.path === 'group')).toMatchObject({ status: 'failed', attempts: 3 });
    expect(result.steps.filter((s) => s.path === 'group.boom')).toHaveLength(3);
    const retries = (await harness.store.journal(result.runId))
      .map((entry) => entry.event)
      .filter((event) => event.type === 'retry.scheduled');
    expect(retries).toMatchObject([
      { path: 'group', attempt: 2, reason: 'any' },
      { path: 'group', attempt: 3, reason: 'any' },
    ]);
  });

  it('ends a block succeeded when a later attempt succeeds, its steps run again', async () => {
    harness = await startHarness({ faults: { rules: [{ route: 'privateCloud.listSystems', status: 400, count: 1 }] } });
    const result = await harness.run(
      playbook([
        step({
          id: 'group',
          kind: 'block',
          retry: again,
          steps: [step({ id: 'systems', kind: 'call', operationId: 'privateCloud.listSystems', with: t({}) })],
        }),
      ]),
    );
    expect(result.status).toBe('succeeded');
    expect(result.steps.find((s) => s.path === 'group')).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(
      harness.sim.control.requests({ operationId: 'privateCloud.listSystems' }).map((entry) => entry.status),
    ).toEqual([400, 200]);
  });

  it('does not retry a block on a condition its failure does not meet', async () => {
    harness = await startHarness();
    const result = await harness.run(
      playbook([
        step({
          id: 'group',
          kind: 'block',
          retry: { ...again, on: ['transient'] },
          steps: [step({ id: 'boom', kind: 'fail', message: t('no') })],
        }),
      ]),
    );
    expect(result.steps.find((s) => s.path === 'group')).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('ignores retry on a forEach with one warning, and runs it once', async () => {
    harness = await startHarness();
    const loop = step({
      id: 'each',
      kind: 'forEach',
      items: t('${{ [1, 2] }}'),
      as: 'n',
      concurrency: t(1),
      retry: again,
      steps: [step({ id: 'boom', kind: 'fail', message: t('no') })],
    });
    const result = await harness.run(playbook([loop]));
    expect(result.steps.find((s) => s.path === 'each')).toMatchObject({ status: 'failed', attempts: 1 });
    const warnings = harness.lines().filter((line) => String(line.msg).includes('`retry` is ignored on a forEach'));
    expect(warnings).toHaveLength(1);
  });

  it('retries a block by the retry written on it, not by the defaults every step inherits (loaded from YAML)', async () => {
    harness = await startHarness();
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-block-retry-'));
    const file = join(dir, 'block-retry.yaml');
    const written = (blockRetry: string): Playbook => {
      writeFileSync(
        file,
        [
          'name: block-retry',
          'defaults: { retry: { maxAttempts: 3, initialDelay: 1ms, on: [any] } }',
          'steps:',
          '  - id: group',
          ...(blockRetry ? [`    retry: ${blockRetry}`] : []),
          '    block:',
          '      - id: boom',
          '        fail: { message: no }',
        ].join('\n'),
      );
      const loaded = loadPlaybook(file);
      expect(loaded.problems).toEqual([]);
      return loaded.playbook!;
    };
    try {
      const inherited = await harness.run(written(''));
      expect(inherited.steps.find((s) => s.path === 'group')).toMatchObject({ status: 'failed', attempts: 1 });
      // The same policy as the defaults, written on the block: the block is retried.
      const declared = await harness.run(written('{ maxAttempts: 3, initialDelay: 1ms, on: [any] }'));
      expect(declared.steps.find((s) => s.path === 'group')).toMatchObject({ status: 'failed', attempts: 3 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
