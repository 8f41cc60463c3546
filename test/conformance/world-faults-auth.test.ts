import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import { answerOf, expectNoViolations, startConformance, type Conformance, type JsonBody } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetbook-conformance-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Runs `body` against a fresh conformance simulator and closes it, whatever happens. */
async function withSim(
  options: Parameters<typeof startConformance>[0],
  body: (t: Conformance) => Promise<void>,
): Promise<void> {
  const t = await startConformance(options);
  try {
    await body(t);
    await expectNoViolations(t.sim);
  } finally {
    await t.close();
  }
}

const tokenRequest = (url: string, clientId = 'sim-admin', secret = `${clientId}-secret`) =>
  fetch(`${url}/as/token.oauth2`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });

describe('world file', () => {
  it('sizes every area and adds API clients from YAML', async () => {
    const world = file(
      'world.yaml',
      [
        'seed: 7',
        'clients:',
        '  - { clientId: auditor, clientSecret: auditor-pass, role: Observer }',
        'privateCloud: { systems: 12, precheckValidityMinutes: 30, failures: [] }',
        'workspaces: { tenants: 4, workspaceName: Conformance Corp }',
        'users: { users: 30, emailDomain: corp.example }',
        'subscriptions: { subscriptions: 20 }',
        'devices:',
        '  devices: 100',
        '  applications: [{ id: app-1, name: Fleet Insights, regions: [eu-west] }]',
        '  failSerialNumbers: [CONF-BAD-1]',
        'consumptionAnalytics: { reports: 2, rowsPerReport: 10 }',
        '',
      ].join('\n'),
    );
    await withSim({ world }, async ({ sim, clientFor }) => {
      const summary = (await (await fetch(`${sim.url}/_sim/world`)).json()) as JsonBody;
      expect(summary.seed).toBe(7);
      expect(summary.areas).toMatchObject({
        privateCloud: { systems: 12 },
        workspaces: { tenants: 4 },
        users: { users: 30 },
        subscriptions: { subscriptions: 20 },
        devices: { devices: 100, applications: 1 },
        consumptionAnalytics: { reports: 2 },
      });
      const auditor = clientFor('auditor', { credentials: { clientId: 'auditor', clientSecret: 'auditor-pass' } });
      const users = await auditor.users.listUsers({ limit: 5 });
      expect((users.body.items as JsonBody[]).every((user) => String(user.username).endsWith('@corp.example'))).toBe(
        true,
      );
      expect(
        await answerOf(auditor.users.inviteUser({ body: { email: 'x@corp.example', sendWelcomeEmail: false } })),
      ).toMatchObject({ status: 403, errorCode: 'FORBIDDEN' });
      expect(sim.clients.map((client) => client.clientId)).toEqual([
        'sim-admin',
        'sim-operator',
        'sim-observer',
        'auditor',
      ]);
    });
  });

  it('reports every mistake of a YAML world file at its line and column', async () => {
    const world = file(
      'bad-world.yaml',
      [
        'privateCloud:',
        '  systems: 0',
        'devices:',
        '  devices: -1',
        '  colour: red',
        'users: { emailDomain: "not a domain" }',
        'workspaces: { tenants: two }',
        'subscriptions: { subscriptions: 1.5 }',
        'clients: [{ clientId: x, clientSecret: y, role: Owner }]',
        'planets: 3',
        '',
      ].join('\n'),
    );
    const error = await startSimulator({ world }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).code).toBe('INVALID_WORLD_FILE');
    const message = (error as Error).message;
    for (const expected of [
      `${world}:2:12 (/privateCloud/systems)`,
      `${world}:4:12 (/devices/devices)`,
      `${world}:4:3 (/devices): unknown property 'colour'`,
      `${world}:6:23 (/users/emailDomain)`,
      `${world}:7:24 (/workspaces/tenants)`,
      `${world}:8:33 (/subscriptions/subscriptions)`,
      `${world}:9:49 (/clients/0/role)`,
      `${world}:1:1 (/): unknown property 'planets'`,
    ]) {
      expect(message).toContain(expected);
    }
    expect(message).toMatch(/^The world file has 8 problem\(s\):/);
  });

  it('refuses a world file that is not YAML, or is missing, with the file named', async () => {
    const broken = file('broken.yaml', 'privateCloud: { systems: 3\n');
    await expect(startSimulator({ world: broken })).rejects.toThrow(`The world file ${broken} is not valid YAML`);
    await expect(startSimulator({ world: join(dir, 'absent.yaml') })).rejects.toThrow(
      /Cannot read the world file .*absent\.yaml/,
    );
  });
});

