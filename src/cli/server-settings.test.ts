import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readServerSettings } from './server-settings.js';

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'fleetbook-server-settings-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

describe('the server section of fleetbook.yaml', () => {
  it('reads secureCookies, and nothing when there is no file or no section', () => {
    expect(readServerSettings(cwd)).toEqual({});
    writeFileSync(join(cwd, 'fleetbook.yaml'), 'profiles:\n  lab: { clientId: a }\n');
    expect(readServerSettings(cwd)).toEqual({});
    writeFileSync(join(cwd, 'fleetbook.yaml'), 'server:\n  secureCookies: true\n');
    expect(readServerSettings(cwd)).toEqual({ secureCookies: true });
  });

  it('refuses a secureCookies that is not true or false, naming the file and the key (exit 2)', () => {
    writeFileSync(join(cwd, 'fleetbook.yaml'), 'server:\n  secureCookies: "yes"\n');
    expect(() => readServerSettings(cwd)).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        exitCode: 2,
        message: `${join(cwd, 'fleetbook.yaml')}: server.secureCookies must be true or false, got "yes".`,
      }),
    );
  });
});
