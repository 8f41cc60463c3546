// `npm start` is `node bin/fleetbook.js demo` after a build when dist/ is older than its sources
// (scripts/build-if-stale.js, tested in build-if-stale.test.ts): one test runs `npm start` itself, the others the built command as a child process (`npm test` builds
// before the tests), once readable and once as JSON lines.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const BIN = resolve(import.meta.dirname, '../../bin/fleetbook.js');
const directories: string[] = [];
// The default output folder of `npm start`, which the test's `--output-dir` must leave as it was.
const defaultFolderExisted = existsSync(resolve(import.meta.dirname, '../../fleetbook-demo'));
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const ROOT = resolve(import.meta.dirname, '../..');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  dir: string;
}

async function demo(...args: string[]): Promise<Outcome> {
  return spawnDemo(process.execPath, (dir) => [BIN, 'demo', '--output-dir', dir, ...args]);
}

/** The demo with FLEETBOOK_PROGRESS=live: its live view, as a terminal shows it. */
async function demoLive(): Promise<Outcome> {
  return spawnDemo(process.execPath, (dir) => [BIN, 'demo', '--output-dir', dir], undefined, {
    ...process.env,
    FLEETBOOK_PROGRESS: 'live',
  });
}

/** Runs `command` with the arguments `args(dir)` gives for a fresh output folder; its exit code and outputs. */
async function spawnDemo(
  command: string,
  args: (dir: string) => string[],
  cwd?: string,
  env?: NodeJS.ProcessEnv,
): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-demo-'));
  directories.push(dir);
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args(dir), {
      cwd: cwd ?? dir,
      timeout: 120_000,
      ...(env ? { env } : {}),
    });
    return { code: 0, stdout, stderr, dir };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', dir };
  }
}

// Not concurrent: a stale dist/ is rebuilt, and the other tests run it.
it('`npm start -- --output-dir <dir>` tells the whole story and exits 0', { timeout: 150_000 }, async () => {
  // npm appends what follows `--` to the start script, whose last word is `demo`.
  const { code, stdout, stderr, dir } = await spawnDemo(
    process.platform === 'win32' ? 'npm.cmd' : 'npm',
    (out) => ['start', '--', '--output-dir', out],
    ROOT,
  );
  expect(code, stderr + stdout).toBe(0);
  // The systems and clusters table, the failed-once cluster shown resumed, the updated ones.
  expect(stdout).toMatch(/catalog 2\.4\.0: succeeded/);
  expect(stdout).toMatch(
    /hci-us-west-01 \(us-west\)\n\s+cluster-a\s+2\.2\.0 → 2\.4\.0\s+2 attempts, resumed after a failure/,
  );
  expect(stdout.match(/→ 2\.4\.0 +1 attempt,/g)?.length).toBeGreaterThanOrEqual(6);
  // The report's e-mail as the outbox holds it.
  expect(stdout).toMatch(
    /the outbox shows "Fleetbook demo: subscriptions" sent to ops@example\.com, finance@example\.com/,
  );
  // The CSV in the folder given after `--`, holding the rows the summary states.
  const csv = /"Monthly cost by product": (\d+) rows \(\d+ bytes\) in (\S+\.csv)/.exec(stdout);
  expect(csv).not.toBeNull();
  const [, rows, file] = csv as unknown as [string, string, string];
  expect(file.startsWith(dir)).toBe(true);
  expect(Number(rows)).toBeGreaterThan(0);
  expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(Number(rows) + 1);
  expect(stdout).toMatch(/Demo succeeded in [\d.]+ s/);
  expect(existsSync(join(ROOT, 'fleetbook-demo'))).toBe(defaultFolderExisted);
});