describe('determinism and reset', () => {
  it('the same seed gives the same world; another seed another; reset rebuilds it and keeps clock, tokens and log', async () => {
    const snapshot = async (seed: number) => {
      let bodies: unknown[] = [];
      await withSim({ seed }, async ({ observer }) => {
        bodies = [
          (await observer.privateCloud.listSystems({ limit: 100 }, { region: 'us-west' })).body,
          (await observer.devices.listDevices()).body,
          (await observer.subscriptions.listSubscriptions()).body,
          (await observer.users.listUsers()).body,
        ];
      });
      return bodies;
    };
    const first = await snapshot(5);
    expect(await snapshot(5)).toEqual(first);
    expect(await snapshot(6)).not.toEqual(first);

    await withSim({ seed: 5, timeScale: 1 }, async ({ sim, operator }) => {
      const created = await operator.workspaces.createTenant({
        body: { workspaceName: 'Reset me', email: 'r@reset.example', address: { countryCode: 'DE' } },
      });
      sim.control.clock.advance(3_600_000);
      const before = sim.control.clock.now();
      const reset = await fetch(`${sim.url}/_sim/reset`, { method: 'POST' });
      expect(reset.status).toBe(200);
      expect(((await reset.json()) as JsonBody).areas.workspaces.tenants).toBe(2);
      expect(sim.control.clock.now()).toBeGreaterThanOrEqual(before);
      // The operator's token still works; the tenant is gone; the log kept the creation.
      expect(
        await answerOf(operator.workspaces.getWorkspace({ workspaceId: created.headers.location!.split('/').pop()! })),
      ).toMatchObject({ status: 404 });
      expect(sim.control.requests({ operationId: 'workspaces.createTenant' })).toHaveLength(1);
      expect(sim.control.requests({ operationId: 'auth.createToken' })).toHaveLength(1);
    });
  });
});

