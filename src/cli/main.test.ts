import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const mainUrl = new URL('./main.ts', import.meta.url).href;

/**
 * Runs the CLI with `args` in a fresh process (this one has loaded everything already) and
 * answers its output and the packages it loaded; the heavy ones are CommonJS, so the
 * require cache names them.
 */
function runFresh(args: string[]): { stdout: string; packages: string[] } {
  const script = `
    import { createRequire } from 'node:module';
    const { main } = await import(${JSON.stringify(mainUrl)});
    const out = [];
    const io = { stdout: { write: (text) => out.push(text) }, stderr: process.stderr, env: {}, version: '1.2.3' };
    await main(${JSON.stringify(args)}, io);
    const packages = Object.keys(createRequire(import.meta.url).cache).map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1]);
    process.stdout.write(JSON.stringify({ stdout: out.join(''), packages: [...new Set(packages.filter(Boolean))] }));
  `;
  return JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }),
  ) as { stdout: string; packages: string[] };
}

// Each case starts fresh processes under tsx (about 2 s each on a busy 2-core machine).
describe('fleetbook start-up', { timeout: 30_000 }, () => {
  it('answers --version and --help without loading what the commands run on', () => {
    for (const args of [['--version'], ['--help'], ['run', '--help']]) {
      const { stdout, packages } = runFresh(args);
      expect(stdout).toContain(args[0] === '--version' ? '1.2.3' : 'Usage: fleetbook');
      for (const heavy of ['fastify', 'ajv', 'undici', 'yaml', 'jsonata', 'cron-parser'])
        expect(packages, `${args.join(' ')} loads ${heavy}`).not.toContain(heavy);
    }
  });

  it('loads the playbook loader for validate, and not the simulator', () => {
    const { packages } = runFresh(['validate', '--help']);
    expect(packages).not.toContain('ajv');
    const validated = runFresh([
      'validate',
      new URL('../../playbooks/device-onboarding.yaml', import.meta.url).pathname,
    ]);
    expect(validated.stdout).toBe('1 playbook(s) valid\n');
    expect(validated.packages).toContain('yaml');
    expect(validated.packages).not.toContain('fastify');
  });
});
