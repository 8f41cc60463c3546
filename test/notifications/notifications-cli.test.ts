/**
 * Notifications end to end: `fleetbook run` (a process of its own, against the embedded
 * simulator) with channels configured in fleetbook.yaml, delivering to a local SMTP sink and
 * local HTTP receivers; retries and failures that leave the run's result alone; a SIGKILL while
 * a notification is being sent, after which the next process delivers it, once.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCliJson, type JsonOutcome } from '../support/spawn-cli.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteRunStore } from '../../src/store/index.js';
import { TOKEN_PATTERN } from '../support/leak-scan.js';
import {
  lockStoreOnFirstArrival,
  startHttpReceiver,
  startSmtpSink,
  type HttpReceiver,
  type SmtpAnswer,
  type SmtpSink,
} from './receivers.js';

const SECRET_INPUT = 'tok-5ecret-value-981';
const SMTP_PASSWORD = 'smtp-Pa55word-2207';
/** Tests that start three CLI processes: each costs seconds of start-up on a busy machine. */
const THREE_PROCESSES_MS = 150_000;

/** A rolling update in miniature: bravo fails, so charlie and delta never start; the table is in the outputs. */
const failingPlaybook = `
name: notify-fleet
inputs:
  systems: { type: array, default: [alpha, bravo, charlie, delta] }
  token: { type: string, secret: true }
notify:
  - on: [failed]
    channels: [audit]
steps:
  - id: catalogs
    call: privateCloud.listSoftwareCatalogs
  - id: systems
    forEach: \${{ inputs.systems }}
    as: system
    steps:
      - if: \${{ system = 'bravo' }}
        fail: "\${{ system }} refused the update (token \${{ inputs.token }})"
      - log: "updated \${{ system }}"
outputs:
  table: '\${{ steps.systems.outputs.items.{"system": item, "status": status} }}'
`;

const succeedingPlaybook = `
name: notify-ok
notify:
  - on: [succeeded]
    channels: [audit]
steps:
  - log: all good
`;

let dir: string;
const closers: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-notify-'));
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  rmSync(dir, { recursive: true, force: true });
});

/** `fleetbook <args>` in `dir` (where fleetbook.yaml is), JSON lines on standard output. */
function fleetbook(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnCliJson(args, { FLEETBOOK_HOME: join(dir, 'home'), SMTP_PASSWORD, ...env }, dir);
}

function configure(channels: string, extra = ''): void {
  writeFileSync(
    join(dir, 'fleetbook.yaml'),
    `${extra}notifications:\n  retry: { maxAttempts: 3, initialDelay: 50ms }\n  channels:\n${channels}`,
  );
}

async function receiver(answer: (arrival: number) => number | 'hold'): Promise<HttpReceiver> {
  const started = await startHttpReceiver(answer);
  closers.push(() => started.close());
  return started;
}

async function smtpSink(answer?: (arrival: number) => SmtpAnswer): Promise<SmtpSink> {
  const sink = await startSmtpSink('mailer', SMTP_PASSWORD, answer);
  closers.push(() => sink.close());
  return sink;
}

function runIdOf(outcome: JsonOutcome): string {
  const id = outcome.lines.find((line) => typeof line.runId === 'string')?.runId;
  if (typeof id !== 'string') throw new Error(`no run id in:\n${outcome.stdout}\n${outcome.stderr}`);
  return id;
}

/** What the store's outbox holds, read as another process would. */
async function outbox() {
  const store = createSqliteRunStore({ file: join(dir, 'home', 'runs.sqlite') });
  try {
    return await store.listNotifications();
  } finally {
    await store.close();
  }
}