it.concurrent('tells the whole story and exits 0', async () => {
  const { code, stdout, stderr, dir } = await demo();
  expect(code, stderr + stdout).toBe(0);
  // The rolling update: the pinned failure resumed, the offline system skipped, the rest updated.
  expect(stdout).toMatch(/catalog 2\.4\.0: succeeded/);
  expect(stdout).toMatch(
    /hci-us-west-01 \(us-west\)\n\s+cluster-a\s+2\.2\.0 → 2\.4\.0\s+2 attempts, resumed after a failure/,
  );
  expect(stdout).toMatch(/hci-eu-west-02 \(eu-west\)\n\s+cluster-a\s+2\.3\.1 → 2\.3\.1\s+skipped \(system OFFLINE\)/);
  expect(stdout.match(/→ 2\.4\.0 +1 attempt,/g)?.length).toBeGreaterThanOrEqual(6);
  // The report and who got it, from the outbox.
  expect(stdout).toMatch(
    /ready: http:\/\/127\.0\.0\.1:\d+\/_sim\/downloads\/\S+\n {3}\(served by the demo's own simulator: the link stops working when the demo ends\)\n/,
  );
  expect(stdout).toMatch(/sent to ops@example\.com, finance@example\.com/);
  // The CSV on disk with the rows the summary states.
  const csv = /"Monthly cost by product": (\d+) rows \(\d+ bytes\) in (\S+\.csv)/.exec(stdout);
  expect(csv).not.toBeNull();
  const [, rows, file] = csv as unknown as [string, string, string];
  expect(file.startsWith(dir)).toBe(true);
  expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(Number(rows) + 1);
  // The outbox: the platform's mail of the export (its link), and the CSV's `email` step, rehearsed, with its attachment.
  const outbox = stdout.slice(stdout.indexOf("4. The simulator's outbox"));
  expect(outbox).toMatch(
    /\n {3}to ops@example\.com, finance@example\.com: "Fleetbook demo: subscriptions"\n {5}link: http:\/\/127\.0\.0\.1:\d+\/_sim\/downloads\/\S+\n/,
  );
  const attached = new RegExp(
    `\\n {3}to finops@example\\.com: "Consumption Monthly cost by product \\d{4}-\\d\\d-\\d\\d: [\\d.]+"\\n {5}attached: (\\S+\\.csv) \\((\\d+) bytes\\)\\n`,
  ).exec(outbox);
  expect(attached?.[1]).toBe(basename(file));
  expect(Number(attached?.[2])).toBe(statSync(file).size);
  expect(stdout).toMatch(/Demo succeeded in [\d.]+ s/);
  expect(existsSync(join(dir, 'demo.log'))).toBe(true);
});

it.concurrent(
  'shows the rolling update as it goes: its loops and operations in a live view, cleared before the end',
  async () => {
    const { code, stdout, stderr } = await demoLive();
    expect(code, stderr + stdout).toBe(0);
    // Each frame follows a log line or the clearing of the frame before.
    expect(stdout).toMatch(/(\n|\u001b\[J) {2}systems {2}\d+\/\d+ items: \d+ done, \d+ failed, \d+ running\n/);
    expect(stdout).toMatch(/\n {2}systems\[\d+\]\.work\.groups\[\d+\]\.(precheck|update) {2}operation \d+%\n/);
    const end = stdout.indexOf('\nDemo succeeded');
    expect(end).toBeGreaterThan(0);
    expect(stdout.slice(end)).not.toContain('\u001b[');
  },
);

it.concurrent('--json prints the same story as JSON lines', async () => {
  const { code, stdout, stderr } = await demo('--json');
  expect(code, stderr + stdout).toBe(0);
  const events = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(events.map((event) => event.event)).toEqual([
    'started',
    'rollingUpdate',
    'reportExport',
    'consumptionCsv',
    'outbox',
    'finished',
  ]);
  const update = events[1] as {
    status: string;
    clusters: Array<{ system: string; cluster: string; resumed: boolean; after: string }>;
  };
  expect(update.status).toBe('succeeded');
  expect(update.clusters.filter((row) => row.resumed)).toMatchObject([
    { system: 'hci-us-west-01', cluster: 'cluster-a', after: '2.4.0' },
  ]);
  expect(events[2]).toMatchObject({ status: 'succeeded', recipients: ['ops@example.com', 'finance@example.com'] });
  expect(events[3]).toMatchObject({ status: 'succeeded', rows: expect.any(Number) as number });
  const csv = events[3] as { file: string; bytes: number };
  expect(events[4]).toMatchObject({
    messages: [
      { to: ['ops@example.com', 'finance@example.com'], subject: 'Fleetbook demo: subscriptions', attachments: [] },
      {
        to: ['finops@example.com'],
        subject: expect.stringMatching(/^Consumption Monthly cost by product /) as string,
        attachments: [{ filename: basename(csv.file), bytes: csv.bytes }],
        links: [],
      },
    ],
  });
  expect(events[5]).toMatchObject({ status: 'succeeded' });
});
