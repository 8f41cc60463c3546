/**
 * Faults: the rolling update (the bundled playbook, and the suite's smaller fixture) and the
 * report export against a simulator answering about 10% of requests 5xx, 5% 429, dropping 2%
 * of connections (writes' after the platform applied them), and revoking every token once in
 * the middle of the run. Each run must end correct, send no write twice where the first was
 * applied, and keep every retry inside its budget.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/engine/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { FIXTURES, leaksIn, startReliabilityHarness, writeOutcomes, type ReliabilityHarness } from './harness.js';

const FAULTS = join(FIXTURES, 'faults.yaml');
const ROLLING_UPDATE = join(FIXTURES, 'rolling-update.yaml');
const REGIONS = ['us-west', 'eu-west', 'eu-central', 'ap-northeast'];
/** The bundled playbooks' `defaults.retry.maxAttempts`. */
const BUNDLED_MAX_ATTEMPTS = 5;
/** The client's default `retry.maxAttempts` (waits and polls keep the client's retries). */
const CLIENT_MAX_ATTEMPTS = 5;
/**
 * Prechecks stay valid 30 simulated days: at the time scale the default 4 hours pass in 2.4
 * real seconds, and a busy machine would see the update refused for an expired precheck.
 */
const WORLD = { privateCloud: { systems: 20, precheckValidityMinutes: 30 * 24 * 60 } };

let harness: ReliabilityHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Revokes every token once, as soon as the request log holds `after` requests. */
function revokeTokensOnceAfter(sim: Simulator, after: number): { stop(): void; revoked(): boolean } {
  let revoked = false;
  const timer = setInterval(() => {
    if (sim.control.requests().length < after) return;
    sim.control.revokeTokens();
    revoked = true;
    clearInterval(timer);
  }, 2);
  return { stop: () => clearInterval(timer), revoked: () => revoked };
}

const failedSteps = (result: RunResult): string =>
  JSON.stringify(
    result.steps.filter((step) => step.status === 'failed').map((step) => ({ path: step.path, error: step.error })),
  );

/** Requests by what they got, to check the fault profile was really applied. */
function faultShares(sim: Simulator): {
  total: number;
  serverErrors: number;
  tooMany: number;
  dropped: number;
  unauthorized: number;
} {
  const log = sim.control.requests();
  return {
    total: log.length,
    serverErrors: log.filter((entry) => entry.status >= 500).length,
    tooMany: log.filter((entry) => entry.status === 429).length,
    dropped: log.filter((entry) => entry.dropped !== undefined).length,
    unauthorized: log.filter((entry) => entry.status === 401).length,
  };
}

/** Attempts per step path (the journal's `request.sending`) and the client's retries (its log lines), both within their budgets. */
async function expectRetriesWithinBudgets(
  h: ReliabilityHarness,
  runId: string,
  stepMaxAttempts: number,
): Promise<void> {
  const journal = await h.store.journal(runId);
  const attempts = new Map<string, number>();
  for (const { event } of journal) {
    if (event.type === 'request.sending')
      attempts.set(event.path, Math.max(attempts.get(event.path) ?? 0, event.attempt));
  }
  const overBudget = [...attempts].filter(([, count]) => count > stepMaxAttempts);
  expect(overBudget, 'steps with more attempts than retry.maxAttempts').toEqual([]);
  // `retry.scheduled` names the attempt it schedules: at most the last one allowed.
  const scheduled = journal.flatMap(({ event }) => (event.type === 'retry.scheduled' ? [event] : []));
  expect(scheduled.filter((event) => event.attempt > stepMaxAttempts)).toEqual([]);
  // The client logs the attempt that failed; each delay is the server's hint (simulated seconds
  // at the time scale: a few ms) or the backoff capped at the harness's 50 ms.
  const clientRetries = h.lines().filter((line) => line.msg === 'platform call failed; retrying');
  expect(
    clientRetries.filter((line) => !(typeof line.attempt === 'number' && line.attempt < CLIENT_MAX_ATTEMPTS)),
  ).toEqual([]);
  expect(clientRetries.filter((line) => !(typeof line.delayMs === 'number' && line.delayMs <= 50))).toEqual([]);
}

/** The faults reached every kind of request, in about the shares set, and the client took a new token after the revocation. */
function expectFaultsHappened(h: ReliabilityHarness, minimumRequests: number): void {
  const shares = faultShares(h.sim);
  expect(shares.total).toBeGreaterThan(minimumRequests);
  expect(shares.serverErrors / shares.total).toBeGreaterThan(0.02);
  expect(shares.serverErrors / shares.total).toBeLessThan(0.25);
  expect(shares.tooMany).toBeGreaterThan(0);
  expect(shares.dropped).toBeGreaterThan(0);
  expect(shares.unauthorized).toBeGreaterThan(0);
  const log = h.sim.control.requests();
  const firstRefused = log.findIndex((entry) => entry.status === 401);
  expect(
    log.slice(firstRefused).some((entry) => entry.operationId === 'auth.createToken' && entry.status === 200),
  ).toBe(true);
}