describe('notifications of a run', () => {
  it('e-mails, posts to a Slack-style and a JSON receiver: playbook, run, status, duration, failed items, no secrets', async () => {
    const sink = await smtpSink();
    const slack = await receiver(() => 200);
    const audit = await receiver(() => 200);
    const teams = await receiver(() => 200);
    configure(
      [
        '    ops-mail:',
        '      type: email',
        `      host: 127.0.0.1`,
        `      port: ${sink.port}`,
        '      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }',
        '      from: Fleetbook <fleetbook@example.com>',
        '      to: [ops@example.com]',
        '    chat:',
        '      type: slack',
        '      urlEnv: CHAT_URL',
        '    audit:',
        '      type: webhook',
        `      url: ${audit.url}`,
        '      on: [succeeded]',
        '    teams:',
        '      type: teams',
        `      url: ${teams.url}`,
        '',
      ].join('\n'),
      'server:\n  url: https://fleetbook.example.com\n',
    );
    writeFileSync(join(dir, 'fleet.yaml'), failingPlaybook);
    const outcome = await fleetbook(['run', 'fleet.yaml', '--target', 'simulator', '-i', `token=${SECRET_INPUT}`], {
      SMTP_USER: 'mailer',
      CHAT_URL: slack.url,
    }).done;
    // The run's own result: failed, exit 1, whatever the notifications did.
    expect(outcome.code).toBe(1);
    const runId = runIdOf(outcome);

    expect(sink.mails).toHaveLength(1);
    const mail = sink.mails[0];
    expect(mail?.subject).toBe(`[fleetbook] notify-fleet failed (run ${runId.slice(0, 8)})`);
    expect(mail?.to).toMatchObject({ text: 'ops@example.com' });
    expect(mail?.messageId).toMatch(/\.fleetbook@example\.com>?$/);
    expect(mail?.text).toContain(`Run: ${runId}`);
    expect(mail?.text).toContain('Status: failed');
    expect(mail?.text).toMatch(/Duration: \d/);
    expect(mail?.text).toContain('Trigger: manual');
    expect(mail?.text).toContain('Failed items: bravo');
    expect(mail?.text).toContain('Never started: charlie, delta');
    expect(mail?.text).toContain(`Run page: https://fleetbook.example.com/runs/${runId}`);
    expect(mail?.html).toContain('<td>bravo</td>');

    expect(slack.arrivals).toHaveLength(1);
    expect(slack.arrivals[0]?.key).toBe(`${runId}/failed/r0/chat`);
    expect(slack.arrivals[0]?.body).toMatchObject({
      text: expect.stringContaining('*Failed items:* bravo'),
      blocks: expect.any(Array),
    });
    expect(teams.arrivals).toHaveLength(1);
    expect(teams.arrivals[0]?.body).toMatchObject({
      '@type': 'MessageCard',
      title: `notify-fleet failed (run ${runId.slice(0, 8)})`,
      sections: [{ facts: expect.arrayContaining([{ name: 'Failed items', value: 'bravo' }]) }],
      potentialAction: [{ '@type': 'OpenUri', targets: [{ uri: `https://fleetbook.example.com/runs/${runId}` }] }],
    });
    // The audit channel's own rule is [succeeded]; the playbook's notify rule adds failed.
    expect(audit.arrivals).toHaveLength(1);
    expect(audit.arrivals[0]?.body).toMatchObject({
      version: 1,
      idempotencyKey: `${runId}/failed/r0/audit`,
      event: 'failed',
      playbook: 'notify-fleet',
      runId,
      status: 'failed',
      durationMs: expect.any(Number),
      failedItems: ['bravo'],
      notStartedItems: ['charlie', 'delta'],
    });

    // Secrets appear nowhere: not the secret input, the simulator client's secret, a bearer
    // token, the SMTP password or the chat URL's token (in what was sent, the log and the outbox).
    const everything = [
      JSON.stringify(sink.mails.map((m) => [m.subject, m.text, m.html])),
      JSON.stringify(slack.arrivals),
      JSON.stringify(audit.arrivals),
      JSON.stringify(teams.arrivals),
      outcome.stdout,
      outcome.stderr,
      JSON.stringify(await outbox()),
    ].join('\n');
    expect(everything).toContain('refused the update (token [REDACTED])');
    for (const secret of [SECRET_INPUT, 'sim-admin-secret', SMTP_PASSWORD, 'path-T0KEN-7731'])
      expect(everything.includes(secret), secret).toBe(false);
    expect(everything).not.toMatch(TOKEN_PATTERN);
    expect(outcome.lines.filter((line) => line.event === 'notification.sent').map((line) => line.channel)).toEqual(
      expect.arrayContaining(['ops-mail', 'chat', 'audit']),
    );
  });

  it('retries a receiver that answers 500 twice, delivers once, logs each retry, and keeps the run result', async () => {
    const flaky = await receiver((arrival) => (arrival <= 2 ? 500 : 200));
    configure(`    audit:\n      type: webhook\n      url: ${flaky.url}\n`);
    writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook);
    const outcome = await fleetbook(['run', 'ok.yaml', '--target', 'simulator']).done;
    expect(outcome.code).toBe(0);
    expect(flaky.arrivals.map((arrival) => arrival.answered)).toEqual([500, 500, 200]);
    expect(new Set(flaky.arrivals.map((arrival) => arrival.key)).size).toBe(1);
    expect(flaky.deliveredKeys()).toHaveLength(1);
    const retries = outcome.lines.filter((line) => line.event === 'notification.retry');
    expect(retries.map((line) => [line.attempt, line.error])).toEqual([
      [1, 'the webhook webhook answered HTTP 500'],
      [2, 'the webhook webhook answered HTTP 500'],
    ]);
    expect(outcome.lines.find((line) => line.event === 'notification.sent')).toMatchObject({ attempt: 3 });
    expect(await outbox()).toMatchObject([{ state: 'sent', attempts: 3 }]);
  });

  it('gives up on a receiver that always fails, logs it, and keeps the run result', async () => {
    const down = await receiver(() => 503);
    configure(`    audit:\n      type: webhook\n      url: ${down.url}\n`);
    writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook);
    const outcome = await fleetbook(['run', 'ok.yaml', '--target', 'simulator']).done;
    expect(outcome.code).toBe(0);
    expect(outcome.lines.find((line) => line.event === 'run.finished' || line.status === 'succeeded')).toBeDefined();
    expect(down.arrivals).toHaveLength(3);
    expect(outcome.lines.find((line) => line.event === 'notification.failed')).toMatchObject({
      gaveUp: true,
      attempt: 3,
      error: 'the webhook webhook answered HTTP 503',
    });
    expect(await outbox()).toMatchObject([{ state: 'failed', attempts: 3 }]);
  });

  it('refuses a notify rule naming an unconfigured channel before the run (exit 2)', async () => {
    configure('    audti:\n      type: webhook\n      url: http://127.0.0.1:9/\n');
    writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook);
    const unknown = await fleetbook(['run', 'ok.yaml', '--target', 'simulator']).done;
    expect(unknown.code).toBe(2);
    expect(unknown.stderr + unknown.stdout).toMatch(
      /ok\.yaml:4:5: notify channels\[0\] 'audit' is not a channel .*Did you mean 'audti'\?/,
    );
  });

  it("fleetbook validate lists it too, located, without needing the channels' credentials set", async () => {
    configure('    audti:\n      type: slack\n      urlEnv: NOT_SET_HERE\n');
    writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook);
    const validated = await fleetbook(['validate', 'ok.yaml']).done;
    expect(validated.code).toBe(2);
    expect(validated.stdout).toContain('UNKNOWN_CHANNEL');
    expect(validated.stdout).toContain("'audit' is not a channel");
  });

  it('refuses a bad channel in fleetbook.yaml before the run, located (exit 2)', async () => {
    configure('    audit:\n      type: webhok\n      url: http://127.0.0.1:9/\n');
    writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook);
    const bad = await fleetbook(['run', 'ok.yaml', '--target', 'simulator']).done;
    expect(bad.code).toBe(2);
    expect(bad.stderr + bad.stdout).toMatch(
      /fleetbook\.yaml:5:13: notifications\.channels\.audit\.type 'webhok' is not a channel type/,
    );
  });
});

