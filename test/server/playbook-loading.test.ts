/**
 * The server loads its playbook folder off the event loop's path: a heavy playbook dropped into
 * the folder is checked in a worker thread while the server answers, so `/healthz` is answered
 * before the catalog has the new playbook (it was answered only after the whole load, 16–24 s
 * for a 650 KB name before did-you-mean was bounded). Ordered by events, not by times.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SMALL = 'name: small\nsteps:\n  - log: hello\n';

/** A valid playbook of about `bytes` bytes: `set` steps each reading an input and the step before. */
function largePlaybook(bytes: number): string {
  const lines = ['name: large', 'inputs:', '  count: { type: integer, default: 3 }', 'steps:'];
  for (let step = 0, length = 0; length < bytes; step += 1) {
    const previous = step === 0 ? '' : `\${{ steps.s${step - 1}.outputs.n }}`;
    const text = `  - id: s${step}\n    set:\n      n: \${{ inputs.count + ${step} }}\n      previous: "${previous}"`;
    lines.push(text);
    length += text.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

const names = (answer: { body: unknown }): string[] =>
  (answer.body as { playbooks: Array<{ name: string }> }).playbooks.map((playbook) => playbook.name);

it('answers /healthz while a heavy playbook dropped into the folder is loading, then lists it', async () => {
  server = await startTestServer({ 'small.yaml': SMALL });
  const t = server;
  const token = t.tokens.viewer;
  expect(names(await t.api('GET', '/api/v1/playbooks', { token }))).toEqual(['small']);

  writeFileSync(join(t.dir, 'playbooks', 'large.yaml'), largePlaybook(256 * 1024));
  const order: string[] = [];
  const loading = t.logged('"event":"playbooks.loading"');
  const loaded = t.logged('"event":"playbooks.loaded"').then(() => order.push('catalog loaded'));
  const listing = t.api('GET', '/api/v1/playbooks', { token }).then((answer) => {
    order.push('playbooks listed');
    return answer;
  });
  await loading;
  const health = await fetch(`${t.url}/healthz`);
  order.push('healthz answered');
  expect(health.status).toBe(200);

  expect(names(await listing)).toEqual(['large', 'small']);
  await loaded;
  expect(order).toEqual(['healthz answered', 'catalog loaded', 'playbooks listed']);
});
