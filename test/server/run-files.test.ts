/**
 * A run's files over the server: the run page lists what the run wrote to its outputs folder,
 * and `/runs/:id/files/*` (a session or a token) and `/api/v1/runs/:id/files/*` (a token)
 * stream one as a download, viewer role. Nothing outside the run's folder is served: a `..`,
 * a symbolic link leading out, a hidden file are 404 as a missing file is.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pageSession, startTestServer, type TestServer } from './harness.js';

const REPORT = `name: report
steps:
  - id: csv
    file:
      name: systems.csv
      csv:
        - { name: alpha, region: us-west }
        - { name: "beta, the second", region: eu-west }
`;
const CSV = 'name,region\r\nalpha,us-west\r\n"beta, the second",eu-west\r\n';

let t: TestServer;
let runId: string;
beforeAll(async () => {
  t = await startTestServer({ 'report.yaml': REPORT });
  const started = await t.api('POST', '/api/v1/runs', { token: t.tokens.operator, body: { playbook: 'report' } });
  runId = (started.body as { run: { id: string } }).run.id;
  // The event stream ends once the run has: no polling.
  await (await fetch(`${t.url}/api/v1/runs/${runId}/events`, { headers: bearer(t.tokens.viewer) })).text();
  const folder = join(t.dir, 'outputs', runId);
  // What must never be served: a file beside the run's folder, reached by `..` or by a link.
  writeFileSync(join(t.dir, 'outputs', 'other-run-secret.txt'), 'not yours');
  symlinkSync(join(t.dir, 'outputs', 'other-run-secret.txt'), join(folder, 'leak.txt'));
  writeFileSync(join(folder, '.half.csv.part'), 'half');
  mkdirSync(join(folder, 'nested'));
  writeFileSync(join(folder, 'nested', 'data.json'), '{"a":1}');
});
afterAll(async () => {
  await t.close();
});

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** A GET with the path sent as written (fetch would resolve `..` before sending it). */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

it('the run page lists the files the run wrote, each linked to its download', async () => {
  const { cookie } = await pageSession(t.server.app, t.tokens.viewer);
  const page = await t.server.app.inject({ method: 'GET', url: `/runs/${runId}`, headers: { cookie } });
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('<h2>Files</h2>');
  expect(page.body).toContain(`<a href="/runs/${runId}/files/systems.csv" download>systems.csv</a> 56 B`);
  expect(page.body).toContain(`<a href="/runs/${runId}/files/nested/data.json" download>nested/data.json</a>`);
  expect(page.body).not.toContain('leak.txt');
  expect(page.body).not.toContain('.half.csv.part');
});

it('streams a file as a download to a viewer: a session or a token on the page route, a token on the API', async () => {
  const { cookie } = await pageSession(t.server.app, t.tokens.viewer);
  for (const [path, headers] of [
    [`/runs/${runId}/files/systems.csv`, { cookie }],
    [`/runs/${runId}/files/systems.csv`, bearer(t.tokens.viewer)],
    [`/api/v1/runs/${runId}/files/systems.csv`, bearer(t.tokens.viewer)],
  ] as const) {
    const answer = await fetch(`${t.url}${path}`, { headers });
    expect(answer.status, path).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(answer.headers.get('content-disposition')).toBe(
      `attachment; filename="systems.csv"; filename*=UTF-8''systems.csv`,
    );
    expect(await answer.text()).toBe(CSV);
  }
  const nested = await fetch(`${t.url}/runs/${runId}/files/nested/data.json`, { headers: bearer(t.tokens.admin) });
  expect(nested.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(await nested.text()).toBe('{"a":1}');
});

it('asks for a login or a token: none is a redirect to the login page (page route) or 401 (API)', async () => {
  const page = await fetch(`${t.url}/runs/${runId}/files/systems.csv`, { redirect: 'manual' });
  expect(page.status).toBe(302);
  expect(page.headers.get('location')).toBe(`/login?next=${encodeURIComponent(`/runs/${runId}/files/systems.csv`)}`);
  expect((await fetch(`${t.url}/api/v1/runs/${runId}/files/systems.csv`)).status).toBe(401);
  const forged = await fetch(`${t.url}/runs/${runId}/files/systems.csv`, { headers: bearer('fbk_not-a-token') });
  expect(forged.status).toBe(401);
});

it('serves nothing outside the run folder: `..`, a link leading out, a hidden file, a folder, another run are 404', async () => {
  const headers = bearer(t.tokens.viewer);
  for (const prefix of [`/runs/${runId}/files`, `/api/v1/runs/${runId}/files`]) {
    for (const path of [
      '../other-run-secret.txt',
      '%2e%2e/other-run-secret.txt',
      '..%2fother-run-secret.txt',
      'nested/../../other-run-secret.txt',
      'leak.txt',
      '.half.csv.part',
      'nested',
      'missing.csv',
    ]) {
      const answer = await rawGet(`${prefix}/${path}`, headers);
      expect(answer.status, `${prefix}/${path}`).toBe(404);
      expect(answer.body).not.toContain('not yours');
    }
  }
  expect((await rawGet('/api/v1/runs/no-such-run/files/systems.csv', headers)).status).toBe(404);
  const { cookie } = await pageSession(t.server.app, t.tokens.viewer);
  const missing = await rawGet(`/runs/${runId}/files/..%2fother-run-secret.txt`, { cookie });
  expect(missing.status).toBe(404);
  expect(missing.body).toContain('No such file');
});
