import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import type { NotifyRule } from '../playbook/index.js';
import { createMemoryRunStore, type NewNotification } from '../store/index.js';
import { noNotifications, parseNotificationConfig, type NotificationConfig } from './config.js';
import { createNotifier, retryDelayMs } from './deliver.js';
import { createNotifications } from './index.js';
import { composeMessage, renderHtml, renderMarkdown, renderText, type RunEnding } from './message.js';
import { checkNotifyRules, endingEvents, notificationsFor } from './rules.js';
import { slackPayload, teamsPayload, webhookPayload } from './channels.js';

const rollingTable = [
  { system: 'sys-a', cluster: 'c1', before: '2.3.0', after: '2.4.0', status: 'succeeded' },
  { system: 'sys-b', cluster: 'c1', before: '2.3.0', after: '2.3.0', status: 'failed' },
  { system: 'sys-c', cluster: 'c2', before: '2.3.0', after: null, status: 'notStarted' },
];

function ending(overrides: Partial<RunEnding> = {}): RunEnding {
  return {
    runId: '1f2e3d4c-0000-4000-8000-000000000001',
    playbook: 'rolling-cluster-update',
    dryRun: false,
    trigger: { kind: 'schedule', scheduleId: 'weekend' },
    status: 'failed',
    startedAt: '2026-03-01T10:00:00.000Z',
    endedAt: '2026-03-01T10:02:05.000Z',
    outputs: { clusters: rollingTable, systems: { failed: 1 } },
    error: { message: '1 system(s) failed', code: 'ASSERTION_FAILED' },
    steps: [
      { path: 'systems', kind: 'forEach', status: 'failed' },
      { path: 'systems[0]', kind: 'item', status: 'succeeded' },
      { path: 'systems[1]', kind: 'item', status: 'failed' },
      { path: 'systems[2]', kind: 'item', status: 'notStarted' },
    ],
    occurrence: 'r0',
    ...overrides,
  };
}

const configText = `
server:
  url: https://fleetbook.example.com/
notifications:
  retry: { maxAttempts: 3, initialDelay: 1s, maxDelay: 3s }
  channels:
    ops-mail:
      type: email
      host: smtp.example.com
      auth: { userEnv: SMTP_USER, passwordEnv: SMTP_PASSWORD }
      from: Fleetbook <fleetbook@example.com>
      to: [ops@example.com, oncall@example.com]
    chat:
      type: slack
      urlEnv: CHAT_WEBHOOK
      on: [failed, succeeded]
    audit:
      type: webhook
      url: http://127.0.0.1:9/audit
      on: [waiting]
`;
const env = { SMTP_USER: 'mailer', SMTP_PASSWORD: 'smtp-pass-123', CHAT_WEBHOOK: 'https://chat.example/hook/T0KEN' };

describe('the notifications section of fleetbook.yaml', () => {
  it('reads channels, their default rules, the retry policy and the server URL', () => {
    const config = parseNotificationConfig(configText, 'fleetbook.yaml', env);
    expect(config.serverUrl).toBe('https://fleetbook.example.com');
    expect(config.retry).toEqual({ maxAttempts: 3, initialDelayMs: 1000, maxDelayMs: 3000 });
    expect(config.channels.get('ops-mail')).toMatchObject({
      type: 'email',
      port: 587,
      secure: false,
      on: ['failed'],
      auth: { user: 'mailer', password: 'smtp-pass-123' },
      to: ['ops@example.com', 'oncall@example.com'],
    });
    expect(config.channels.get('chat')).toMatchObject({ url: env.CHAT_WEBHOOK, on: ['failed', 'succeeded'] });
    // What came from the environment is secret: a log line must never show it.
    expect(config.secretValues).toEqual(expect.arrayContaining(['smtp-pass-123', env.CHAT_WEBHOOK]));
  });

  it.each([
    [
      'notifications:\n  channels:\n    x: { type: mail, url: http://a }\n',
      ':3:16: notifications.channels.x.type',
      "Did you mean 'email'?",
    ],
    [
      'notifications:\n  channels:\n    x: { type: slack }\n',
      ':3:8: notifications.channels.x needs one of url or urlEnv',
      '',
    ],
    [
      'notifications:\n  channels:\n    x: { type: slack, url: ftp://a }\n',
      ':3:28: notifications.channels.x.url must be an http(s) URL',
      '',
    ],
    [
      'notifications:\n  channels:\n    x: { type: slack, urlEnv: NOPE }\n',
      'urlEnv names the variable NOPE, which is not set',
      '',
    ],
    [
      'notifications:\n  channels:\n    x: { type: webhook, url: http://a, on: [faild] }\n',
      "x.on[0] 'faild' is not an event",
      "Did you mean 'failed'?",
    ],
    [
      'notifications:\n  channels:\n    x: { type: email, host: h, from: a@b, to: c@d, port: 0 }\n',
      'x.port must be a whole number from 1 to 65535',
      '',
    ],
    ['notifications:\n  channels:\n    x: { type: email, host: h, from: a@b }\n', "x needs 'to'", ''],
    ['notifications:\n  chanels: {}\n', 'notifications.chanels is not a field here', "Did you mean 'channels'?"],
  ])('refuses %j with a located message (exit 2)', (text, expected, guess) => {
    let caught: unknown;
    try {
      parseNotificationConfig(text, 'fleetbook.yaml', {});
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'INVALID_NOTIFICATIONS', exitCode: 2 });
    expect((caught as Error).message).toContain(expected);
    expect((caught as Error).message).toContain(guess);
  });
});

