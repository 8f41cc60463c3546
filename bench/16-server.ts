/**
 * Benchmark 16, `fleetbook server`: (a) 100 clients following one run's event stream while
 * a 500-item loop runs (each item a 20 ms sleep, 10 at a time): the latency from each journal
 * append (the entry's `at`) to its arrival at each client, p50/p95/max over all clients and
 * events; (b) the run page of a finished 10,000-item run opened in Chromium (logged in): the time
 * to its load event, and the bars its timeline draws; and its loop's grid (500 cells a page), the same. Server, runs and clients share this one
 * process (loopback), as a small team's server would. Targets (issue 21, measured, not asserted
 * by tests): p95 ≤ 200 ms; the page and the grid in ≤ 1 s each (issue 40).
 * Run alone: npx tsx bench/16-server.ts [--quick]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPlatformClient } from '../src/api/index.js';
import { createSecretRegistry } from '../src/logging/index.js';
import { issueApiToken, startServer, type RunningServer } from '../src/server/index.js';
import { createQuietLogger, createTempStore, ms, printFigures, quick } from './lib/harness.js';
import { launchChromium } from '../test/browser/chromium.js';

const ITEMS = quick ? 100 : 500;
const CLIENTS = quick ? 10 : 100;
const BIG_ITEMS = quick ? 1000 : 10_000;

const temp = createTempStore();
const folder = join(temp.dir, 'playbooks');
mkdirSync(folder);
writeFileSync(
  join(folder, 'loop.yaml'),
  `name: loop\ninputs:\n  count: { type: integer, default: 10 }\nsteps:\n  - id: items\n    forEach: "\${{ [1..inputs.count] }}"\n    as: n\n    concurrency: 10\n    steps:\n      - id: nap\n        sleep: 20ms\n`,
);
writeFileSync(
  join(folder, 'big.yaml'),
  `name: big\ninputs:\n  count: { type: integer, default: 10 }\nsteps:\n  - id: items\n    forEach: "\${{ [1..inputs.count] }}"\n    as: n\n    steps:\n      - id: note\n        set: { n: "\${{ n }}" }\n`,
);
const secrets = createSecretRegistry();
const logger = createQuietLogger(secrets);
// No step calls the platform: a client of nowhere.
const client = createPlatformClient({
  credentials: { clientId: 'none', clientSecret: 'none-secret' },
  authUrl: 'http://127.0.0.1:9',
  baseUrl: 'http://127.0.0.1:9',
  regionalUrl: 'http://127.0.0.1:9',
  logger,
});
const token = (await issueApiToken(temp.store, { name: 'bench', role: 'operator' })).secret;
const server: RunningServer = await startServer({
  store: temp.store,
  client,
  logger,
  secrets,
  playbooksDir: folder,
  env: {},
  outputsDir: temp.outputsDir,
  host: '127.0.0.1',
  port: 0,
});
const auth = { authorization: `Bearer ${token}` };

async function start(playbook: string, count: number): Promise<string> {
  const answer = await fetch(`${server.url}/api/v1/runs`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ playbook, inputs: { count } }),
  });
  return ((await answer.json()) as { run: { id: string } }).run.id;
}

/** Follows the run's events to `run.ended`; the latency of each entry (arrival − its journal time). */
async function follow(runId: string): Promise<number[]> {
  const answer = await fetch(`${server.url}/api/v1/runs/${runId}/events`, { headers: auth });
  // Entries journaled before the stream was open are its backlog, not live latency.
  const connectedAt = Date.now();
  const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader();
  const latencies: number[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return latencies;
    const now = Date.now();
    buffer += value;
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      const data = block.split('\n').find((line) => line.startsWith('data: '));
      if (!data || block.includes('event: run.ended')) continue;
      const at = Date.parse((JSON.parse(data.slice(6)) as { at: string }).at);
      if (at >= connectedAt) latencies.push(now - at);
    }
  }
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

try {
  // (a) SSE fan-out: the clients connect as the run starts (they read from seq 0, then live).
  const runId = await start('loop', ITEMS);
  const startedAt = performance.now();
  const all = (await Promise.all(Array.from({ length: CLIENTS }, () => follow(runId)))).flat();
  const runMs = performance.now() - startedAt;
  const sorted = all.sort((a, b) => a - b);
  const p95 = percentile(sorted, 95);
  // (b) The page of a finished big run in Chromium.
  const bigId = await start('big', BIG_ITEMS);
  while ((await temp.store.getRun(bigId))?.status === 'running')
    await new Promise((resolve) => setTimeout(resolve, 100));
  const browser = await launchChromium();
  let pageMs = 0;
  let gridMs = 0;
  let bars = 0;
  let cells = 0;
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/runs$/);
    const before = performance.now();
    await page.goto(`${server.url}/runs/${bigId}`, { waitUntil: 'load' });
    pageMs = performance.now() - before;
    bars = await page.locator('#timeline g.row').count();
    const gridFrom = performance.now();
    await page.goto(`${server.url}/runs/${bigId}/items?loop=items`, { waitUntil: 'load' });
    gridMs = performance.now() - gridFrom;
    cells = await page.locator('ol.grid > li').count();
  } finally {
    await browser.close();
  }
  printFigures(
    '16 server',
    `${CLIENTS} SSE clients on a ${ITEMS}-item loop (${(runMs / 1000).toFixed(1)} s): ${sorted.length} live events delivered, append → client p50 ${ms(percentile(sorted, 50))}, p95 ${ms(p95)}, max ${ms(sorted.at(-1) ?? 0)}; run page of a finished ${BIG_ITEMS}-item run in Chromium ${ms(pageMs)} (${bars} timeline bars), its grid ${ms(gridMs)} (${cells} cells)`,
    [
      { label: `p95 ${ms(p95)} ≤ 200 ms`, pass: p95 <= 200 },
      { label: `page ${ms(pageMs)} ≤ 1000 ms`, pass: pageMs <= 1000 },
      { label: `grid ${ms(gridMs)} ≤ 1000 ms`, pass: gridMs <= 1000 },
    ],
  );
} finally {
  await server.close();
  await temp.dispose();
}