describe('a run that used its tolerance', () => {
  it('is told as toleranceUsed, naming the item that failed', async () => {
    const chat = await receiver(() => 200);
    configure(`    chat:\n      type: slack\n      url: ${chat.url}\n      on: [failed, toleranceUsed]\n`);
    writeFileSync(
      join(dir, 'tolerant.yaml'),
      failingPlaybook
        .replace('name: notify-fleet', 'name: notify-tolerant')
        .replace('channels: [audit]', 'channels: [chat]')
        .replace('    as: system\n', '    as: system\n    tolerate: { failures: 1 }\n'),
    );
    const outcome = await fleetbook(['run', 'tolerant.yaml', '--target', 'simulator', '-i', `token=${SECRET_INPUT}`])
      .done;
    expect(outcome.code).toBe(0);
    const runId = runIdOf(outcome);
    expect(chat.arrivals.map((arrival) => arrival.key)).toEqual([`${runId}/toleranceUsed/r0/chat`]);
    expect(chat.arrivals[0]?.body).toMatchObject({
      text: expect.stringContaining('notify-tolerant succeeded with failed items (within its tolerance)'),
    });
    expect(String(chat.arrivals[0]?.body.text)).toContain('*Failed items:* bravo');
  });
});

describe('a run waiting at an approval gate', () => {
  it(
    'tells who must decide, and its end after the approval is a new event',
    async () => {
      const audit = await receiver(() => 200);
      configure(`    audit:\n      type: webhook\n      url: ${audit.url}\n      on: [waiting, succeeded]\n`);
      writeFileSync(
        join(dir, 'gate.yaml'),
        'name: canary-gate\nsteps:\n  - id: canary\n    log: canary updated\n  - id: gate\n    approval:\n      message: Look at the canary, then approve the rest\n  - log: fleet updated\n',
      );
      const waiting = await fleetbook(['run', 'gate.yaml', '--target', 'simulator']).done;
      expect(waiting.code).toBe(75);
      const runId = runIdOf(waiting);
      expect(audit.arrivals).toHaveLength(1);
      expect(audit.arrivals[0]?.key).toBe(`${runId}/waiting/gate@r0/audit`);
      expect(audit.arrivals[0]?.body).toMatchObject({
        event: 'waiting',
        status: 'waiting',
        waiting: { step: 'gate', message: 'Look at the canary, then approve the rest' },
      });

      const approved = await fleetbook(['approve', runId, '--comment', 'canary looks fine', '--target', 'simulator'])
        .done;
      expect(approved.code).toBe(0);
      expect(audit.arrivals.map((arrival) => arrival.key)).toEqual([
        `${runId}/waiting/gate@r0/audit`,
        `${runId}/succeeded/r1/audit`,
      ]);
    },
    THREE_PROCESSES_MS,
  );
});

