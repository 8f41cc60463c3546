import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { readScheduleState } from '../../src/scheduler/index.js';
import { openRunStore } from '../../src/store/index.js';

let dir: string;
const children: ChildProcessWithoutNullStreams[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetbook-daemon-cli-'));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const everySecond =
  'name: every-second\nschedules:\n  - id: every-second\n    cron: "* * * * * *"\nsteps:\n  - log: tick\n';

/** `fleetbook daemon` in a process of its own, its JSON lines parsed as they come. */
function startDaemonProcess(playbooks: string) {
  const child = spawn(
    process.execPath,
    [
      // The built command (npm test builds dist/ first): tsx would compile the sources again per child.
      join(import.meta.dirname, '..', '..', 'bin', 'fleetbook.js'),
      'daemon',
      '--playbooks',
      playbooks,
      '--target',
      'simulator',
      '--lease-ttl',
      '3s',
    ],
    {
      env: { ...process.env, FLEETBOOK_HOME: join(dir, 'home') },
    },
  );
  children.push(child);
  let buffered = '';
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop() ?? '';
    for (const line of complete.filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  /** Resolves with the first line matching `event` (and `where`) once it has been written. */
  const waitFor = async (
    event: string,
    where: (line: Record<string, unknown>) => boolean = () => true,
  ): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = lines.find((line) => line.event === event && where(line));
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`the daemon exited (${child.exitCode}) before '${event}'`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, lines, exited, waitFor };
}

describe('fleetbook daemon', () => {
  it('refuses to start with the located errors of an invalid playbook, exit 2', async () => {
    const playbooks = join(dir, 'playbooks');
    mkdirSync(playbooks);
    writeFileSync(join(playbooks, 'bad.yaml'), 'name: bad\nschedules:\n  - cron: "every night"\nsteps:\n  - log: hi\n');
    const chunks = { out: [] as string[], err: [] as string[] };
    const sink = (into: string[]) =>
      new Writable({ write: (chunk, _encoding, done) => (into.push(String(chunk)), done()) });
    const io: CliIo = {
      stdout: sink(chunks.out),
      stderr: sink(chunks.err),
      env: { FLEETBOOK_HOME: join(dir, 'home') },
      version: '0.0.0-test',
    };
    expect(await main(['daemon', '--playbooks', playbooks, '--target', 'simulator'], io)).toBe(2);
    expect(chunks.err.join('')).toMatch(/bad\.yaml:3:\d+ {2}error .*'every night' is not a cron expression/);
    expect(chunks.err.join('')).toContain('fleetbook daemon: not started');
  });

  it('fires, keeps a second daemon on standby, reloads on SIGHUP, and on SIGTERM stops, releases the lease (the standby takes over) and exits 0', async () => {
    const playbooks = join(dir, 'playbooks');
    mkdirSync(playbooks);
    writeFileSync(join(playbooks, 'every-second.yaml'), everySecond);
    const first = startDaemonProcess(playbooks);
    await first.waitFor('lease.acquired');
    const fired = await first.waitFor('schedule.fired');
    expect(fired).toMatchObject({ scheduleKey: 'every-second', playbook: 'every-second' });
    await first.waitFor('schedule.runEnded', (line) => line.status === 'succeeded');

    const second = startDaemonProcess(playbooks);
    await second.waitFor('lease.standby');

    writeFileSync(join(playbooks, 'second.yaml'), everySecond.replaceAll('every-second', 'also-every-second'));
    first.child.kill('SIGHUP');
    await first.waitFor('daemon.reloaded', (line) => line.playbooks === 2);
    await first.waitFor('schedule.fired', (line) => line.scheduleKey === 'also-every-second');

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.lines.at(-1)).toMatchObject({ event: 'daemon.stopped' });
    const lastOfFirst = first.lines
      .filter((line) => line.event === 'schedule.fired' && line.scheduleKey === 'every-second')
      .at(-1)?.scheduledAt as string;

    await second.waitFor('lease.acquired', (line) => line.takeover === true);
    const firstOfSecond = await second.waitFor('schedule.fired', (line) => line.scheduleKey === 'every-second');
    // The takeover continues after the last fire of the first daemon: nothing fired twice.
    expect(Date.parse(firstOfSecond.scheduledAt as string)).toBeGreaterThan(Date.parse(lastOfFirst));
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    const store = await openRunStore({ env: { FLEETBOOK_HOME: join(dir, 'home') } });
    const runs = await store.listRuns({ playbook: 'every-second', limit: 1000 });
    const state = await readScheduleState(store, 'every-second');
    await store.close();
    const firedTimes = [...first.lines, ...second.lines]
      .filter((line) => line.event === 'schedule.fired' && line.scheduleKey === 'every-second')
      .map((line) => line.scheduledAt);
    expect(new Set(firedTimes).size).toBe(firedTimes.length);
    expect(runs.length).toBe(firedTimes.length);
    expect(runs.every((run) => run.trigger.kind === 'schedule')).toBe(true);
    expect(state?.lastFireAt).toBe(firedTimes.at(-1));
  });
});
