/**
 * The `email` step end to end: `fleetbook run` (a process of its own) with an e-mail channel in
 * fleetbook.yaml delivering to a local SMTP sink; a SIGKILL between the server taking the
 * message and the journal recording it, then `fleetbook resume`; a rehearsal (`--target
 * simulator`) that mails no one; bad input refused by `fleetbook validate`, located, exit 2.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCliJson, type JsonOutcome } from '../support/spawn-cli.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSqliteRunStore } from '../../src/store/index.js';
import { lockStoreOnFirstArrival, startSmtpSink, type SmtpAnswer, type SmtpSink } from './receivers.js';

const SMTP_PASSWORD = 'smtp-Pa55word-4411';
const PROCESSES_MS = 120_000;
/** A platform no step calls: the playbooks here only mail (the connection sends nothing until a call). */
const PLATFORM = {
  FLEETBOOK_CLIENT_ID: 'id',
  FLEETBOOK_CLIENT_SECRET: 'secret',
  FLEETBOOK_AUTH_URL: 'http://127.0.0.1:9/auth',
  FLEETBOOK_BASE_URL: 'http://127.0.0.1:9',
  FLEETBOOK_REGIONAL_URL: 'http://127.0.0.1:9',
};

const playbook = `name: mail-report
inputs:
  recipients: { type: array, default: [ops@example.com, "Lead <lead@example.com>"] }
  note: { type: string, default: "<script>alert(1)</script> **not bold**" }
steps:
  - id: rows
    set:
      rows:
        - { region: us-west, systems: 3 }
        - { region: eu-central, systems: 12 }
  - id: mail
    email:
      to: \${{ inputs.recipients }}
      bcc: audit@example.com
      subject: "Fleet report \${{ run.playbook }}"
      body: |
        **Systems per region** \${{ inputs.note }}

        \${{ $table(steps.rows.outputs.rows) }}
      attach: [report.csv]
`;