describe('a SIGKILL while a notification is being sent', () => {
  it(
    'the next process (resume) delivers it once; no process sends it twice',
    async () => {
      // The first arrival is held unanswered (the sender is killed meanwhile); later ones are answered.
      const audit = await receiver((arrival) => (arrival === 1 ? 'hold' : 200));
      configure(`    audit:\n      type: webhook\n      url: ${audit.url}\n`);
      writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook);
      const first = fleetbook(['run', 'ok.yaml', '--target', 'simulator']);
      await audit.arrived(1);
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.code).toBe(null);
      const runId = runIdOf(killed);
      // The run's end was recorded with its notification, which was claimed and is not sent.
      expect(await outbox()).toMatchObject([{ key: `${runId}/succeeded/r0/audit`, state: 'pending', attempts: 1 }]);

      // The next process that opens the store for the run sends what is pending, at once (its sender is dead).
      const resumed = await fleetbook(['resume', runId]).done;
      expect(resumed.code).toBe(0);
      expect(audit.arrivals.map((arrival) => [arrival.key, arrival.answered])).toEqual([
        [`${runId}/succeeded/r0/audit`, undefined],
        [`${runId}/succeeded/r0/audit`, 200],
      ]);
      expect(audit.deliveredKeys()).toEqual([`${runId}/succeeded/r0/audit`]);
      expect(await outbox()).toMatchObject([{ state: 'sent', attempts: 2 }]);

      // And never again: another process opening the store for the run sends nothing.
      expect((await fleetbook(['resume', runId]).done).code).toBe(0);
      expect(audit.arrivals).toHaveLength(2);
    },
    THREE_PROCESSES_MS,
  );
});

