import { afterEach, describe, expect, it } from 'vitest';
import { startTestSimulator } from './core-helpers.js';

const SYSTEMS = '/private-cloud-business/v1beta1/systems';
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});
async function start(options: Parameters<typeof startTestSimulator>[0] = {}) {
  const t = await startTestSimulator(options);
  close = () => t.sim.close();
  return t;
}

describe('simulator core: auth', () => {
  it('issues tokens and refuses a wrong secret', async () => {
    const { sim } = await start();
    const ok = await fetch(`${sim.authUrl}/as/token.oauth2`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=sim-observer&client_secret=sim-observer-secret',
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ token_type: 'Bearer', expires_in: 7199 });
    const bad = await fetch(`${sim.authUrl}/as/token.oauth2`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=sim-observer&client_secret=nope',
    });
    expect(bad.status).toBe(401);
  });

  it('refuses a token request giving client_id as a list (a repeated form field, a JSON array): 400 INVALID_REQUEST', async () => {
    const { sim } = await start();
    const ask = (contentType: string, body: string) =>
      fetch(`${sim.authUrl}/as/token.oauth2`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const answers = [
      await ask(
        'application/x-www-form-urlencoded',
        'grant_type=client_credentials&client_id=sim-observer&client_id=sim-admin&client_secret=sim-observer-secret',
      ),
      await ask(
        'application/json',
        JSON.stringify({
          grant_type: 'client_credentials',
          client_id: ['sim-observer'],
          client_secret: 'sim-observer-secret',
        }),
      ),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({
        errorCode: 'INVALID_REQUEST',
        message: expect.stringContaining('client_id is given more than once'),
      });
    }
    expect(sim.control.requests({ operationId: 'auth.createToken' }).map((entry) => entry.status)).toEqual([400, 400]);
  });

  it('keeps tokens for their lifetime in wall-clock time, whatever the time scale', async () => {
    // 60 s at a time scale of 100,000 would be 0.6 ms of simulated lifetime. Real time on
    // purpose: what is tested is that token lifetimes follow the wall clock, not the scaled one.
    const { call, token } = await start({ tokenLifetimeSeconds: 60, timeScale: 100_000 });
    await token();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call('GET', SYSTEMS)).status).toBe(200);
  });

  it('answers 401 telling missing, malformed, unknown, expired and revoked tokens apart', async () => {
    const { sim, call, token } = await start({ tokenLifetimeSeconds: 60 });
    const reasonOf = async (authorization?: string) => {
      const response = await fetch(`${sim.url}${SYSTEMS}`, { headers: authorization ? { authorization } : {} });
      expect(response.status).toBe(401);
      // Private cloud publishes no errorDetails: the reason is the www-authenticate header's.
      expect(((await response.json()) as { errorDetails?: unknown }).errorDetails).toBeUndefined();
      return /error_description="(\w+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
    };
    expect(await reasonOf()).toBe('missing');
    expect(await reasonOf('Basic abc')).toBe('malformed');
    expect(await reasonOf(`Bearer sim_${'0'.repeat(48)}`)).toBe('unknown');
    const first = await token();
    expect((await call('GET', SYSTEMS)).status).toBe(200);
    sim.control.clock.advance(61_000);
    expect(await reasonOf(`Bearer ${first}`)).toBe('expired');
    const revoked = await fetch(`${sim.authUrl}/as/token.oauth2`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=sim-admin&client_secret=sim-admin-secret',
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    expect((await fetch(`${sim.url}/_sim/tokens/revoke`, { method: 'POST' })).status).toBe(204);
    expect(await reasonOf(`Bearer ${revoked.access_token}`)).toBe('revoked');
  });

  it('answers 403 when the role lacks the level (observer write, operator delete)', async () => {
    const { call } = await start();
    const policies = await call('GET', '/private-cloud-business/v1beta1/vm-provisioning-policies', {
      client: 'sim-observer',
    });
    expect(policies.status).toBe(200);
    const id = policies.body.items[0].id as string;
    const observerWrite = await call('POST', '/private-cloud-business/v1beta1/vm-provisioning-policies', {
      client: 'sim-observer',
      body: { name: 'p1' },
    });
    expect(observerWrite.status).toBe(403);
    expect(observerWrite.body.errorCode).toBe('FORBIDDEN');
    expect(
      (
        await call('DELETE', `/private-cloud-business/v1beta1/vm-provisioning-policies/${id}`, {
          client: 'sim-operator',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call('POST', '/private-cloud-business/v1beta1/vm-provisioning-policies', {
          client: 'sim-operator',
          body: { name: 'p1' },
        })
      ).status,
    ).toBe(200);
  });
});

describe('simulator core: limits, validation, regions', () => {
  it('rate limits per client and group with headers and a retry-info detail', async () => {
    const { call } = await start({ rateLimits: { privateCloud: 3 } });
    const first = await call('GET', SYSTEMS);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    await call('GET', SYSTEMS);
    await call('GET', SYSTEMS);
    const limited = await call('GET', SYSTEMS);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    // No errorDetails in this area: the retry hint is a Retry-After header.
    expect(limited.body.errorDetails).toBeUndefined();
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call('GET', SYSTEMS, { client: 'sim-observer' })).status).toBe(200);
  });

  it('answers 400 naming the bad field and the bad query parameter', async () => {
    const { call } = await start();
    const body = await call('POST', '/private-cloud-business/v1beta1/vm-provisioning-policies', {
      body: { name: 'x'.repeat(81) },
    });
    expect(body.status).toBe(400);
    expect(body.body.message).toContain('name');
    const query = await call('GET', `${SYSTEMS}?limit=1000`);
    expect(query.status).toBe(400);
    expect(query.body.message).toContain('limit');
    // Integers as the description writes them: decimal digits, nothing Number() would also read.
    for (const limit of ['0x10', '0b11', '1e1x', ' 16', 'Infinity', '']) {
      const odd = await call('GET', `${SYSTEMS}?limit=${encodeURIComponent(limit)}`);
      expect(odd.status, limit).toBe(400);
      expect(odd.body.message, limit).toContain('limit');
    }
    expect((await call('GET', `${SYSTEMS}?limit=16`)).status).toBe(200);
    // An e-mail address is at most 254 characters, whatever the field.
    const huge = await call('POST', '/identity/v1/users', {
      body: { email: `${'a'.repeat(8 * 1024 * 1024)}@corp.example` },
    });
    expect(huge.status).toBe(400);
    expect(huge.body.message).toContain('email');
    expect(
      (await call('POST', '/identity/v1/users', { body: { email: `${'a'.repeat(64)}@corp.example` } })).status,
    ).toBe(201);
  });

  it('takes a body that is not JSON through the whole pipeline: auth first, logged, deprecation and rate-limit headers, faults', async () => {
    const { sim, token } = await start({ rateLimits: { reporting: 5 } });
    const ALPHA = '/reporting/v1alpha1/report-exports';
    const post = async (authorization?: string) => {
      const response = await fetch(`${sim.url}${ALPHA}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: '{"name": "half',
      });
      return {
        status: response.status,
        headers: response.headers,
        body: (await response.json()) as {
          errorCode: string;
          message: string;
          errorDetails?: Array<{ issues: unknown[] }>;
        },
      };
    };
    const anonymous = await post();
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('deprecation')).toMatch(/^@\d+$/);
    const refused = await post(`Bearer ${await token()}`);
    expect(refused.status).toBe(400);
    expect(refused.body.errorCode).toBe('BAD_REQUEST');
    expect(refused.body.message).toContain('not valid JSON');
    expect(refused.body.errorDetails).toBeUndefined();
    expect(refused.headers.get('sunset')).not.toBeNull();
    expect(refused.headers.get('link')).toBe('</reporting/v1/report-exports>; rel="successor-version"');
    expect(refused.headers.get('ratelimit-limit')).toBe('5');
    sim.control.faults.set({ rules: [{ route: 'reportingV1alpha1.createReportExport', status: 503, count: 1 }] });
    expect((await post(`Bearer ${await token()}`)).status).toBe(503);
    expect(
      sim.control
        .requests({ operationId: 'reportingV1alpha1.createReportExport' })
        .map((entry) => [entry.status, entry.clientId]),
    ).toEqual([
      [401, undefined],
      [400, 'sim-admin'],
      [503, undefined],
    ]);
    expect(sim.control.violations()).toEqual([]);
    // The control surface refuses it too, as a 400 rather than as settings it cannot read.
    const faults = await fetch(`${sim.url}/_sim/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"rules": [',
    });
    expect(faults.status).toBe(400);
    expect(((await faults.json()) as { message: string }).message).toContain('not valid JSON');
  });

  it('refuses a JSON body nested 10,000 deep with a 400, not a 500, and keeps serving', async () => {
    const { call, sim, token } = await start();
    const deepList = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    for (const body of [deepList, deepObject]) {
      const answer = await fetch(`${sim.url}/devices/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await token()}` },
        body,
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { message: string }).message).toContain('nests more than 64 levels deep');
    }
    expect((await call('GET', '/devices/v1/devices?limit=1')).status).toBe(200);
  });

  it('serves regions by prefix or header and names the valid ones for an unknown region', async () => {
    const { call } = await start();
    const all = await call('GET', `${SYSTEMS}?limit=100`);
    const west = await call('GET', `/regions/us-west${SYSTEMS}?limit=100`);
    const byHeader = await call('GET', `${SYSTEMS}?limit=100`, { headers: { 'x-fleetbook-region': 'us-west' } });
    expect(all.body.total).toBe(6);
    expect(west.body.items.every((s: { region: string }) => s.region === 'us-west')).toBe(true);
    expect(byHeader.body.total).toBe(west.body.total);
    const other = all.body.items.find((s: { region: string }) => s.region !== 'us-west');
    expect((await call('GET', `/regions/us-west${SYSTEMS}/${other.id}`)).status).toBe(404);
    const unknown = await call('GET', `/regions/mars-north${SYSTEMS}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('us-west, eu-west, eu-central, ap-northeast');
  });
});

describe('simulator core: faults, control, determinism', () => {
  it('gives injected 5xx and 429 a retry hint in simulated time, so a large time scale keeps fault tests fast', async () => {
    const { call } = await start({
      timeScale: 6000,
      faults: {
        rules: [
          { route: 'privateCloud.listSystems', status: 503, count: 1 },
          { route: 'privateCloud.listSystems', status: 429, count: 1 },
          { route: 'devices.listDevices', status: 503, count: 1 },
        ],
      },
    });
    const unavailable = await call('GET', SYSTEMS);
    expect(unavailable.status).toBe(503);
    // Private cloud publishes no errorDetails: Retry-After in whole seconds, 30/6000 s rounds to 0.
    expect(unavailable.body.errorDetails).toBeUndefined();
    expect(unavailable.headers.get('retry-after')).toBe('0');
    const limited = await call('GET', SYSTEMS);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('0');
    // Devices publishes a server error's retry hint as a detail in whole seconds: 30/6000 s rounds to 0 there too.
    const devices = await call('GET', '/devices/v1/devices');
    expect(devices.status).toBe(503);
    expect(devices.body.errorDetails).toEqual([{ type: 'retry info', retryAfterSeconds: 0 }]);
    expect(devices.headers.get('retry-after')).toBeNull();
  });

  it('injects statuses, latency and dropped connections by route, counted', async () => {
    const { sim, call } = await start({
      faults: {
        rules: [
          { route: 'privateCloud.listSystems', status: 503, count: 1 },
          { route: 'privateCloud.getSystem', drop: 1, count: 1 },
          { route: 'privateCloud.listServers', latencyMs: 150, count: 1 },
        ],
      },
    });
    const injected = await call('GET', SYSTEMS);
    expect(injected.status).toBe(503);
    expect(injected.headers.get('retry-after')).toBe('30');
    const systems = await call('GET', SYSTEMS);
    expect(systems.status).toBe(200);
    await expect(call('GET', `${SYSTEMS}/${systems.body.items[0].id}`)).rejects.toThrow();
    const before = Date.now();
    expect((await call('GET', `${SYSTEMS}/${systems.body.items[0].id}/servers`)).status).toBe(200);
    expect(Date.now() - before).toBeGreaterThanOrEqual(140);
    const log = sim.control.requests({ operationId: 'privateCloud.getSystem' });
    expect(log).toHaveLength(1);
    // Faults come before auth, so a dropped request names no client.
    expect(log[0]).toMatchObject({ status: 0, dropped: 'before' });
  });

  it('closes at once with a request in flight, dropping its connection instead of waiting for it', async () => {
    const t = await startTestSimulator({
      faults: { rules: [{ route: 'privateCloud.listSystems', latencyMs: 30_000, count: 1 }] },
    });
    const answer = t.call('GET', SYSTEMS).then(
      () => 'answered',
      () => 'dropped',
    );
    while (t.sim.control.requests({ operationId: 'privateCloud.listSystems' }).length === 0)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const began = Date.now();
    await t.sim.close();
    // Waiting for the request (30 s of injected latency), then for its keep-alive connection, is what it did.
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(await answer).toBe('dropped');
  });

  it('applies a write but drops the answer with afterAccept', async () => {
    const t = await start({
      faults: { rules: [{ route: 'privateCloud.createProvisioningPolicy', afterAccept: true, count: 1 }] },
    });
    await expect(
      t.call('POST', '/private-cloud-business/v1beta1/vm-provisioning-policies', { body: { name: 'lost-answer' } }),
    ).rejects.toThrow();
    const list = await t.call(
      'GET',
      "/private-cloud-business/v1beta1/vm-provisioning-policies?filter=name eq 'lost-answer'",
    );
    expect(list.body.total).toBe(1);
    expect(t.sim.control.requests({ operationId: 'privateCloud.createProvisioningPolicy' })[0]).toMatchObject({
      status: 200,
      dropped: 'after',
    });
  });

  it("records each request's body in the request log, secrets scrubbed", async () => {
    const { sim, call } = await start();
    await call('POST', '/private-cloud-business/v1beta1/vm-provisioning-policies', { body: { name: 'logged-policy' } });
    await call('GET', SYSTEMS);
    const token = sim.control.requests({ operationId: 'auth.createToken' })[0];
    expect(token?.body).toMatchObject({ client_id: 'sim-admin', client_secret: '[REDACTED]' });
    expect(JSON.stringify(sim.control.requests())).not.toContain('sim-admin-secret');
    const served = (await (
      await fetch(`${sim.url}/_sim/requests?operationId=privateCloud.createProvisioningPolicy`)
    ).json()) as { items: unknown[] };
    expect(served.items).toEqual([expect.objectContaining({ status: 200, body: { name: 'logged-policy' } })]);
    expect(sim.control.requests({ operationId: 'privateCloud.listSystems' })[0]).not.toHaveProperty('body');
  });

  it('exposes /_sim/ endpoints: requests, faults, clock, world, reset, violations', async () => {
    const { sim, call } = await start();
    await call('GET', SYSTEMS);
    const requests = (await (await fetch(`${sim.url}/_sim/requests?operationId=privateCloud.listSystems`)).json()) as {
      items: unknown[];
    };
    expect(requests.items).toEqual([
      expect.objectContaining({ method: 'GET', path: SYSTEMS, status: 200, clientId: 'sim-admin' }),
    ]);
    expect((await fetch(`${sim.url}/_sim/requests`, { method: 'DELETE' })).status).toBe(204);
    expect(sim.control.requests()).toHaveLength(0);
    const faults = await fetch(`${sim.url}/_sim/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ route: 'devices.*', status: 500, count: 2 }] }),
    });
    expect(await faults.json()).toMatchObject({ rules: [{ route: 'devices.*', status: 500, count: 2 }] });
    const badFaults = await fetch(`${sim.url}/_sim/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ status: 500 }] }),
    });
    expect(badFaults.status).toBe(400);
    const clock = (await (await fetch(`${sim.url}/_sim/clock`)).json()) as { nowMs: number };
    const advanced = (await (
      await fetch(`${sim.url}/_sim/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ advanceMs: 3_600_000 }),
      })
    ).json()) as { nowMs: number };
    expect(advanced.nowMs - clock.nowMs).toBeGreaterThanOrEqual(3_600_000);
    const world = (await (await fetch(`${sim.url}/_sim/world`)).json()) as {
      areas: { privateCloud: { systems: number }; workspaces: { workspaceId: string } };
    };
    expect(world.areas.privateCloud.systems).toBe(6);
    // The workspace id, which no operation lists, is told here and fetches the workspace.
    expect((await call('GET', `/workspaces/v1/workspaces/${world.areas.workspaces.workspaceId}`)).body).toMatchObject({
      id: world.areas.workspaces.workspaceId,
      workspaceType: 'MSP',
    });
    await call('POST', '/private-cloud-business/v1beta1/vm-provisioning-policies', { body: { name: 'temp' } });
    expect((await fetch(`${sim.url}/_sim/reset`, { method: 'POST' })).status).toBe(200);
    expect((await call('GET', '/private-cloud-business/v1beta1/vm-provisioning-policies')).body.total).toBe(3);
    expect(await (await fetch(`${sim.url}/_sim/violations`)).json()).toEqual({ checking: true, items: [] });
    expect((await fetch(`${sim.url}/_sim/outbox`)).status).toBe(200);
  });

  it('builds the same world from the same seed and another from another seed', async () => {
    const snapshot = async (seed: number) => {
      const t = await startTestSimulator({ seed });
      try {
        return JSON.stringify((await t.call('GET', `${SYSTEMS}?limit=100`)).body);
      } finally {
        await t.sim.close();
      }
    };
    expect(await snapshot(7)).toBe(await snapshot(7));
    expect(await snapshot(7)).not.toBe(await snapshot(8));
  });
});