let dir: string;
let sink: SmtpSink | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-email-'));
  writeFileSync(join(dir, 'report.csv'), 'region,systems\nus-west,3\neu-central,12\n');
  writeFileSync(join(dir, 'mail.yaml'), playbook);
});
afterEach(async () => {
  await sink?.close();
  sink = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function fleetbook(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnCliJson(args, { FLEETBOOK_HOME: join(dir, 'home'), SMTP_USER: 'mailer', SMTP_PASSWORD, ...env }, dir);
}

async function smtp(answer?: (arrival: number) => SmtpAnswer): Promise<SmtpSink> {
  sink = await startSmtpSink('mailer', SMTP_PASSWORD, answer);
  writeFileSync(
    join(dir, 'fleetbook.yaml'),
    [
      'notifications:',
      '  retry: { maxAttempts: 2, initialDelay: 50ms }',
      '  channels:',
      '    reports:',
      '      type: email',
      '      host: 127.0.0.1',
      `      port: ${sink.port}`,
      '      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }',
      '      from: Fleetbook <fleetbook@example.com>',
      '      to: [nobody@example.com]',
      '      on: [failed]',
      '',
    ].join('\n'),
  );
  return sink;
}

function runIdOf(outcome: JsonOutcome): string {
  const id = outcome.lines.find((line) => typeof line.runId === 'string')?.runId;
  if (typeof id !== 'string') throw new Error(`no run id in:\n${outcome.stdout}\n${outcome.stderr}`);
  return id;
}

it(
  'sends one message: recipients, subject, an HTML table, a text part, values escaped, the attachment byte for byte',
  async () => {
    const smtpSink = await smtp();
    const run = await fleetbook(['run', 'mail.yaml'], PLATFORM).done;
    expect(run.code, run.stderr).toBe(0);
    expect(smtpSink.mails).toHaveLength(1);
    const [mail] = smtpSink.mails;
    if (!mail) throw new Error('no mail');
    expect(mail.subject).toBe('Fleet report mail-report');
    const addresses = (field: typeof mail.to) =>
      (Array.isArray(field) ? field : field ? [field] : []).flatMap((entry) => entry.value.map((one) => one.address));
    expect(addresses(mail.to)).toEqual(['ops@example.com', 'lead@example.com']);
    expect(mail.from?.value[0]?.address).toBe('fleetbook@example.com');
    expect(mail.html).toContain('<strong>Systems per region</strong>');
    expect(mail.html).toMatch(/<table>[\s\S]*<th>region<\/th>[\s\S]*<td>eu-central<\/td>\s*<td>12<\/td>/);
    // The value shows as text: no script element, no bold.
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; **not bold**');
    expect(mail.text).toContain('region      systems\n----------  -------\nus-west     3\neu-central  12');
    expect(mail.attachments.map((file) => file.filename)).toEqual(['report.csv']);
    expect(mail.attachments[0]?.content.equals(readFileSync(join(dir, 'report.csv')))).toBe(true);
    const sent = run.lines.find((line) => String(line.msg).startsWith('e-mail to'));
    expect(sent?.msg).toBe(
      'e-mail to ops@example.com, Lead <lead@example.com>, audit@example.com sent through reports',
    );
    expect(mail.messageId).toBe(sent?.messageId);
  },
  PROCESSES_MS,
);

it(
  'a SIGKILL after the server took the message, before the journal recorded it: resume sends no second one and records the outcome',
  async () => {
    // The step's `request.answered` cannot be committed, and the process is killed in that window.
    const storeFile = join(dir, 'home', 'runs.sqlite');
    const locking = lockStoreOnFirstArrival(storeFile);
    const smtpSink = await smtp(locking.answer);
    const first = fleetbook(['run', 'mail.yaml'], PLATFORM);
    await smtpSink.received(1);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    locking.release();
    expect(killed.code).toBe(null);
    const runId = runIdOf(killed);

    const resumed = await fleetbook(['resume', runId], PLATFORM).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(smtpSink.arrivals).toHaveLength(1);
    const warning = resumed.lines.find((line) => line.event === 'email.outcomeUnknown');
    expect(warning).toMatchObject({ level: 40, onUnknown: 'skip', messageId: smtpSink.arrivals[0]?.messageId });
    const store = createSqliteRunStore({ file: storeFile });
    try {
      const finished = (await store.journal(runId)).filter(
        (entry) => entry.event.type === 'step.finished' && entry.event.path === 'mail',
      );
      expect(finished.map((entry) => entry.event)).toMatchObject([
        { status: 'succeeded', outputs: { outcome: 'unknown', messageId: smtpSink.arrivals[0]?.messageId } },
      ]);
    } finally {
      await store.close();
    }
  },
  PROCESSES_MS,
);

it(
  'a rehearsal (--target simulator) puts the message in the simulator outbox and mails no one',
  async () => {
    const smtpSink = await smtp();
    const run = await fleetbook(['run', 'mail.yaml', '--target', 'simulator']).done;
    expect(run.code, run.stderr).toBe(0);
    expect(smtpSink.arrivals).toEqual([]);
    expect(run.lines.find((line) => String(line.msg).startsWith('e-mail to'))).toMatchObject({
      rehearsal: "the simulator's outbox",
      msg: "e-mail to ops@example.com, Lead <lead@example.com>, audit@example.com put in the simulator's outbox, not sent",
    });
  },
  PROCESSES_MS,
);

it(
  'refuses a bad address, a missing attachment, one outside the allowed folders and an unknown channel: located, exit 2',
  async () => {
    await smtp();
    writeFileSync(
      join(dir, 'bad.yaml'),
      `name: bad-mail
steps:
  - email:
      via: report
      to: [ops@example.com, not-an-address]
      subject: s
      body: b
      attach: [missing.csv, /etc/hostname]
`,
    );
    const validate = await fleetbook(['validate', 'bad.yaml']).done;
    expect(validate.code).toBe(2);
    const problems = JSON.parse(validate.stdout) as Array<Record<string, unknown>>;
    expect(problems.map(({ code, line, column, message }) => ({ code, line, column, message }))).toEqual([
      {
        code: 'INVALID_EMAIL_ADDRESS',
        line: 5,
        column: 29,
        message: "email to: 'not-an-address' is not an e-mail address",
      },
      { code: 'INVALID_ATTACHMENT', line: 8, column: 16, message: "email attach: 'missing.csv' does not exist" },
      {
        code: 'INVALID_ATTACHMENT',
        line: 8,
        column: 29,
        message: expect.stringContaining(
          "email attach: '/etc/hostname' lies outside the run's outputs folder and the playbook's folder",
        ) as string,
      },
    ]);
    // A playbook that loads: its channel is checked (located at the step) against fleetbook.yaml, by validate and before a run.
    writeFileSync(join(dir, 'channel.yaml'), playbook.replace('    email:\n', '    email:\n      via: report\n'));
    const channel = await fleetbook(['validate', 'channel.yaml']).done;
    expect(channel.code).toBe(2);
    expect(
      (JSON.parse(channel.stdout) as Array<Record<string, unknown>>).map(({ code, line, column, message }) => ({
        code,
        line,
        column,
        message,
      })),
    ).toEqual([
      {
        code: 'EMAIL_CHANNEL',
        line: 11,
        column: 5,
        message: `email via: 'report' is not an e-mail channel of ${join(dir, 'fleetbook.yaml')} (e-mail channels: reports). Did you mean 'reports'?`,
      },
    ]);
    const run = await fleetbook(['run', 'channel.yaml'], PLATFORM).done;
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("channel.yaml:11:5: email via: 'report' is not an e-mail channel");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  },
  PROCESSES_MS,
);