/**
 * No write sent twice: each address written once by the platform's account (one precheck, one
 * update per system and group; resumes once per failed update), nothing sent after that; and
 * the writes did meet faults, some of which left their outcome unknown and were reconciled.
 */
function expectEachWriteAppliedOnce(h: ReliabilityHarness): void {
  const writes = writeOutcomes(h.sim.control.requests());
  expect(
    [...writes.values()].flatMap((outcome) => outcome.sentAgain),
    'writes sent again after being applied',
  ).toEqual([]);
  expect(
    [...writes]
      .filter(([, outcome]) => outcome.applied !== 1)
      .map(([address, outcome]) => `${address}: applied ${outcome.applied}`),
  ).toEqual([]);
  expect(
    [...writes.values()].some((outcome) => outcome.notApplied > 0),
    'no write was refused: the faults did not reach the writes',
  ).toBe(true);
  // The precheck's 500 always comes (a status is injected before the handler); a drop after the
  // handler only when the handler accepted the write (its rule's draw may go to a refused one).
  const decisions = h
    .lines()
    .filter((line) => String(line.msg).includes('of unknown outcome reconciled'))
    .map((line) => line.decision);
  const droppedAfter = h.sim.control.requests().filter((entry) => entry.dropped === 'after' && entry.method !== 'GET');
  expect(decisions).toContain('send');
  expect(decisions.filter((decision) => decision === 'attach')).toHaveLength(droppedAfter.length);
}

/** No online system is left with an update path to `version`, checked through the platform. */
async function expectNoOnlineSystemLeft(h: ReliabilityHarness, version: string): Promise<void> {
  for (const region of REGIONS) {
    const catalogs = await h.client.invoke(
      'privateCloud.listSoftwareCatalogs',
      { filter: `version eq '${version}'` },
      { region },
    );
    const left =
      (catalogs.body as { items: Array<{ systemsWithUpdatePath: Array<{ id: string; name: string }> }> }).items[0]
        ?.systemsWithUpdatePath ?? [];
    for (const system of left) {
      const state = (
        (await h.client.invoke('privateCloud.getSystem', { id: system.id }, { region })).body as { state: string }
      ).state;
      expect(state, `${system.name} still has an update path to ${version}`).not.toBe('ONLINE');
    }
  }
}

