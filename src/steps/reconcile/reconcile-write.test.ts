import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, type PlatformClient } from '../../api/index.js';
import { loadPlatformDescription } from '../../openapi/description.js';
import { reconcileWrite, valuesAt } from './reconcile-write.js';
import { reconciliations } from './reconciliations.js';

/** A client that answers the reads reconciliation makes: one body per operation id, list items paged once. */
function fakeClient(bodies: Record<string, unknown>, calls: string[] = []): PlatformClient {
  return {
    invoke: async (operationId: string, input: unknown) => {
      calls.push(`${operationId} ${JSON.stringify(input)}`);
      return { status: 200, headers: {}, body: bodies[operationId] };
    },
    paginate: async function* (operationId: string, input: unknown) {
      calls.push(`${operationId} ${JSON.stringify(input)}`);
      yield* (bodies[operationId] as unknown[]) ?? [];
    },
  } as unknown as PlatformClient;
}

const context = (client: PlatformClient, knownLocations: string[] = []) => ({
  client,
  signal: new AbortController().signal,
  knownLocations: new Set(knownLocations),
});
const update = {
  operationId: 'privateCloud.runSoftwareUpdate',
  input: { id: 's1', body: { catalogVersion: '2.4.0', hypervisorClusterIds: ['c1', 'c2'] } },
};
const location = '/data-services/v1beta1/async-operations/op-9';
/** A system whose clusters c1..c3 show these update statuses (the published `currentUpdateStatus`). */
const system = (statuses: Record<string, Record<string, unknown>>) => ({
  'privateCloud.getSystem': {
    id: 's1',
    softwareInfo: {
      hypervisorClusters: ['c1', 'c2', 'c3'].map((id) => ({
        id,
        currentUpdateStatus: statuses[id] ?? { state: 'UPDATE_AVAILABLE' },
      })),
    },
  },
});
const running = { state: 'UPDATE_IN_PROGRESS', catalogVersion: '2.4.0', taskUri: location };

describe('valuesAt', () => {
  it('follows a pointer, fanning out over arrays at *', () => {
    const input = { body: { compute: [{ serialNumber: 'A' }, { serialNumber: 'B' }], network: [] } };
    expect(valuesAt(input, '/body/compute/*/serialNumber')).toEqual(['A', 'B']);
    expect(valuesAt(input, '/body/network/*/serialNumber')).toEqual([]);
    expect(valuesAt(input, '/body/missing')).toEqual([]);
  });
});

