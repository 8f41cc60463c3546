/**
 * The weekly fleet report mails the week's failed runs from the run store as a table and a CSV
 * attachment: the bundled playbook run against the simulator, its mail taken by a real SMTP
 * sink. Also the two step kinds it is made with (`runs`, `file`), as a playbook author meets them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { RunOptions, RunResult } from '../../src/engine/index.js';
import { createChannelMailer, parseNotificationConfig } from '../../src/notifications/index.js';
import { hasErrors, loadPlaybook } from '../../src/playbook/index.js';
import { startHarness, type Harness } from '../engine/harness.js';
import { startSmtpSink, type SmtpSink } from '../notifications/receivers.js';

const PASSWORD = 'smtp-Pa55word-2207';
let harness: Harness;
let sink: SmtpSink;
let dir: string;
beforeAll(async () => {
  harness = await startHarness({}, { logLevel: 'debug' });
  sink = await startSmtpSink('mailer', PASSWORD);
});
afterAll(async () => {
  await sink.close();
  await harness.close();
});
beforeEach((context) => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-weekly-'));
  context.onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
});

function mailer() {
  const config = parseNotificationConfig(
    [
      'notifications:',
      '  retry: { maxAttempts: 1 }',
      '  channels:',
      '    reports:',
      '      type: email',
      '      host: 127.0.0.1',
      `      port: ${sink.port}`,
      '      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }',
      '      from: Fleetbook <fleetbook@example.com>',
      '      to: [nobody@example.com]',
      '',
    ].join('\n'),
    join(dir, 'fleetbook.yaml'),
    { SMTP_USER: 'mailer', SMTP_PASSWORD: PASSWORD },
  );
  return createChannelMailer(config);
}

function load(file: string) {
  const loaded = loadPlaybook(file);
  if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(JSON.stringify(loaded.problems, null, 1));
  return loaded.playbook;
}

function run(file: string, options: Partial<RunOptions> = {}): Promise<RunResult> {
  return harness.run(load(file), { env: {}, outputsDir: join(dir, 'outputs'), ...options });
}

function write(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

it("mails the week's failed runs as an HTML table, with the same runs attached as CSV", async () => {
  const broken = await run(write('broken.yaml', 'name: broken\nsteps:\n  - fail: out of disk\n'));
  expect(broken.status).toBe('failed');
  const before = sink.mails.length;
  const report = await run(resolve(import.meta.dirname, '../../playbooks/weekly-fleet-report.yaml'), {
    inputs: { regions: ['us-west'], recipients: ['ops@example.com'] },
    mailer: mailer(),
  });
  expect(report.status, JSON.stringify(report.steps.filter((step) => step.status === 'failed'))).toBe('succeeded');
  expect(report.outputs).toMatchObject({ failedRuns: 1 });
  expect(sink.mails).toHaveLength(before + 1);
  const mail = sink.mails.at(-1);
  const [record] = await harness.store.listRuns({ playbook: 'broken' });
  if (!mail || !record?.endedAt) throw new Error('no mail, or the broken run has not ended');
  expect(mail.html).toContain('<strong>Failed runs of the last 7 days: 1</strong>');
  expect(mail.html).toMatch(
    new RegExp(`<td>${record.id}</td>\\s*<td>broken</td>\\s*<td>[^<]+</td>\\s*<td>FAILED_BY_PLAYBOOK</td>`),
  );
  expect(mail.text).toContain(`${record.id}  broken`);
  expect(mail.attachments.map((file) => file.filename)).toEqual(['failed-runs.csv']);
  const csv = `id,playbook,status,startedAt,endedAt,errorCode\r\n${record.id},broken,failed,${record.startedAt},${record.endedAt},FAILED_BY_PLAYBOOK\r\n`;
  expect(mail.attachments[0]?.content.toString()).toBe(csv);
  expect(readFileSync(join(dir, 'outputs', report.runId, 'failed-runs.csv'), 'utf8')).toBe(csv);
});

it('runs: lists runs by status and age, newest first, with no inputs or messages', async () => {
  const now = Date.now();
  const old = new Date(now - 8 * 86_400_000).toISOString();
  await harness.store.createRun({
    id: 'old-failure',
    playbook: 'aged',
    playbookSource: 'aged.yaml',
    playbookHash: 'h',
    inputs: { password: 'not-listed' },
    secretInputNames: [],
    dryRun: false,
    trigger: { kind: 'manual' },
    startedAt: old,
  });
  await harness.store.setRunStatus('old-failure', 'failed', { error: { message: 'old news', code: 'STEP_TIMEOUT' } });
  const file = write(
    'lister.yaml',
    `name: lister
steps:
  - id: week
    runs: { playbook: aged, since: 7d }
  - id: ever
    runs: { playbook: aged, status: failed }
outputs:
  week: \${{ steps.week.outputs.count }}
  ever: \${{ steps.ever.outputs.runs }}
`,
  );
  const result = await run(file);
  expect(result.outputs).toEqual({
    week: 0,
    ever: [
      {
        id: 'old-failure',
        playbook: 'aged',
        status: 'failed',
        startedAt: old,
        endedAt: expect.any(String) as string,
        errorCode: 'STEP_TIMEOUT',
      },
    ],
  });
});

it('runs and file: a field their outputs cannot have, and a file name with a folder, are refused as the playbook loads', () => {
  const file = write(
    'bad.yaml',
    `name: bad
steps:
  - id: failed
    runs: { status: failed }
  - id: csv
    file:
      name: ../escape.csv
      csv: '\${{ steps.failed.outputs.runs.{ "code": errCode } }}'
`,
  );
  const problems = loadPlaybook(file).problems.map(({ code, line, message }) => ({ code, line, message }));
  expect(problems).toEqual([
    {
      code: 'INVALID_FILE',
      line: 7,
      message: expect.stringContaining(`file name: "../escape.csv" is not a file name`) as string,
    },
    { code: 'UNKNOWN_PATH_FIELD', line: 8, message: expect.stringContaining('errCode') as string },
  ]);
});

it('file: a computed name outside the run folder, or rows that are not objects, fail the step (INVALID_FILE)', async () => {
  const file = write(
    'computed.yaml',
    `name: computed
inputs:
  name: { type: string, default: ../../escape.csv }
  rows: { type: array, default: [1, 2] }
steps:
  - id: named
    continueOnError: true
    file: { name: "\${{ inputs.name }}", csv: [{ a: 1 }] }
  - id: rows
    continueOnError: true
    file: { name: rows.csv, csv: "\${{ inputs.rows }}" }
`,
  );
  const result = await run(file);
  const errors = Object.fromEntries(result.steps.map((step) => [step.path, step.error]));
  expect(errors.named).toMatchObject({
    code: 'INVALID_FILE',
    message: expect.stringContaining('file name: "../../escape.csv" is not a file name') as string,
  });
  expect(errors.rows).toMatchObject({
    code: 'INVALID_FILE',
    message: expect.stringContaining('each row must be an object, got 1') as string,
  });
});

it('file: quotes what CSV must quote; `columns` orders the header and writes it without rows', async () => {
  const file = write(
    'quoting.yaml',
    `name: quoting
steps:
  - id: rows
    file:
      name: rows.csv
      csv:
        - { name: 'a, "b"', note: "two\\nlines", nested: { x: 1 } }
        - { extra: " padded" }
  - id: empty
    file: { name: empty.csv, columns: [id, status], csv: [] }
`,
  );
  const result = await run(file);
  expect(result.status).toBe('succeeded');
  const folder = join(dir, 'outputs', result.runId);
  expect(readFileSync(join(folder, 'rows.csv'), 'utf8')).toBe(
    'name,note,nested,extra\r\n"a, ""b""","two\nlines","{""x"":1}",\r\n,,," padded"\r\n',
  );
  expect(readFileSync(join(folder, 'empty.csv'), 'utf8')).toBe('id,status\r\n');
});