describe('under 10% 5xx, 5% 429, 2% dropped connections and one token revocation', () => {
  it('the bundled rolling-cluster-update ends with every online cluster on the catalog, each write applied once, retries within budget', async () => {
    // Eight systems, all at once: the playbook polls no faster than the client's default of once
    // a second, so each system takes a few real seconds whatever the time scale.
    const h = (harness = await startReliabilityHarness({
      simulator: { faults: FAULTS, world: { privateCloud: { ...WORLD.privateCloud, systems: 8 } } },
    }));
    const revocation = revokeTokensOnceAfter(h.sim, 40);
    // All clusters of a system in one precheck and one update, so that each write has an address
    // of its own in the request log.
    const result = await h
      .run('rolling-cluster-update', { catalogVersion: '2.4.0', clusterByCluster: false, maxParallelSystems: 8 })
      .finally(() => revocation.stop());
    expect(result.status, failedSteps(result)).toBe('succeeded');
    expect(revocation.revoked()).toBe(true);

    const outputs = result.outputs as {
      systems: { succeeded: number; failed: number };
      clusters: Array<{ system: string; cluster: string; status: string; after: string }>;
    };
    expect(outputs.systems.failed).toBe(0);
    const updated = outputs.clusters.filter((row) => row.status === 'succeeded');
    expect(updated.length).toBeGreaterThanOrEqual(4);
    expect(
      updated.filter((row) => row.after !== '2.4.0').map((row) => `${row.system} ${row.cluster}: ${row.after}`),
    ).toEqual([]);
    await expectNoOnlineSystemLeft(h, '2.4.0');
    // The pinned failure of the default world was resumed, once.
    expect(result.steps.filter((step) => step.path.endsWith('.resume') && step.status === 'succeeded')).toHaveLength(1);

    expectFaultsHappened(h, 40);
    expectEachWriteAppliedOnce(h);
    await expectRetriesWithinBudgets(h, result.runId, BUNDLED_MAX_ATTEMPTS);
    expect(h.sim.control.violations()).toEqual([]);
    expect(leaksIn(`${h.logText()}\n${h.storeText()}`, [h.clientSecret])).toEqual([]);
  });

  it("the suite's rolling update ends with every online system on the catalog, each write applied once, retries within budget", async () => {
    const h = (harness = await startReliabilityHarness({ simulator: { faults: FAULTS, world: WORLD } }));
    const revocation = revokeTokensOnceAfter(h.sim, 40);
    const result = await h.run(ROLLING_UPDATE).finally(() => revocation.stop());
    expect(result.status, failedSteps(result)).toBe('succeeded');
    expect(revocation.revoked()).toBe(true);

    const updated = (result.outputs as { updated: string[] }).updated;
    expect(updated.length).toBeGreaterThanOrEqual(6);
    await expectNoOnlineSystemLeft(h, '2.4.0');
    expect(result.steps.filter((step) => step.path.endsWith('.apply.resume')).map((step) => step.status)).toEqual([
      'succeeded',
    ]);

    expectFaultsHappened(h, 80);
    expectEachWriteAppliedOnce(h);
    // The fixture's `defaults.retry.maxAttempts`.
    await expectRetriesWithinBudgets(h, result.runId, 4);
    expect(h.sim.control.violations()).toEqual([]);
    expect(leaksIn(`${h.logText()}\n${h.storeText()}`, [h.clientSecret])).toEqual([]);
  });

  it('report exports: each e-mailed once, or stopped with OUTCOME_UNKNOWN where the answer was lost; no export posted twice', async () => {
    // Reports stay downloadable 30 simulated days (the default day passes in 14 real seconds).
    const h = (harness = await startReliabilityHarness({
      simulator: { faults: FAULTS, world: { reporting: { exportExpiryMinutes: 30 * 24 * 60 } } },
    }));
    const revocation = revokeTokensOnceAfter(h.sim, 12);
    const names = Array.from({ length: 8 }, (_, index) => `faulty night ${index + 1}`);
    const results = await Promise.all(
      names.map((name) =>
        h.run('nightly-report-export', {
          name,
          subject: `report ${name}`,
          recipients: [`ops${name.at(-1)}@example.com`],
        }),
      ),
    ).finally(() => revocation.stop());
    expect(revocation.revoked()).toBe(true);

    const exports = h.sim.control.requests({ operationId: 'reporting.createReportExport' });
    const lost = exports.filter((entry) => entry.status === 500 || entry.dropped === 'after').length;
    const stopped = results.filter((result) => result.status !== 'succeeded');
    // A run whose export got a 500 or no answer cannot tell whether the platform will e-mail
    // the report (no reconciliation can): it stops rather than risk a second e-mail.
    expect(
      stopped
        .map((result) => result.steps.find((step) => step.status === 'failed'))
        .map((step) => [step?.path, step?.error?.code]),
    ).toEqual(stopped.map(() => ['export', 'OUTCOME_UNKNOWN']));
    expect(stopped.length).toBe(lost);
    expect(
      stopped.length,
      'every export met a lost answer: the runs that end with their e-mail were not checked',
    ).toBeLessThan(names.length);

    for (const [index, result] of results.entries()) {
      if (result.status !== 'succeeded') continue;
      const name = names[index] ?? '';
      const mails = h.sim.control.outbox().filter((mail) => mail.subject === `report ${name}`);
      expect(mails, `e-mails of ${name}`).toHaveLength(1);
      expect(mails[0]?.links).toContain((result.outputs as { downloadUrl: string }).downloadUrl);
      const status = await h.client.invoke('reporting.getReportStatus', {
        id: (result.outputs as { statusId: string }).statusId,
      });
      expect((status.body as { status: string }).status).toBe('COMPLETED');
    }
    // Each export reached the platform at most once: one applied per run, none after a lost answer.
    const applied = exports.filter(
      (entry) =>
        entry.dropped === 'after' || (entry.dropped === undefined && entry.status >= 200 && entry.status < 300),
    );
    expect(applied.length).toBe(
      results.filter((result) => result.status === 'succeeded').length +
        exports.filter((entry) => entry.dropped === 'after').length,
    );
    expect(
      h.sim.control
        .outbox()
        .filter((mail, index, all) => all.findIndex((other) => other.subject === mail.subject) !== index),
    ).toEqual([]);

    const shares = faultShares(h.sim);
    expect(shares.serverErrors + shares.tooMany + shares.dropped).toBeGreaterThan(0);
    expect(shares.unauthorized).toBeGreaterThan(0);
    for (const result of results) await expectRetriesWithinBudgets(h, result.runId, BUNDLED_MAX_ATTEMPTS);
    expect(h.sim.control.violations()).toEqual([]);
  });
});