describe('rules', () => {
  const config = parseNotificationConfig(configText, 'fleetbook.yaml', env);
  const channelsOf = (items: NewNotification[]) => items.map((item) => `${item.channel}:${item.event}`);

  it('gives each channel the ending events its default rule or a playbook rule takes', () => {
    expect(channelsOf(notificationsFor(ending(), config))).toEqual(['ops-mail:failed', 'chat:failed']);
    expect(channelsOf(notificationsFor(ending({ status: 'succeeded', steps: [] }), config))).toEqual([
      'chat:succeeded',
    ]);
    const rules: NotifyRule[] = [
      {
        on: ['succeeded'],
        channels: ['ops-mail'],
        dryRun: false,
        location: { file: 'p.yaml', line: 3, column: 5, pointer: '/notify/0' },
      },
    ];
    expect(channelsOf(notificationsFor(ending({ status: 'succeeded', steps: [] }), config, rules))).toEqual([
      'ops-mail:succeeded',
      'chat:succeeded',
    ]);
    // An interrupted run (resumable) is no end anyone is told of.
    expect(notificationsFor(ending({ status: 'interrupted' }), config)).toEqual([]);
  });

  it('tells a channel once of a success with failed loop items, as toleranceUsed when it takes that', () => {
    const tolerated = ending({ status: 'succeeded', error: undefined });
    expect(endingEvents(tolerated)).toEqual(['toleranceUsed', 'succeeded']);
    const rules: NotifyRule[] = [
      {
        on: ['toleranceUsed'],
        channels: ['chat', 'ops-mail'],
        dryRun: false,
        location: { file: 'p', line: 1, column: 1, pointer: '' },
      },
    ];
    expect(channelsOf(notificationsFor(tolerated, config, rules))).toEqual([
      'ops-mail:toleranceUsed',
      'chat:toleranceUsed',
    ]);
  });

  it('keys a notification by run, event, end and channel', () => {
    const [first] = notificationsFor(ending(), config);
    expect(first?.key).toBe('1f2e3d4c-0000-4000-8000-000000000001/failed/r0/ops-mail');
    const [again] = notificationsFor(ending({ occurrence: 'r1' }), config);
    expect(again?.key).not.toBe(first?.key);
  });

  it('leaves dry runs alone unless a rule asks for them', () => {
    expect(notificationsFor(ending({ dryRun: true }), config)).toEqual([]);
    const rules: NotifyRule[] = [
      { on: ['failed'], channels: ['chat'], dryRun: true, location: { file: 'p', line: 1, column: 1, pointer: '' } },
    ];
    expect(channelsOf(notificationsFor(ending({ dryRun: true }), config, rules))).toEqual(['chat:failed']);
  });

  it('refuses a rule naming an unconfigured channel, with where and a did-you-mean', () => {
    const rule: NotifyRule = {
      on: ['failed'],
      channels: ['ops-mial'],
      dryRun: false,
      location: { file: 'canary.yaml', line: 7, column: 5, pointer: '/notify/0' },
    };
    expect(() => checkNotifyRules({ name: 'canary', notify: [rule] }, config)).toThrow(
      /canary\.yaml:7:5: notify channels\[0\] 'ops-mial' is not a channel of fleetbook\.yaml .*Did you mean 'ops-mail'\?/,
    );
    // No channels configured at all: the rules are inert, and said to be.
    expect(checkNotifyRules({ name: 'canary', notify: [rule] }, noNotifications)).toEqual([
      expect.stringContaining('no notification channel is configured'),
    ]);
  });
});