describe('a SIGKILL after the SMTP server took the message, before the row was marked sent', () => {
  it(
    'the next process sends it again with the same Message-ID and key (a mail system can drop it), and no process sends it a third time',
    async () => {
      // The sender's "sent" cannot be recorded, and it is killed in exactly that window.
      const storeFile = join(dir, 'home', 'runs.sqlite');
      const locking = lockStoreOnFirstArrival(storeFile);
      const sink = await smtpSink(locking.answer);
      configure(
        [
          '    ops-mail:',
          '      type: email',
          '      host: 127.0.0.1',
          `      port: ${sink.port}`,
          '      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }',
          '      from: Fleetbook <fleetbook@example.com>',
          '      to: [ops@example.com]',
          '      on: [succeeded]',
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'ok.yaml'), succeedingPlaybook.replace(/notify:[\s\S]*?steps:/, 'steps:'));
      const env = { SMTP_USER: 'mailer' };
      const first = fleetbook(['run', 'ok.yaml', '--target', 'simulator'], env);
      await sink.received(1);
      first.child.kill('SIGKILL');
      const killed = await first.done;
      locking.release();
      expect(killed.code).toBe(null);
      const runId = runIdOf(killed);
      const key = `${runId}/succeeded/r0/ops-mail`;
      expect(killed.lines.some((line) => line.event === 'notification.sent')).toBe(false);
      expect(await outbox()).toMatchObject([{ key, state: 'pending', attempts: 1 }]);

      // The next process for the run sends it again at once (its sender is dead): same key, same Message-ID.
      const resumed = await fleetbook(['resume', runId], env).done;
      expect(resumed.code).toBe(0);
      expect(resumed.lines.find((line) => line.event === 'notification.sent')).toMatchObject({ key, attempt: 2 });
      expect(sink.arrivals.map((arrival) => [arrival.key, arrival.answered])).toEqual([
        [key, 'accept'],
        [key, 'accept'],
      ]);
      expect(sink.arrivals[1]?.messageId).toBe(sink.arrivals[0]?.messageId);
      expect(sink.mails.map((mail) => mail.subject)).toEqual([
        `[fleetbook] notify-ok succeeded (run ${runId.slice(0, 8)})`,
        `[fleetbook] notify-ok succeeded (run ${runId.slice(0, 8)})`,
      ]);
      expect(await outbox()).toMatchObject([{ key, state: 'sent', attempts: 2 }]);

      // Recorded sent: another process for the run sends nothing.
      expect((await fleetbook(['resume', runId], env).done).code).toBe(0);
      expect(sink.takenPerKey()).toEqual({ [key]: 2 });
    },
    THREE_PROCESSES_MS,
  );
});

describe('a SIGKILL while a failed run notification is being sent', () => {
  it(
    'the daemon that opens the store next delivers it once, and a later one sends nothing',
    async () => {
      const audit = await receiver((arrival) => (arrival === 1 ? 'hold' : 200));
      configure(`    audit:\n      type: webhook\n      url: ${audit.url}\n`);
      mkdirSync(join(dir, 'playbooks'));
      writeFileSync(join(dir, 'playbooks', 'fleet.yaml'), failingPlaybook);
      const first = fleetbook(['run', 'playbooks/fleet.yaml', '--target', 'simulator', '-i', `token=${SECRET_INPUT}`]);
      await audit.arrived(1);
      first.child.kill('SIGKILL');
      const runId = runIdOf(await first.done);
      const key = `${runId}/failed/r0/audit`;
      expect(await outbox()).toMatchObject([{ key, state: 'pending' }]);

      const daemon = fleetbook(['daemon', '--playbooks', 'playbooks', '--target', 'simulator']);
      await audit.arrived(2);
      daemon.child.kill('SIGTERM');
      const stopped = await daemon.done;
      expect(stopped.code).toBe(0);
      expect(stopped.lines.find((line) => line.event === 'notification.sent')).toMatchObject({ key, attempt: 2 });
      expect(audit.arrivals.map((arrival) => [arrival.key, arrival.answered])).toEqual([
        [key, undefined],
        [key, 200],
      ]);
      expect(audit.arrivals[1]?.body).toMatchObject({ failedItems: ['bravo'], notStartedItems: ['charlie', 'delta'] });
      expect(await outbox()).toMatchObject([{ key, state: 'sent' }]);

      // Another daemon opening the store sweeps the outbox and finds nothing to send.
      const again = fleetbook(['daemon', '--playbooks', 'playbooks', '--target', 'simulator', '--log-level', 'debug']);
      const swept = await waitForLine(again, 'notification.swept');
      again.child.kill('SIGKILL');
      await again.done;
      expect(swept).toMatchObject({ sent: 0, failed: 0, retrying: 0 });
      expect(audit.arrivals).toHaveLength(2);
    },
    THREE_PROCESSES_MS,
  );
});

/** Resolves with the first JSON line the process prints with `event`. */
function waitForLine(process: ReturnType<typeof fleetbook>, event: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      // Whole lines only: a chunk may end inside one.
      const line = seen
        .split('\n')
        .slice(0, -1)
        .find((text) => text.includes(`"event":"${event}"`));
      if (!line) return;
      process.child.stdout.off('data', onData);
      resolve(JSON.parse(line) as Record<string, unknown>);
    };
    process.child.stdout.on('data', onData);
    void process.done.then(() => reject(new Error(`exited before logging ${event}:\n${seen}`)));
  });
}