describe('a write whose outcome is unknown is reconciled in the run, not blindly sent again', () => {
  /** The log lines saying how the run reconciled a write, as `decision` per operation. */
  const reconciled = (h: ReliabilityHarness): Array<[unknown, unknown]> =>
    h
      .lines()
      .filter((line) => String(line.msg).includes('of unknown outcome reconciled'))
      .map((line) => [line.operationId, line.decision]);

  it('an update dropped after the platform accepted it: the run attaches to its operation and ends succeeded, one update POST', async () => {
    const h = (harness = await startReliabilityHarness({
      simulator: { faults: { rules: [{ route: 'privateCloud.runSoftwareUpdate', count: 1, afterAccept: true }] } },
    }));
    const result = await h.run(ROLLING_UPDATE);
    expect(result.status, failedSteps(result)).toBe('succeeded');
    const updates = h.sim.control.requests({ operationId: 'privateCloud.runSoftwareUpdate' });
    const dropped = updates.filter((entry) => entry.dropped === 'after');
    expect(dropped).toHaveLength(1);
    expect(
      updates.filter((entry) => entry.path === dropped[0]?.path),
      'the dropped update was posted again',
    ).toHaveLength(1);
    expect(reconciled(h)).toEqual([['privateCloud.runSoftwareUpdate', 'attach']]);
    // Journaled: the failure of unknown outcome, then the operation the reconciliation found, followed to its end.
    const events = (await h.store.journal(result.runId))
      .map(({ event }) => event)
      .filter((event) => 'path' in event && event.path.endsWith('.apply'));
    const unknown = events.findIndex((event) => event.type === 'request.failed' && event.outcomeUnknown);
    expect(unknown).toBeGreaterThanOrEqual(0);
    expect(events.slice(unknown + 1).map((event) => event.type)).toEqual(
      expect.arrayContaining(['operation.progress', 'operation.finished', 'step.finished']),
    );
    // Every online system is on the catalog: the operation attached to really was the update.
    await expectNoOnlineSystemLeft(h, '2.4.0');
  });

  it.each([
    ['dropped before the platform saw it', { drop: 1 }, 'send', 2],
    ['answered 500 before being applied', { status: 500 }, 'send', 2],
    ['dropped after the platform applied it', { afterAccept: true }, 'attach', 1],
  ])(
    'prechecks %s: reconciled, the run ends succeeded, one precheck applied',
    async (_label, fault, decision, posts) => {
      const h = (harness = await startReliabilityHarness({
        simulator: { faults: { rules: [{ route: 'privateCloud.runSoftwarePrechecks', count: 1, ...fault }] } },
      }));
      const result = await h.run(ROLLING_UPDATE);
      expect(result.status, failedSteps(result)).toBe('succeeded');
      const prechecks = h.sim.control.requests({ operationId: 'privateCloud.runSoftwarePrechecks' });
      const first = prechecks[0];
      expect(prechecks.filter((entry) => entry.path === first?.path)).toHaveLength(posts);
      expect(reconciled(h)).toEqual([['privateCloud.runSoftwarePrechecks', decision]]);
    },
  );

  it('a report export dropped after it was accepted cannot be told apart from another: sent once, the run stops with OUTCOME_UNKNOWN', async () => {
    const h = (harness = await startReliabilityHarness({
      simulator: { faults: { rules: [{ route: 'reporting.createReportExport', count: 1, afterAccept: true }] } },
    }));
    const result = await h.run('nightly-report-export', {
      name: 'lost answer',
      subject: 'lost answer',
      recipients: ['ops@example.com'],
    });
    expect(result.status).toBe('failed');
    expect(h.sim.control.requests({ operationId: 'reporting.createReportExport' })).toHaveLength(1);
    const failed = result.steps.find((step) => step.path === 'export');
    expect(failed?.error).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    expect(failed?.error?.message).toMatch(
      /got no answer that tells whether it was applied .* resume with --confirm-unknown/,
    );
    expect(reconciled(h)).toEqual([['reporting.createReportExport', 'unknown']]);
  });

  it.each([
    ['a step', false, 'export', 'OUTCOME_UNKNOWN'],
    ['a block retried as a whole', true, 'attempt', 'STEPS_FAILED'],
  ])(
    'under `retry.on: [any]` on %s, an export of unknown outcome is not sent again',
    async (_label, inBlock, failedPath, code) => {
      const h = (harness = await startReliabilityHarness({
        simulator: { faults: { rules: [{ route: 'reporting.createReportExport', count: 1, afterAccept: true }] } },
      }));
      const result = await h.run(join(FIXTURES, 'export-retry-any.yaml'), { inBlock });
      expect(result.status).toBe('failed');
      expect(h.sim.control.requests({ operationId: 'reporting.createReportExport' })).toHaveLength(1);
      const failed = result.steps.find((step) => step.path === failedPath);
      expect(failed).toMatchObject({ attempts: 1, error: { code } });
      expect(failed?.error?.message).toMatch(/outcome cannot be told/);
      const journal = await h.store.journal(result.runId);
      expect(journal.filter(({ event }) => event.type === 'retry.scheduled')).toEqual([]);
    },
  );
});