describe('the message', () => {
  it('names the playbook, run, end, duration, trigger and the items that failed or never started', () => {
    const message = composeMessage('failed', ending(), { serverUrl: 'https://fb.example' });
    expect(message).toMatchObject({
      playbook: 'rolling-cluster-update',
      status: 'failed',
      trigger: 'schedule weekend',
      failedItems: ['sys-b'],
      notStartedItems: ['sys-c'],
      runUrl: 'https://fb.example/runs/1f2e3d4c-0000-4000-8000-000000000001',
    });
    const text = renderText(message);
    expect(text).toContain('rolling-cluster-update failed (run 1f2e3d4c)');
    expect(text).toContain('Duration: 2 min 5 s');
    expect(text).toContain('Failed items: sys-b');
    expect(text).toContain('Never started: sys-c');
    expect(text).toContain('sys-b | c1 | 2.3.0 | 2.3.0 | failed');
    expect(renderHtml(message)).toContain('<td>sys-b</td>');
    expect(renderMarkdown(message)).toContain('*Failed items:* sys-b');
  });

  it('takes the items from the step tree when the outputs hold no table', () => {
    const message = composeMessage('failed', ending({ outputs: { count: 3 } }));
    expect(message.failedItems).toEqual(['systems[1]']);
    expect(message.notStartedItems).toEqual(['systems[2]']);
    expect(message.table).toBeUndefined();
  });

  it("names a report export's URL and recipients", () => {
    const message = composeMessage(
      'succeeded',
      ending({
        status: 'succeeded',
        outputs: { downloadUrl: 'https://reports.example/r/1.csv', recipients: ['a@example.com'] },
        steps: [],
      }),
    );
    expect(message.report).toEqual({ url: 'https://reports.example/r/1.csv', recipients: ['a@example.com'] });
    expect(renderText(message)).toContain('Report: https://reports.example/r/1.csv');
  });

  it('holds no secret keys and no bearer tokens, and escapes HTML', () => {
    const message = composeMessage(
      'failed',
      ending({
        outputs: { rows: [{ name: '<b>x</b>', token: 'tok-123', status: 'failed' }] },
        error: { message: 'sent Authorization: Bearer eyJhbGciOi.abc.def and failed' },
      }),
    );
    const all = JSON.stringify(message) + renderHtml(message) + renderText(message);
    expect(all).not.toContain('tok-123');
    expect(all).not.toContain('eyJhbGciOi');
    expect(renderHtml(message)).toContain('&lt;b&gt;x&lt;/b&gt;');
  });

  it('renders Slack, Teams and generic webhook bodies', () => {
    const notification = {
      key: 'k1',
      runId: 'r',
      event: 'failed',
      segment: 'r0',
      channel: 'c',
      message: composeMessage('failed', ending()),
    };
    const message = notification.message;
    expect(slackPayload(message)).toMatchObject({
      text: expect.stringContaining('Failed items'),
      blocks: expect.any(Array),
    });
    expect(teamsPayload(message)).toMatchObject({
      '@type': 'MessageCard',
      themeColor: 'D13438',
      sections: [{ facts: expect.any(Array) }],
    });
    expect(webhookPayload(notification)).toMatchObject({ version: 1, idempotencyKey: 'k1', failedItems: ['sys-b'] });
  });
});

