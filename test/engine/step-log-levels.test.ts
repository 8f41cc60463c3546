import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/index.js';
import { playbook, startHarness, step, t, type Harness } from './harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('step log lines at info', () => {
  it('keeps the started/finished lines of calls and failures, not those of set steps, and a log step says its message', async () => {
    const h = (harness = await startHarness());
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ destination, level: 'info', secrets: h.secrets });
    const result = await h.run(
      playbook([
        step({ id: 'compute', kind: 'set', values: t({ answer: 42 }) }),
        step({ id: 'catalog', kind: 'call', operationId: 'privateCloud.listSoftwareCatalogs', with: t({}) }),
        step({ id: 'say', kind: 'log', message: t('answer is ${{ steps.compute.outputs.answer }}'), level: 'info' }),
        step({ id: 'check', kind: 'assert', condition: t(false), continueOnError: true }),
      ]),
      { logger },
    );
    expect(result.status).toBe('succeeded');
    const messages = lines.map((line) => line.msg);
    expect(messages).toContain('step catalog started');
    expect(messages).toContain('step catalog succeeded');
    expect(messages).toContain('answer is 42');
    expect(lines.find((line) => line.msg === 'step check failed')).toMatchObject({ level: 50, stepId: 'check' });
    expect(messages.filter((msg) => typeof msg === 'string' && /^step (compute|say) /.test(msg))).toEqual([]);
  });
});
