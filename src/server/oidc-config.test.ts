import { describe, expect, it } from 'vitest';
import { isFleetbookError } from '../errors/index.js';
import { parseOidcConfig, roleOfGroups } from './oidc-config.js';
import { describeRole, roleFor } from './tokens.js';

const env = { FLEETBOOK_OIDC_SECRET: 's3cret' };
const FILE = '/ops/fleetbook.yaml';

const section = (lines: string) => `server:\n  url: https://fleetbook.example\n  oidc:\n${lines}`;
const GOOD = `    issuer: https://idp.example.com/realms/ops
    clientId: fleetbook
    clientSecretEnv: FLEETBOOK_OIDC_SECRET
    roles:
      admin: [platform-admins]
      operator: [sre, change-managers]
      viewer: [auditors, "*"]
`;

/** The message of the refusal of `text`, checked to be a located usage error (exit 2). */
function refusal(text: string, given: NodeJS.ProcessEnv = env): string {
  try {
    parseOidcConfig(text, FILE, given);
  } catch (error) {
    if (!isFleetbookError(error)) throw error;
    expect(error.exitCode).toBe(2);
    expect(error.code).toBe('INVALID_OIDC_CONFIG');
    return error.message;
  }
  throw new Error('not refused');
}

describe('server.oidc', () => {
  it('reads the provider, the secret from its variable, groupsClaim by default, and the roles highest first', () => {
    expect(parseOidcConfig(section(GOOD), FILE, env)).toEqual({
      issuer: 'https://idp.example.com/realms/ops',
      clientId: 'fleetbook',
      clientSecret: 's3cret',
      groupsClaim: 'groups',
      roles: [
        { role: 'admin', groups: ['platform-admins'] },
        { role: 'operator', groups: ['sre', 'change-managers'] },
        { role: 'viewer', groups: ['auditors', '*'] },
      ],
      serverUrl: 'https://fleetbook.example',
    });
    expect(parseOidcConfig('server:\n  url: https://x.example\n', FILE, env)).toBeUndefined();
  });

  it('gives the highest role any group is bound to; "*" binds everyone; no match, no role', () => {
    const settings = parseOidcConfig(section(GOOD), FILE, env);
    if (!settings) throw new Error('no settings');
    expect(roleOfGroups(settings, ['sre', 'platform-admins'])).toEqual({ role: 'admin' });
    expect(roleOfGroups(settings, ['change-managers'])).toEqual({ role: 'operator' });
    expect(roleOfGroups(settings, [])).toEqual({ role: 'viewer' });
    expect(roleOfGroups({ ...settings, roles: settings.roles.slice(0, 2) }, ['marketing'])).toBeUndefined();
  });

  it('refuses each mistake located at its line and column, naming the field', () => {
    expect(refusal(section(GOOD.replace('    clientId: fleetbook\n', '')))).toBe(
      `${FILE}:4:5: server.oidc.clientId is missing`,
    );
    expect(refusal(section(GOOD.replace('https://idp.example.com', 'http://idp.example.com')))).toBe(
      `${FILE}:4:13: server.oidc.issuer must be an https URL (http only on 127.0.0.1 or localhost), got 'http://idp.example.com/realms/ops'`,
    );
    expect(refusal(section(`${GOOD}    groupClaim: roles\n`))).toMatch(
      /^\/ops\/fleetbook\.yaml:11:5: server\.oidc\.groupClaim is not a field here .*Did you mean 'groupsClaim'\?/,
    );
    expect(refusal(section(GOOD), {})).toBe(
      `${FILE}:6:22: server.oidc.clientSecretEnv names the variable FLEETBOOK_OIDC_SECRET, which is not set`,
    );
    expect(refusal(section(GOOD.replace('operator: [sre, change-managers]', 'operators: [sre]')))).toMatch(
      /:9:7: server\.oidc\.roles\.operators is not a field here \(it takes admin, operator, viewer\)/,
    );
    expect(refusal(section(GOOD.replace('viewer: [auditors, "*"]', 'viewer: []')))).toBe(
      `${FILE}:10:15: server.oidc.roles.viewer must be a non-empty list of group names`,
    );
  });

  it('reads a binding limited to playbooks: that role on them, the others elsewhere', () => {
    const settings = parseOidcConfig(
      section(
        GOOD.replace(
          'operator: [sre, change-managers]',
          'operator: { groups: [reporting-team], playbooks: ["*-report*"] }',
        ),
      ),
      FILE,
      env,
    );
    if (!settings) throw new Error('no settings');
    expect(settings.roles[1]).toEqual({ role: 'operator', groups: ['reporting-team'], playbooks: ['*-report*'] });
    const roles = roleOfGroups(settings, ['reporting-team']);
    expect(roles).toEqual({
      role: 'operator',
      grants: [{ role: 'operator', playbooks: ['*-report*'] }, { role: 'viewer' }],
    });
    const erin = { name: 'erin', ...roles, role: roles?.role ?? 'viewer' };
    expect(roleFor(erin, 'weekly-report')).toBe('operator');
    expect(roleFor(erin, 'rolling-update')).toBe('viewer');
    expect(roleFor(erin)).toBe('viewer');
    expect(describeRole(erin)).toBe('operator on playbooks matching *-report* (viewer elsewhere)');
    expect(
      refusal(
        section(GOOD.replace('operator: [sre, change-managers]', 'operator: { groups: [x], playbooks: ["a/b"] }')),
      ),
    ).toBe(
      `${FILE}:9:44: server.oidc.roles.operator.playbooks[0] 'a/b' is not a playbook name pattern (letters, digits, '.', '_', '-', '*' for any text)`,
    );
  });
});