describe('faults', () => {
  it('loads a YAML faults file: an error rate on a route, reproducible; latency; a located mistake', async () => {
    const faults = file(
      'faults.yaml',
      [
        'rules:',
        '  - { route: "users.*", status: 503, rate: 0.5 }',
        '  - { route: workspaces.listTenants, latencyMs: 150, count: 1 }',
        '',
      ].join('\n'),
    );
    const statuses: number[][] = [];
    for (let run = 0; run < 2; run += 1) {
      await withSim({ faults }, async ({ observer }) => {
        const seen: number[] = [];
        for (let i = 0; i < 12; i += 1) seen.push((await answerOf(observer.users.listUsers({ limit: 1 }))).status);
        statuses.push(seen);
        const started = performance.now();
        await observer.workspaces.listTenants();
        expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      });
    }
    // The same seed and settings give the same faults.
    expect(statuses[0]).toEqual(statuses[1]);
    expect(new Set(statuses[0])).toEqual(new Set([200, 503]));

    const bad = file(
      'bad-faults.yaml',
      [
        'rules:',
        '  - { route: "users.*", status: 200 }',
        'asyncOperations:',
        '  - { type: software-update, outcome: LATER }',
        '',
      ].join('\n'),
    );
    const error = await startSimulator({ faults: bad }).catch((caught: unknown) => caught);
    expect((error as UsageError).code).toBe('INVALID_FAULTS');
    expect((error as Error).message).toContain(`${bad}:2:33 (/rules/0/status): must be >= 400`);
    expect((error as Error).message).toContain(
      `${bad}:4:39 (/asyncOperations/0/outcome): must be one of FAILED, TIMEDOUT, never`,
    );
  });

  it('drops connections before and after the handler: after, the write is applied and the client hears nothing', async () => {
    await withSim({}, async ({ sim, admin }) => {
      sim.control.faults.set({
        rules: [
          { route: 'users.inviteUser', afterAccept: true, count: 1 },
          { route: 'users.getUser', drop: 1, count: 1 },
        ],
      });
      const invite = await admin.users
        .inviteUser({ body: { email: 'dropped@corp.example', sendWelcomeEmail: false } })
        .catch((error: unknown) => error);
      expect(invite).toMatchObject({ code: expect.stringMatching(/CONNECTION|NETWORK|SOCKET|TRANSPORT/) });
      const logged = sim.control.requests({ operationId: 'users.inviteUser' });
      expect(logged).toEqual([expect.objectContaining({ status: 201, dropped: 'after' })]);
      // The invitation happened: inviting again conflicts.
      expect(
        await answerOf(admin.users.inviteUser({ body: { email: 'dropped@corp.example', sendWelcomeEmail: false } })),
      ).toMatchObject({ status: 409 });
      const get = await admin.users.getUser({ id: 'anything' }).catch((error: unknown) => error);
      expect(get).toMatchObject({ code: expect.stringMatching(/CONNECTION|NETWORK|SOCKET|TRANSPORT/) });
      expect(sim.control.requests({ operationId: 'users.getUser' })).toEqual([
        expect.objectContaining({ dropped: 'before' }),
      ]);
    });
  });

  it('async faults: FAILED ends the operation failed; TIMEDOUT after timeoutMinutes; never stays RUNNING and the client deadline ends the wait', async () => {
    await withSim({ timeScale: 1 }, async ({ sim, admin }) => {
      sim.control.faults.set({
        asyncOperations: [
          { type: 'software-version-refresh', outcome: 'FAILED', count: 1 },
          { type: 'software-version-refresh', outcome: 'TIMEDOUT', count: 1 },
          { type: 'software-version-refresh', outcome: 'never', count: 1 },
        ],
      });
      const [system] = (await admin.privateCloud.listSystems({ filter: "state eq 'ONLINE'" }, { region: 'us-west' }))
        .body.items as JsonBody[];
      const at = { region: 'us-west' };
      const drive = setInterval(() => sim.control.clock.advance(60_000), 2);
      try {
        const failed = await admin.waitForOperation(
          await admin.privateCloud.refreshSoftwareVersions({ id: system.id }, at),
          { minPollMs: 1, maxPollMs: 5 },
        );
        expect(failed).toMatchObject({
          outcome: 'failed',
          operation: { state: 'FAILED', error: { errorCode: 'SIMULATED_FAILURE' } },
        });
        const timedOut = await admin.waitForOperation(
          await admin.privateCloud.refreshSoftwareVersions({ id: system.id }, at),
          { minPollMs: 1, maxPollMs: 5 },
        );
        expect(timedOut).toMatchObject({
          outcome: 'timedOut',
          operation: { state: 'TIMEDOUT', error: { errorCode: 'OPERATION_TIMED_OUT' } },
        });
      } finally {
        clearInterval(drive);
      }
      const stuck = await admin.privateCloud.refreshSoftwareVersions({ id: system.id }, at);
      const started = Date.now();
      const waited = await admin.waitForOperation(stuck, { minPollMs: 5, maxPollMs: 10, timeoutMs: 200 });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(waited).toMatchObject({ outcome: 'timedOut', error: { code: 'WAIT_DEADLINE_EXCEEDED' } });
      expect(['INITIALIZED', 'RUNNING']).toContain(waited.operation.state);
      // A day later on the platform it is still RUNNING, well past its timeoutMinutes, and the system stays busy.
      sim.control.clock.advance(24 * 3_600_000);
      const id = stuck.headers.location!.split('/').pop()!;
      expect((await admin.dataServices.getAsyncOperation({ id }, at)).body).toMatchObject({
        state: 'RUNNING',
        progressPercent: 99,
      });
      expect(await answerOf(admin.privateCloud.refreshSoftwareVersions({ id: system.id }, at))).toMatchObject({
        status: 409,
      });
    });
  });
});

