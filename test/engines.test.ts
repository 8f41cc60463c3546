/**
 * `npm install` on the README's Node version prints no EBADENGINE warning: every package the
 * lockfile installs runs on the lowest Node the project supports (cookie 2, which
 * light-my-request 6.8 pulls in, wants Node 22; package.json pins light-my-request below it).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
// npm's own range arithmetic, as npm checks engines with it.
const semver = require('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

const root = new URL('../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

describe('the lockfile installs cleanly on the lowest supported Node', () => {
  it('every installed package accepts the Node of package.json engines', () => {
    const lowest = semver.minVersion(manifest.engines.node)?.version ?? '';
    expect(lowest).toBe('20.19.0');
    const refusing = Object.entries(lock.packages).flatMap(([path, entry]) => {
      const wanted = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      return path !== '' && wanted !== undefined && !semver.satisfies(lowest, wanted)
        ? [`${path}@${entry.version ?? '?'} wants node ${wanted}`]
        : [];
    });
    expect(refusing).toEqual([]);
  });
});
