/**
 * The whole suite's secret scan (issue 8: "every log line and journal entry written during
 * the whole test suite is scanned for the test secrets and tokens: zero hits").
 *
 * `global-setup.ts` points TMPDIR of every test process at one suite folder, so every temp
 * dir a test makes (SQLite stores, `--log-file`s, saved outputs, a child CLI's FLEETBOOK_HOME)
 * lands there; `setup.ts` scans a folder under it as a test deletes it, and what is left at
 * the end is scanned by the global teardown. Log lines kept in memory are scanned when the
 * test file ends (`registerCapture`). A hit is reported as `file:line: what`.
 */
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative } from 'node:path';
import { secretSpellings } from '../../src/logging/index.js';

/** Environment variable naming the suite folder (set by the global setup, inherited by every worker and child). */
export const SUITE_DIR_ENV = 'FLEETBOOK_TEST_SUITE_DIR';

/**
 * The secrets the suite uses. Kept literal so the scan costs no simulator or client import in
 * every test file; `test/reliability/leak-scan.test.ts` checks it still holds the simulator's
 * clients' secrets and the API tests' credentials.
 */
export const SUITE_SECRETS: readonly string[] = [
  // The simulator's clients (src/simulator/simulation.ts DEFAULT_CLIENTS).
  'sim-admin-secret',
  'sim-operator-secret',
  'sim-observer-secret',
  // The API unit tests' credentials (src/api/testing.ts testCredentials).
  'very secret/value+0001@"x"',
  // Secret inputs of the tests' playbooks.
  'tok-Reliab1lity-5ecret-4417',
  'hook-Reliab1lity-5ecret-9083',
  'tok-5ecret-value-981',
  'hook-token-3f9a1c77',
  'tok-5ecret-door-7731',
];

/**
 * The simulator's bearer tokens. Every simulator of the suite (in a worker or in a child
 * process) issues this format, so the scan covers every token issued without asking each one.
 */
export const TOKEN_PATTERN = /sim_[0-9a-f]{48}/;

export interface Leak {
  /** `file:line`, or `<label>:line` for text kept in memory. */
  where: string;
  /** The secret found (its first characters only, so the report is no leak of its own), or `a bearer token`. */
  what: string;
}

const hidden = (secret: string): string => `${secret.slice(0, 4)}…`;

/** Every spelling of every secret, as bytes, with what to call it in a report. */
function needles(secrets: readonly string[]): Array<{ bytes: Buffer; what: string }> {
  return secrets.flatMap((secret) =>
    secretSpellings(secret).map((spelling) => ({ bytes: Buffer.from(spelling), what: `secret ${hidden(secret)}` })),
  );
}

const lineAt = (buffer: Buffer, offset: number, before: number): number => {
  let line = before + 1;
  for (let index = buffer.indexOf(10); index !== -1 && index < offset; index = buffer.indexOf(10, index + 1)) line += 1;
  return line;
};

/** Leaks in `buffer` (text or bytes: SQLite pages hold their rows' text as written). `linesBefore`: lines of the file before it. */
function scanBuffer(buffer: Buffer, where: string, secrets: readonly string[], linesBefore = 0): Leak[] {
  const leaks: Leak[] = [];
  for (const { bytes, what } of needles(secrets)) {
    const offset = buffer.indexOf(bytes);
    if (offset !== -1) leaks.push({ where: `${where}:${lineAt(buffer, offset, linesBefore)}`, what });
  }
  const token = TOKEN_PATTERN.exec(buffer.toString('latin1'));
  if (token)
    leaks.push({ where: `${where}:${lineAt(buffer, token.index, linesBefore)}`, what: 'a bearer token (sim_…)' });
  return leaks;
}

export function scanText(text: string, where: string, secrets: readonly string[] = SUITE_SECRETS): Leak[] {
  return scanBuffer(Buffer.from(text), where, secrets);
}

const CHUNK_BYTES = 4 * 1024 * 1024;

/** Leaks in one file, read in chunks that overlap by the longest needle (a large saved download costs no more memory than a chunk). */
export function scanFile(file: string, secrets: readonly string[] = SUITE_SECRETS, label = file): Leak[] {
  const overlap = Math.max(48 + 4, ...needles(secrets).map((needle) => needle.bytes.length));
  const descriptor = openSync(file, 'r');
  try {
    const leaks: Leak[] = [];
    const seen = new Set<string>();
    const buffer = Buffer.alloc(CHUNK_BYTES + overlap);
    let carried = 0;
    let linesBefore = 0;
    for (;;) {
      const read = readSync(descriptor, buffer, carried, CHUNK_BYTES, null);
      const chunk = buffer.subarray(0, carried + read);
      // Each secret is reported once per file, at its first line.
      for (const leak of scanBuffer(chunk, label, secrets, linesBefore)) {
        if (seen.has(leak.what)) continue;
        seen.add(leak.what);
        leaks.push(leak);
      }
      if (read === 0) break;
      carried = Math.min(overlap, chunk.length);
      const kept = chunk.subarray(chunk.length - carried);
      linesBefore += countLines(chunk.subarray(0, chunk.length - carried));
      kept.copy(buffer, 0);
    }
    return leaks;
  } finally {
    closeSync(descriptor);
  }
}

function countLines(buffer: Buffer): number {
  let lines = 0;
  for (let index = buffer.indexOf(10); index !== -1; index = buffer.indexOf(10, index + 1)) lines += 1;
  return lines;
}

/**
 * Leaks in a file or every file under a folder; paths reported relative to `base`. Missing paths
 * scan as empty. A symbolic link is not followed: deleting a folder deletes the link, not what it
 * points to (a temporary package's link to node_modules made this scan 239 MB, a minute).
 */
export function scanPath(path: string, base: string, secrets: readonly string[] = SUITE_SECRETS): Leak[] {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    return [];
  }
  if (stats.isFile()) return scanFile(path, secrets, relative(base, path) || path);
  if (!stats.isDirectory()) return [];
  return readdirSync(path).flatMap((name) => scanPath(join(path, name), base, secrets));
}

const STATE = Symbol.for('fleetbook.test.leakScan');
const holder = globalThis as typeof globalThis & { [STATE]?: Leak[] };

/**
 * Leaks found by `setup.ts`'s deletion hook since the file began. Kept on the process, not
 * the module: the hook is installed once per worker, and each test file has modules of its own.
 */
export function removalLeaks(): Leak[] {
  return (holder[STATE] ??= []);
}

/** Text kept in memory (captured log lines, a CLI's output) to be scanned when the test file ends. */
const captures: Array<{ label: string; text: () => string }> = [];

export function registerCapture(label: string, text: () => string): void {
  captures.push({ label, text });
}

/** Scans and forgets the captures registered so far. */
export function scanCaptures(secrets: readonly string[] = SUITE_SECRETS): Leak[] {
  const leaks = captures.flatMap((capture) => scanText(capture.text(), capture.label, secrets));
  captures.length = 0;
  return leaks;
}

export function formatLeaks(leaks: readonly Leak[]): string {
  return `${leaks.length} secret leak(s) written during the tests:\n${leaks.map((leak) => `  ${leak.where}: ${leak.what}`).join('\n')}`;
}