describe('token endpoint and auth', () => {
  it('answers 401 for missing, malformed, unknown, expired and revoked tokens, told apart by the www-authenticate header', async () => {
    await withSim({ tokenLifetimeSeconds: 60, timeScale: 1 }, async ({ sim }) => {
      const reasonOf = async (authorization?: string) => {
        const response = await fetch(`${sim.url}/identity/v1/users`, {
          headers: authorization ? { authorization } : {},
        });
        expect(response.status).toBe(401);
        expect(((await response.json()) as JsonBody).errorDetails).toBeUndefined();
        return /error_description="(\w+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
      };
      const tokenOf = async () => ((await (await tokenRequest(sim.authUrl)).json()) as JsonBody).access_token as string;
      expect(await reasonOf()).toBe('missing');
      expect(await reasonOf('Token abc')).toBe('malformed');
      expect(await reasonOf(`Bearer sim_${'a'.repeat(48)}`)).toBe('unknown');
      const expiring = await tokenOf();
      sim.control.clock.advance(61_000);
      expect(await reasonOf(`Bearer ${expiring}`)).toBe('expired');
      const revoked = await tokenOf();
      sim.control.revokeTokens();
      expect(await reasonOf(`Bearer ${revoked}`)).toBe('revoked');
      expect((await tokenRequest(sim.authUrl, 'sim-admin', 'wrong')).status).toBe(401);
    });
  });

  it('the client renews a revoked or expired token once and repeats the call', async () => {
    await withSim({ tokenLifetimeSeconds: 3_600, timeScale: 1 }, async ({ sim, observer }) => {
      await observer.users.listUsers({ limit: 1 });
      sim.control.faults.set({ revokeTokens: true });
      expect((await observer.users.listUsers({ limit: 1 })).status).toBe(200);
      const statuses = sim.control.requests().map((entry) => `${entry.operationId} ${entry.status}`);
      expect(statuses).toEqual([
        'auth.createToken 200',
        'users.listUsers 200',
        'users.listUsers 401',
        'auth.createToken 200',
        'users.listUsers 200',
      ]);
    });
  });

  it('a faults file revokes tokens: `true` the first one used, `{afterRequests: N}` after N authenticated requests, once', async () => {
    const logOf = (t: Conformance) => t.sim.control.requests().map((entry) => `${entry.operationId} ${entry.status}`);
    await withSim({ faults: file('revoke-now.yaml', 'revokeTokens: true\n') }, async (t) => {
      expect((await t.observer.users.listUsers({ limit: 1 })).status).toBe(200);
      expect((await t.observer.users.listUsers({ limit: 1 })).status).toBe(200);
      expect(logOf(t)).toEqual([
        'auth.createToken 200',
        'users.listUsers 401',
        'auth.createToken 200',
        'users.listUsers 200',
        'users.listUsers 200',
      ]);
    });
    await withSim({ faults: file('revoke-later.yaml', 'revokeTokens: { afterRequests: 2 }\n') }, async (t) => {
      for (let i = 0; i < 4; i += 1) expect((await t.observer.users.listUsers({ limit: 1 })).status).toBe(200);
      expect(t.sim.control.faults.get()).not.toHaveProperty('revokeTokens');
      expect(logOf(t)).toEqual([
        'auth.createToken 200',
        'users.listUsers 200',
        'users.listUsers 200',
        'users.listUsers 401',
        'auth.createToken 200',
        'users.listUsers 200',
        'users.listUsers 200',
      ]);
    });
    const bad = file('revoke-bad.yaml', 'revokeTokens: { afterRequests: -1 }\n');
    const error = await startSimulator({ faults: bad }).catch((caught: unknown) => caught);
    expect((error as UsageError).code).toBe('INVALID_FAULTS');
    expect((error as Error).message).toContain(
      `The faults file has 1 problem(s):\n  ${bad}:1:32 (/revokeTokens/afterRequests): must be >= 0`,
    );
  });

  it("the token endpoint's own rate limit and faults: 429 with retry info, an injected 503, both seen by the client", async () => {
    await withSim({ rateLimits: { auth: 2 } }, async ({ sim, clientFor }) => {
      expect((await tokenRequest(sim.authUrl)).status).toBe(200);
      expect((await tokenRequest(sim.authUrl)).status).toBe(200);
      const limited = await tokenRequest(sim.authUrl);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('ratelimit-limit')).toBe('2');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Per client id: another client still gets its token, through the client.
      expect((await clientFor('sim-operator').users.listUsers({ limit: 1 })).status).toBe(200);
      sim.control.faults.set({ rules: [{ route: 'auth.createToken', status: 503, count: 1 }] });
      const failing = await clientFor('sim-observer')
        .users.listUsers({ limit: 1 })
        .catch((error: unknown) => error);
      expect(failing).toMatchObject({ status: 503 });
      expect((await clientFor('sim-observer').users.listUsers({ limit: 1 })).status).toBe(200);
    });
  });
});