describe('delivery from the outbox', () => {
  async function setup(send: (key: string) => Promise<void>) {
    const config: NotificationConfig = parseNotificationConfig(configText, 'fleetbook.yaml', env);
    let clock = Date.now();
    // The store and the notifier share one clock: a retry is due when both say so.
    const store = createMemoryRunStore({ now: () => new Date(clock) });
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
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'debug',
      destination: { write: (line: string) => lines.push(JSON.parse(line)) },
    });
    const waits: number[] = [];
    const notifier = createNotifier({
      store,
      config,
      logger,
      now: () => clock,
      wait: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
      send: async (_channel, notification) => send(notification.key),
    });
    return { store, notifier, lines, waits, config };
  }

  it('retries with exponential backoff until sent, logging each failure, and sends once', async () => {
    let calls = 0;
    const { store, notifier, lines, waits } = await setup(async () => {
      calls += 1;
      if (calls <= 2) throw new Error('HTTP 500');
    });
    await store.addNotifications([
      { key: 'r1/failed/r0/chat', runId: 'r1', event: 'failed', segment: 'r0', channel: 'chat', message: {} },
    ]);
    const report = await notifier.deliverPending({ runId: 'r1', untilSettled: true });
    expect(report).toMatchObject({ sent: 1, failed: 0, retrying: 0 });
    expect(calls).toBe(3);
    expect(waits).toEqual([1000, 2000]);
    expect(lines.filter((line) => line.event === 'notification.retry').map((line) => line.attempt)).toEqual([1, 2]);
    expect((await store.listNotifications())[0]).toMatchObject({ state: 'sent', attempts: 3 });
    // Nothing pending any more: a later sweep sends nothing.
    expect(await notifier.deliverPending()).toMatchObject({ sent: 0 });
    expect(calls).toBe(3);
  });

  it('gives up after maxAttempts, bounded, logging the failure', async () => {
    const { store, notifier, lines, waits } = await setup(async () => {
      throw new Error('connection refused');
    });
    await store.addNotifications([
      { key: 'r1/failed/r0/chat', runId: 'r1', event: 'failed', segment: 'r0', channel: 'chat', message: {} },
    ]);
    expect(await notifier.deliverPending({ untilSettled: true })).toMatchObject({ sent: 0, failed: 1 });
    expect(waits).toEqual([1000, 2000]);
    expect(lines.find((line) => line.event === 'notification.failed')).toMatchObject({ gaveUp: true, attempt: 3 });
    expect((await store.listNotifications())[0]).toMatchObject({ state: 'failed', lastError: 'connection refused' });
  });

  it('without waiting, leaves a failed send pending for the next sweep', async () => {
    let calls = 0;
    const { store, notifier } = await setup(async () => {
      calls += 1;
      if (calls === 1) throw new Error('HTTP 503');
    });
    await store.addNotifications([
      { key: 'r1/failed/r0/chat', runId: 'r1', event: 'failed', segment: 'r0', channel: 'chat', message: {} },
    ]);
    expect(await notifier.deliverPending()).toMatchObject({ sent: 0, retrying: 1 });
    expect((await store.listNotifications())[0]).toMatchObject({ state: 'pending', lastError: 'HTTP 503' });
    expect(retryDelayMs({ maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 3000 }, 4)).toBe(3000);
  });

  it('does not send what another live process has claimed, nor a channel no longer configured', async () => {
    const sent: string[] = [];
    const { store, notifier, lines } = await setup(async (key) => {
      sent.push(key);
    });
    await store.addNotifications([
      { key: 'r1/failed/r0/chat', runId: 'r1', event: 'failed', segment: 'r0', channel: 'chat', message: {} },
      { key: 'r1/failed/r0/removed', runId: 'r1', event: 'failed', segment: 'r0', channel: 'removed', message: {} },
    ]);
    // Claimed by a live owner (this very process, as another notifier would be).
    await store.claimNotification(
      'r1/failed/r0/chat',
      JSON.stringify({ id: 'x', host: 'elsewhere', pid: 1, pidSpace: 'p' }),
      60_000,
    );
    expect(await notifier.deliverPending({ untilSettled: true })).toMatchObject({ sent: 0, skipped: 1, failed: 1 });
    expect(sent).toEqual([]);
    expect(lines.find((line) => line.key === 'r1/failed/r0/removed')).toMatchObject({ event: 'notification.failed' });
  });
});

describe('the documented examples', () => {
  const doc = readFileSync(new URL('../../docs/notifications.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

  it('docs/notifications.md: the fleetbook.yaml example reads as documented', () => {
    const config = parseNotificationConfig(blocks[0] ?? '', 'fleetbook.yaml', {
      SMTP_USER: 'u',
      SMTP_PASSWORD: 'p-Example-99',
      CHAT_WEBHOOK_URL: 'https://chat.example/hook',
      TEAMS_WEBHOOK_URL: 'https://teams.example/hook',
    });
    expect([...config.channels.keys()]).toEqual(['ops-mail', 'team-chat', 'teams', 'audit']);
    expect(config.retry).toEqual({ maxAttempts: 5, initialDelayMs: 2000, maxDelayMs: 300_000 });
    expect(config.channels.get('ops-mail')).toMatchObject({ port: 587, requireTls: true, on: ['failed'] });
  });
});

describe('the notify hook of a process', () => {
  it('warns of rules naming channels this fleetbook.yaml lacks (a reloaded or queued playbook), and sends them nothing', () => {
    const config = parseNotificationConfig(configText, 'fleetbook.yaml', env);
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ destination: { write: (line: string) => lines.push(JSON.parse(line)) } });
    const hook = createNotifications(config, { store: createMemoryRunStore(), logger }).hookFor([
      {
        on: ['failed'],
        channels: ['pager'],
        dryRun: false,
        location: { file: 'p.yaml', line: 4, column: 5, pointer: '/notify/0' },
      },
    ]);
    expect(lines).toMatchObject([{ event: 'notification.unknownChannel', file: 'p.yaml', line: 4 }]);
    expect(hook(ending()).map((item) => item.channel)).toEqual(['ops-mail', 'chat']);
  });
});
