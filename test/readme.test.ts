/**
 * The README is a newcomer's first contact: its commands must exist and its example
 * playbook must be valid and do what the text says.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { loadPlaybook } from '../src/playbook/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The yaml block that follows "Save this as `first.yaml`". */
function firstPlaybook(): string {
  const after = readme.slice(readme.indexOf('Save this as `first.yaml`'));
  const block = /```yaml\n([\s\S]*?)```/.exec(after);
  if (!block?.[1]) throw new Error('README has no first playbook');
  return block[1];
}

describe('README', () => {
  it('gives the two set-up commands, and package.json has them', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
    expect(packageJson.scripts.start).toContain('demo');
    expect(packageJson.scripts.test).toContain('vitest run');
  });

  it('shows a first playbook that validates and runs against the simulator', async () => {
    // Where the README tells the user to save it: the project root, so its schema line resolves.
    const file = join(dir, 'first.yaml');
    writeFileSync(file, firstPlaybook());
    expect(loadPlaybook(file).problems).toEqual([]);

    const chunks: string[] = [];
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    const code = await main(['run', file, '--target', 'simulator', '-i', 'region=us-west', '--json'], {
      stdout,
      stderr: stdout,
      env: { FLEETBOOK_HOME: join(dir, 'home') },
      version: 'test',
    });
    expect(code).toBe(0);
    const result = chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { result?: { outputs?: { updatable?: string[] } } })
      .find((line) => line.result)?.result;
    expect(result?.outputs?.updatable?.length).toBeGreaterThan(0);
  });
});