describe('reconcileWrite', () => {
  it("attaches to the update the write's clusters show in their published update status", async () => {
    const client = fakeClient(system({ c1: running, c2: running }));
    expect(await reconcileWrite(update, context(client))).toEqual({
      decision: 'attach',
      location,
      state: 'UPDATE_IN_PROGRESS',
    });
    // No cluster ids: the write covered every cluster, which must all show the operation.
    const all = {
      operationId: 'privateCloud.runSoftwareUpdate',
      input: { id: 's1', body: { catalogVersion: '2.4.0' } },
    };
    expect(
      await reconcileWrite(all, context(fakeClient(system({ c1: running, c2: running, c3: running })))),
    ).toMatchObject({ decision: 'attach', location });
    expect(await reconcileWrite(all, context(fakeClient(system({ c1: running, c2: running }))))).toMatchObject({
      decision: 'send',
    });
  });

  it('sends when the clusters show a precheck, another catalog, other clusters, no task, or one the run already followed', async () => {
    const precheck = { ...running, state: 'PRECHECK_COMPLETE' };
    expect(await reconcileWrite(update, context(fakeClient(system({ c1: precheck, c2: precheck }))))).toMatchObject({
      decision: 'send',
      reason: expect.stringContaining('PRECHECK_COMPLETE'),
    });
    const other = { ...running, catalogVersion: '2.3.1' };
    expect(await reconcileWrite(update, context(fakeClient(system({ c1: other, c2: other }))))).toMatchObject({
      decision: 'send',
      reason: expect.stringContaining('2.3.1'),
    });
    expect(
      await reconcileWrite(update, context(fakeClient(system({ c1: running, c2: running, c3: running })))),
    ).toMatchObject({ decision: 'send', reason: expect.stringContaining('does not name') });
    expect(await reconcileWrite(update, context(fakeClient(system({}))))).toMatchObject({
      decision: 'send',
      reason: expect.stringContaining('no operation in common'),
    });
    expect(
      await reconcileWrite(update, context(fakeClient(system({ c1: running, c2: running })), [location])),
    ).toMatchObject({ decision: 'send' });
  });

  it('cannot tell from a system read without cluster update statuses', async () => {
    const bare = fakeClient({ 'privateCloud.getSystem': { id: 's1', softwareInfo: {} } });
    expect(await reconcileWrite(update, context(bare))).toMatchObject({ decision: 'unknown' });
  });

  it('finds created records by key: all there is done, none is send, some is unknown', async () => {
    const calls: string[] = [];
    const devices = { 'devices.listDevices': [{ serialNumber: 'A' }, { serialNumber: 'B' }] };
    const add = (serials: string[]) => ({
      operationId: 'devices.addDevices',
      input: { body: { network: [], storage: [], compute: serials.map((serialNumber) => ({ serialNumber })) } },
    });
    expect(await reconcileWrite(add(['A', 'B']), context(fakeClient(devices, calls)))).toMatchObject({
      decision: 'done',
      found: [{ serialNumber: 'A' }, { serialNumber: 'B' }],
    });
    expect(calls[0]).toBe(`devices.listDevices {"filter":"serialNumber eq 'A' or serialNumber eq 'B'"}`);
    expect(await reconcileWrite(add(['C']), context(fakeClient(devices)))).toMatchObject({ decision: 'send' });
    expect(await reconcileWrite(add(['A', 'C']), context(fakeClient(devices)))).toMatchObject({
      decision: 'unknown',
      reason: expect.stringContaining('C missing'),
    });
  });

  it('reads every page where the list has no filter, and quotes keys', async () => {
    const calls: string[] = [];
    const tenants = fakeClient({ 'workspaces.listTenants': [{ workspaceName: "O'Brien Ltd" }] }, calls);
    expect(
      await reconcileWrite(
        { operationId: 'workspaces.createTenant', input: { body: { workspaceName: "O'Brien Ltd" } } },
        context(tenants),
      ),
    ).toMatchObject({ decision: 'done' });
    expect(calls).toEqual(['workspaces.listTenants {}']);
    const calls2: string[] = [];
    await reconcileWrite(
      { operationId: 'users.inviteUser', input: { body: { email: "o'brien@example.com" } } },
      context(fakeClient({ 'users.listUsers': [] }, calls2)),
    );
    expect(calls2).toEqual([`users.listUsers {"filter":"username eq 'o''brien@example.com'"}`]);
  });

  it('cannot reconcile a report export, nor an operation without a declaration', async () => {
    expect(reconciliations['reporting.createReportExport']?.kind).toBe('cannot');
    expect(
      await reconcileWrite({ operationId: 'reporting.createReportExport', input: {} }, context(fakeClient({}))),
    ).toMatchObject({ decision: 'unknown' });
    expect(
      await reconcileWrite({ operationId: 'madeUp.createThing', input: {} }, context(fakeClient({}))),
    ).toMatchObject({ decision: 'unknown', reason: 'no reconciliation is declared for madeUp.createThing' });
  });

  it('sends a repeatable write again; a delete only while the read still finds the resource', async () => {
    expect(
      await reconcileWrite({ operationId: 'devices.updateDevices', input: {} }, context(fakeClient({}))),
    ).toMatchObject({ decision: 'send', reason: expect.stringContaining('PATCH') });
    const calls: string[] = [];
    expect(
      await reconcileWrite(
        { operationId: 'users.deleteUser', input: { id: 'u1' } },
        context(fakeClient({ 'users.getUser': { id: 'u1' } }, calls)),
      ),
    ).toMatchObject({ decision: 'send' });
    expect(calls).toEqual(['users.getUser {"id":"u1"}']);
    const gone = {
      invoke: async () => {
        throw new ApiError('not found', 'HTTP_404', { operationId: 'users.getUser', status: 404, retryable: false });
      },
    } as unknown as PlatformClient;
    expect(await reconcileWrite({ operationId: 'users.deleteUser', input: { id: 'u1' } }, context(gone))).toEqual({
      decision: 'done',
      found: [],
    });
  });
});

describe('reconciliations', () => {
  const writes = loadPlatformDescription()
    .operations.filter((operation) => operation.isWrite)
    .map((operation) => operation.id);

  it('declares every write operation of the platform description, and nothing else', () => {
    expect(writes.filter((id) => reconciliations[id] === undefined)).toEqual([]);
    expect(Object.keys(reconciliations).filter((id) => !writes.includes(id))).toEqual([]);
  });

  it('docs/resume.md names exactly the writes that cannot be reconciled', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'resume.md'), 'utf8');
    const section = doc.slice(
      doc.indexOf('## Writes that cannot be reconciled'),
      doc.indexOf('\n## ', doc.indexOf('## Writes that cannot be reconciled') + 1),
    );
    const named = [...section.matchAll(/^- `([\w.]+)`/gm)].map((match) => match[1]).sort();
    expect(named).toEqual(writes.filter((id) => reconciliations[id]?.kind === 'cannot').sort());
  });
});
