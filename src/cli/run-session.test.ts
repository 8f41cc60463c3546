import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const directory = mkdtempSync(join(tmpdir(), 'fleetbook-log-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('--log-file', () => {
  it('keeps every line when the process exits at once on a fatal path (flushed synchronously on exit)', () => {
    const logFile = join(directory, 'fatal.log');
    const session = fileURLToPath(new URL('./run-session.ts', import.meta.url));
    const logging = fileURLToPath(new URL('../logging/index.ts', import.meta.url));
    // A process that logs a burst and then exits at once, as a fatal path does.
    const script = `
      const { createCommandLogger } = await import(${JSON.stringify(session)});
      const { createSecretRegistry } = await import(${JSON.stringify(logging)});
      const { Writable } = await import('node:stream');
      const io = { stdout: new Writable({ write: (_c, _e, done) => done() }), stderr: process.stderr, env: {}, version: 'test' };
      const logger = createCommandLogger(io, { json: true, logFile: ${JSON.stringify(logFile)}, logLevel: 'info' }, createSecretRegistry());
      for (let i = 0; i < 5000; i += 1) logger.info({ i }, 'line ' + i);
      logger.fatal('the last words');
      process.exit(3);
    `;
    let code = 0;
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'pipe' });
    } catch (error) {
      code = (error as { status: number }).status;
    }
    expect(code).toBe(3);
    const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(5001);
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ msg: 'the last words', level: 60 });
  });
});
