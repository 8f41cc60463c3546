/**
 * The event stream's cost per event: an entry is scrubbed and serialised once, whatever the
 * number of clients following its run (the hub hands them all the same entries), and every
 * client still gets every entry, then `run.ended`.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createSecretRegistry } from '../../src/logging/index.js';
import { createJournalHub, createServerMetrics } from '../../src/server/index.js';
import { streamRunEvents } from '../../src/server/run-events.js';
import { createScrub, type Scrub } from '../../src/server/views.js';
import { createMemoryRunStore } from '../../src/store/index.js';

describe('run event streams', () => {
  it('scrubs and serialises each entry once for all the clients of a run', async () => {
    const store = createMemoryRunStore();
    await store.createRun({
      id: 'r1',
      playbook: 'p',
      playbookSource: 'p.yaml',
      playbookHash: 'h',
      inputs: {},
      secretInputNames: [],
      dryRun: false,
      trigger: { kind: 'manual' },
      startedAt: new Date().toISOString(),
    });
    const ENTRIES = 40;
    for (let n = 0; n < ENTRIES; n += 1)
      await store.append('r1', { type: 'log', path: `step-${n}`, level: 'info', message: `line ${n}` } as never);
    await store.setRunStatus('r1', 'succeeded');

    const scrubbed: unknown[] = [];
    const real = createScrub(createSecretRegistry());
    const scrub: Scrub = (value) => {
      scrubbed.push(value);
      return real(value);
    };
    const hub = createJournalHub(store, { pollMs: 10 });
    const app = Fastify();
    app.get('/events', async (_request, reply) => {
      await streamRunEvents(reply, { hub, scrub, metrics: createServerMetrics(store) }, 'r1', 0);
    });
    const CLIENTS = 5;
    const answers = await Promise.all(
      Array.from({ length: CLIENTS }, () => app.inject({ method: 'GET', url: '/events' })),
    );
    for (const answer of answers) {
      expect(answer.body.match(/^id: \d+$/gm)).toHaveLength(ENTRIES);
      expect(answer.body).toContain('event: run.ended');
    }
    // Each entry once, and the ended run once per client.
    const entriesScrubbed = scrubbed.filter((value) => (value as { seq?: number }).seq !== undefined);
    expect(entriesScrubbed).toHaveLength(ENTRIES);
    expect(scrubbed).toHaveLength(ENTRIES + CLIENTS);
    hub.close();
    await app.close();
  });
});
