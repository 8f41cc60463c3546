/**
 * The mailer of `email` steps against a real SMTP server, in virtual time: a reply the server
 * calls temporary (451) is tried again after the channel's delay, a permanent one (550) fails
 * the step at once with the server's words, an attachment over `maxAttachment` is sent
 * gzipped, and one too large even gzipped becomes a download link the server serves.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fastRun, summary, type FastRun } from '../../src/engine/engine.test-kit.js';
import { createChannelMailer, parseNotificationConfig } from '../../src/notifications/index.js';
import { hasErrors, loadPlaybook } from '../../src/playbook/index.js';
import { startSmtpSink, type SmtpAnswer, type SmtpSink } from './receivers.js';

const PASSWORD = 'smtp-Pa55word-8810';
const START = Date.parse('2026-01-01T00:00:00Z');
let dir: string;
let sink: SmtpSink | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-mailer-'));
});
afterEach(async () => {
  await sink?.close();
  sink = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The e-mail channel `reports` to a fresh sink answering `answer`, retried as `retry` says; `server.url` when given. */
async function channel(answer: (arrival: number) => SmtpAnswer, retry: string, serverUrl?: string) {
  sink = await startSmtpSink('mailer', PASSWORD, answer);
  const text = [
    ...(serverUrl ? ['server:', `  url: ${serverUrl}`] : []),
    'notifications:',
    `  retry: ${retry}`,
    '  channels:',
    '    reports:',
    '      type: email',
    '      host: 127.0.0.1',
    `      port: ${sink.port}`,
    '      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }',
    '      from: Fleetbook <fleetbook@example.com>',
    '      to: [nobody@example.com]',
    '',
  ].join('\n');
  const config = parseNotificationConfig(text, join(dir, 'fleetbook.yaml'), {
    SMTP_USER: 'mailer',
    SMTP_PASSWORD: PASSWORD,
  });
  return { sink, mailer: createChannelMailer(config) };
}

/** The playbook `steps` (YAML, indented as a step list) loaded from the test's folder and run in virtual time. */
async function run(steps: string, mailer: ReturnType<typeof createChannelMailer>): Promise<FastRun> {
  const file = join(dir, 'mail.yaml');
  writeFileSync(file, `name: mail\nsteps:\n${steps}`);
  const loaded = loadPlaybook(file);
  if (!loaded.playbook || hasErrors(loaded.problems)) throw new Error(JSON.stringify(loaded.problems, null, 1));
  return fastRun(loaded.playbook, { mailer, outputsDir: join(dir, 'outputs') });
}

const MAIL = `  - id: mail
    email:
      to: ops@example.com
      subject: weekly
      body: "**hello**"
`;

const retryLines = (result: FastRun) =>
  result.lines.filter((line) => String(line.msg).startsWith('e-mail not taken yet'));

it("a temporary refusal (451) is tried again after the channel's delay, in virtual time: one message taken", async () => {
  const { sink, mailer } = await channel(
    (arrival) => (arrival === 1 ? 'refuse' : 'accept'),
    '{ maxAttempts: 3, initialDelay: 30s }',
  );
  const result = await run(MAIL, mailer);
  expect(result.result.status).toBe('succeeded');
  expect(sink.arrivals.map((arrival) => arrival.answered)).toEqual(['refuse', 'accept']);
  expect(sink.mails).toHaveLength(1);
  expect(sink.mails[0]?.subject).toBe('weekly');
  expect(retryLines(result)).toMatchObject([
    { level: 40, delayMs: 30_000, msg: expect.stringMatching(/^e-mail not taken yet; try 2 in 30000 ms \(.*451/) },
  ]);
  // The wait was the clock's: 30 s passed in virtual time.
  expect(result.clock.now() - START).toBeGreaterThanOrEqual(30_000);
  expect(summary(result, 'mail')).toMatchObject({ status: 'succeeded' });
});

it("out of tries, the step fails EMAIL_NOT_SENT after the policy's attempts", async () => {
  const { sink, mailer } = await channel(() => 'refuse', '{ maxAttempts: 3, initialDelay: 10s }');
  const result = await run(MAIL, mailer);
  expect(result.result.status).toBe('failed');
  expect(sink.arrivals).toHaveLength(3);
  expect(sink.mails).toHaveLength(0);
  expect(retryLines(result).map((line) => line.delayMs)).toEqual([10_000, 20_000]);
  expect(summary(result, 'mail')?.error).toMatchObject({ code: 'EMAIL_NOT_SENT' });
});

it("a permanent refusal (550) fails the step at once with the server's words, not tried again", async () => {
  const { sink, mailer } = await channel(
    () => ({ code: 550, message: 'mailbox unavailable: no such user here' }),
    '{ maxAttempts: 5, initialDelay: 30s }',
  );
  const result = await run(MAIL, mailer);
  expect(result.result.status).toBe('failed');
  expect(sink.arrivals).toHaveLength(1);
  expect(retryLines(result)).toEqual([]);
  const error = summary(result, 'mail')?.error;
  expect(error?.code).toBe('EMAIL_REFUSED');
  expect(error?.message).toMatch(
    /^email: the SMTP server of channel 'reports' refused the message: 550 mailbox unavailable: no such user here/,
  );
});

it('an attachment over maxAttachment arrives gzipped, its bytes gunzip to the file', async () => {
  const { sink, mailer } = await channel(() => 'accept', '{ maxAttempts: 1 }');
  const content = Buffer.from('region,systems\n'.repeat(4000));
  writeFileSync(join(dir, 'big.csv'), content);
  const result = await run(`${MAIL}      attach: [big.csv]\n      maxAttachment: 4KB\n`, mailer);
  expect(result.result.status).toBe('succeeded');
  const [file] = sink.mails[0]?.attachments ?? [];
  expect(file?.filename).toBe('big.csv.gz');
  expect(file?.contentType).toBe('application/gzip');
  expect(file?.content.length).toBeLessThanOrEqual(4096);
  expect(gunzipSync(file?.content ?? Buffer.alloc(0)).equals(content)).toBe(true);
});

it('an attachment over maxAttachment even gzipped is a download link of the run’s files, not an attachment', async () => {
  const { sink, mailer } = await channel(() => 'accept', '{ maxAttempts: 1 }', 'https://fleetbook.example.com');
  // Random bytes do not shrink when gzipped.
  const noise = randomBytes(8192);
  writeFileSync(join(dir, 'noise.bin'), noise);
  const rows = Array.from({ length: 40 }, () => `        - { value: "${randomBytes(96).toString('hex')}" }`).join('\n');
  const steps = `  - id: csv
    file:
      name: values.csv
      csv:
${rows}
${MAIL}      attach: [noise.bin, "\${{ steps.csv.outputs.path }}"]
      maxAttachment: 1KB
`;
  const result = await run(steps, mailer);
  expect(result.result.status, JSON.stringify(summary(result, 'mail'))).toBe('succeeded');
  const mail = sink.mails[0];
  expect(mail?.attachments).toEqual([]);
  const base = `https://fleetbook.example.com/runs/${result.result.runId}/files`;
  // A file of the playbook's folder is copied into the run's folder, which the link's route serves; the CSV is there already.
  expect(mail?.text).toContain(`Too large to attach; download: ${base}/noise.bin ${base}/values.csv`);
  expect(mail?.html).toContain(`<a href="${base}/noise.bin">${base}/noise.bin</a>`);
  expect(readFileSync(join(dir, 'outputs', result.result.runId, 'noise.bin')).equals(noise)).toBe(true);
});
