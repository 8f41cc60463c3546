import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { inputSchemaOf, loadPlatformDescription, type OperationDescriptor } from './description.js';

// ajv-formats is CommonJS: under NodeNext the default import is the module, whose `default` is the plugin.
const addFormats = formatsModule.default;

const description = loadPlatformDescription();
const op = (id: string): OperationDescriptor => {
  const found = description.byId.get(id);
  if (!found) throw new Error(`no operation ${id}`);
  return found;
};

function compileInput(id: string) {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  return ajv.compile(inputSchemaOf(op(id)));
}

/** Every node of a JSON value, with its JSON pointer. */
function* walk(value: unknown, pointer = ''): Generator<[string, unknown]> {
  yield [pointer, value];
  if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) yield* walk(child, `${pointer}/${key}`);
  }
}

describe('loadPlatformDescription', () => {
  it('lists the operations in document order, each reachable by id', () => {
    expect(description.operations[0]?.id).toBe('auth.createToken');
    expect(description.operations.at(-1)?.id).toBe('reportingV1alpha1.getAsyncOperation');
    expect(description.byId.size).toBe(description.operations.length);
    for (const o of description.operations) expect(description.byId.get(o.id)).toBe(o);
  });

  it('caches: a second call returns the same frozen object', () => {
    expect(loadPlatformDescription()).toBe(description);
    expect(Object.isFrozen(op('privateCloud.getSystem').responses)).toBe(true);
  });

  it('describes a regional read with its address, limits and permission', () => {
    const getSystem = op('privateCloud.getSystem');
    expect(getSystem).toMatchObject({
      area: 'privateCloud',
      method: 'GET',
      path: '/private-cloud-business/v1beta1/systems/{id}',
      base: 'regional',
      regions: ['us-west', 'eu-west', 'eu-central', 'ap-northeast'],
      rateLimit: { group: 'privateCloud' },
      permission: { level: 'view' },
      deprecated: false,
      isWrite: false,
      successStatus: 200,
    });
    expect(getSystem.pathParams.map((p) => p.name)).toEqual(['id']);
    // The platform's `select`, and the reference's `filter` kept beside it.
    expect(getSystem.queryParams.map((p) => p.name)).toEqual(['select', 'filter']);
    expect(getSystem.responses['200']?.contentType).toBe('application/json');
    expect(op('consumptionAnalytics.getReport').regions).toEqual(['us-west', 'ap-northeast', 'eu-central']);
  });

  it('inlines every $ref, in operations and in components.schemas', () => {
    for (const [pointer, node] of walk({ operations: description.operations, schemas: description.schemas })) {
      if (typeof node === 'object' && node !== null && '$ref' in node) throw new Error(`$ref left at ${pointer}`);
    }
    const system = description.schemas.System as { allOf: Array<{ properties?: Record<string, unknown> }> };
    expect(system.allOf[1]?.properties?.state).toMatchObject({ enum: expect.arrayContaining(['OFFLINE', 'ONLINE']) });
  });

  it('has well-formed schemas: every property is a schema object with a plain name', () => {
    // Catches YAML slips such as an unquoted comma splitting a flow-mapping description.
    for (const [pointer, node] of walk(description.schemas)) {
      if (!pointer.endsWith('/properties') || typeof node !== 'object' || node === null) continue;
      for (const [name, schema] of Object.entries(node)) {
        expect(name, `${pointer}/${name}`).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
        expect(typeof schema === 'object' && schema !== null, `${pointer}/${name}`).toBe(true);
      }
    }
  });

  it("holds a server's powerState to the published values (ON, RESET, UNKNOWN); the health summary's is free text", () => {
    const ajv = new Ajv2020({ strict: true });
    addFormats(ajv);
    const validServer = ajv.compile(op('privateCloud.getServer').responses['200']?.schema ?? {});
    const record = {
      id: 's-1',
      type: 'server',
      generation: 1,
      createdAt: '2025-01-01T00:00:00Z',
      updatedAt: '2025-01-01T00:00:00Z',
      resourceUri: '/s-1',
      customerId: 'c',
    };
    const server = (powerState: string, healthPowerState = 'ON') => ({
      ...record,
      systemId: 'sys-1',
      powerState,
      health: { powerState: healthPowerState },
    });
    expect(['ON', 'RESET', 'UNKNOWN'].map((state) => validServer(server(state)))).toEqual([true, true, true]);
    expect(validServer(server('OFF'))).toBe(false);
    expect(validServer.errors?.[0]).toMatchObject({ instancePath: '/powerState', keyword: 'enum' });
    expect(validServer(server('ON', ''))).toBe(true);
  });

  it('compiles every component and response schema under ajv strict mode', () => {
    const ajv = new Ajv2020({ strict: true });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(description.schemas))
      expect(() => ajv.compile(schema), name).not.toThrow();
    for (const o of description.operations) {
      for (const [status, response] of Object.entries(o.responses)) {
        if (response.schema) expect(() => ajv.compile(response.schema!), `${o.id} ${status}`).not.toThrow();
      }
    }
    // Compiling every schema (the published enums are long) takes seconds on a loaded machine.
  }, 30_000);

  it("marks writes: every non-GET but the token request and the report runs, plus the reference's version refresh GET", () => {
    const writes = description.operations.filter((o) => o.isWrite).map((o) => o.id);
    expect(writes).toContain('privateCloud.refreshSoftwareVersionsByGet');
    expect(writes).not.toContain('auth.createToken');
    // Running a consumption report (v2 `execute`) is a POST that changes nothing: safe to repeat.
    const reads = [
      'auth.createToken',
      'privateCloud.refreshSoftwareVersionsByGet',
      'consumptionAnalytics.executeReportV2',
      'consumptionAnalytics.executeReportCsvV2',
      'consumptionAnalytics.executeReportDefinitionV2',
      'consumptionAnalytics.executeReportDefinitionCsvV2',
    ];
    expect(writes.filter((id) => reads.includes(id))).toEqual(['privateCloud.refreshSoftwareVersionsByGet']);
    for (const o of description.operations) {
      if (reads.includes(o.id)) continue;
      expect(o.isWrite, o.id).toBe(o.method !== 'GET');
    }
  });

  it('gives every 202 an async flavour and a Location header, and every async flavour a 202', () => {
    for (const o of description.operations) {
      expect(o.async !== undefined, o.id).toBe(o.successStatus === 202);
      if (o.successStatus === 202) expect(o.responses['202']?.headers, o.id).toContain('Location');
    }
    expect(op('privateCloud.runSoftwareUpdate').async).toBe('dataServices');
    expect(op('devices.addDevices').async).toBe('devices');
    expect(op('subscriptions.updateSubscriptions').async).toBe('subscriptions');
    expect(op('reportingV1alpha1.createReportExport').async).toBe('reporting');
  });

  it('answers the success statuses of the facts page', () => {
    expect(op('privateCloud.createProvisioningPolicy').successStatus).toBe(200);
    expect(op('workspaces.createTenant').successStatus).toBe(201);
    expect(op('users.inviteUser').responses['201']?.headers).toEqual(['Location']);
    expect(op('users.deleteUser').successStatus).toBe(204);
    expect(op('workspaces.deleteTenant').responses['204']).toEqual({ headers: [] });
  });

  it('keeps x-fleetbook-paging in step with the limit parameter of each list', () => {
    const paged = description.operations.filter((o) => o.paging);
    expect(paged.length).toBeGreaterThan(10);
    for (const o of paged) {
      const limit = o.queryParams.find((p) => p.name === 'limit');
      if (o.paging?.envelope === false) {
        expect(limit, o.id).toBeUndefined();
        expect(o.responses[String(o.successStatus)]?.schema?.type, o.id).toBe('array');
        continue;
      }
      expect(limit?.schema, o.id).toMatchObject({
        default: o.paging?.default,
        minimum: o.paging?.min,
        maximum: o.paging?.max,
      });
      expect(
        o.queryParams.map((p) => p.name),
        o.id,
      ).toContain('offset');
    }
    expect(op('devices.listDevices').paging).toEqual({ default: 2000, min: 1, max: 2000, envelope: true });
    expect(op('consumptionAnalytics.listReports').paging?.envelope).toBe(false);
  });

  it('carries the published per-minute limits and leaves the others without one', () => {
    expect(op('devices.listDevices').rateLimit).toEqual({ group: 'devices.list', perMinute: 160 });
    expect(op('subscriptions.addSubscriptions').rateLimit).toEqual({ group: 'subscriptions.add', perMinute: 4 });
    expect(op('users.listUsers').rateLimit).toEqual({ group: 'users.list', perMinute: 300 });
    expect(op('users.getUser').rateLimit).toEqual({ group: 'users' });
  });

  it('marks the v1alpha1 reporting operations deprecated, and only those', () => {
    for (const o of description.operations) expect(o.deprecated, o.id).toBe(o.area === 'reportingV1alpha1');
  });

  it('describes the request bodies with their content types', () => {
    expect(op('devices.updateDevices').requestBody?.contentType).toBe('application/merge-patch+json');
    expect(op('auth.createToken').requestBody?.contentType).toBe('application/x-www-form-urlencoded');
    expect(op('privateCloud.resumeSoftwareUpdate').requestBody).toBeUndefined();
    expect(op('consumptionAnalytics.downloadReportContents').responses['200']).toMatchObject({
      contentType: 'text/csv',
      headers: ['Content-Disposition'],
    });
  });
});

describe('inputSchemaOf', () => {
  it('takes path and query parameters by name, plus body', () => {
    const validate = compileInput('privateCloud.runSoftwarePrechecks');
    expect(validate({ id: 'sys-1', body: { catalogVersion: '2.4.0' } })).toBe(true);
    expect(validate({ id: 'sys-1', body: { catalogVersion: '2.4.0', hypervisorClusterIds: ['c1'] } })).toBe(true);
  });

  it('refuses a misspelt body field, a missing required body and an unknown parameter', () => {
    const validate = compileInput('privateCloud.runSoftwarePrechecks');
    expect(validate({ id: 'sys-1', body: { catalogVersoin: '2.4.0' } })).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain('additionalProperties');
    expect(validate({ id: 'sys-1' })).toBe(false);
    expect(validate({ id: 'sys-1', body: { catalogVersion: '2.4.0' }, limit: 10 })).toBe(false);
    expect(validate({ id: 'sys-1', body: { catalogVersion: '2.4.0', hypervisorClusterIds: [] } })).toBe(false);
  });

  it('checks query ranges and arrays', () => {
    const list = compileInput('privateCloud.listSystems');
    expect(list({ filter: "state eq 'ONLINE'", offset: 0, limit: 100 })).toBe(true);
    expect(list({ limit: 5 })).toBe(false);
    const patch = compileInput('devices.updateDevices');
    const ids = ['6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f', '7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d'];
    expect(
      patch({
        id: ids,
        'dry-run': true,
        body: { application: { id: '2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a2b3c4d' }, region: 'eu-central' },
      }),
    ).toBe(true);
    expect(patch({ id: ['not-a-uuid'], body: { subscription: [] } })).toBe(false);
    expect(patch({ id: [ids[0], ids[0]], body: {} })).toBe(false);
    expect(patch({ id: ids, body: { application: {} } })).toBe(false);
  });

  it('compiles under ajv strict mode for every operation', () => {
    const ajv = new Ajv2020({ strict: true });
    addFormats(ajv);
    for (const o of description.operations) expect(() => ajv.compile(inputSchemaOf(o)), o.id).not.toThrow();
    expect(inputSchemaOf(op('privateCloud.getSystem'))).toBe(inputSchemaOf(op('privateCloud.getSystem')));
  });
});

describe('x-fleetbook-reads: every write names the read that shows what it changes', () => {
  /** Whether `path` (`id`, `body.catalogVersion`) is an input the write's schema has. */
  const inputOf = (write: OperationDescriptor, path: string): boolean => {
    const [first, ...rest] = path.split('.');
    let schema = (inputSchemaOf(write).properties as Record<string, Record<string, unknown>>)[first ?? ''];
    for (const name of rest)
      schema = (schema?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];
    return schema !== undefined;
  };
  const writes = description.operations.filter((candidate) => candidate.isWrite && candidate.base !== 'auth');

  it.each(writes.map((write) => [write.id, write] as const))('%s', (_id, write) => {
    const reads = write.reads!;
    expect(reads, 'x-fleetbook-reads').toBeDefined();
    const read = op(reads.operation);
    expect(read.method).toBe('GET');
    expect(read.isWrite).toBe(false);
    const readInputs = Object.keys(inputSchemaOf(read).properties as object);
    for (const [name, source] of Object.entries(reads.with)) {
      expect(readInputs, `${reads.operation} takes ${name}`).toContain(name);
      expect(inputOf(write, source), `${write.id} has input ${source}`).toBe(true);
    }
    // A read by id reads the resource the write names: each required path parameter of the read is given.
    for (const param of read.pathParams) expect(Object.keys(reads.with)).toContain(param.name);
    if (reads.pick) expect(inputOf(write, reads.pick.equals)).toBe(true);
    if (reads.effect) {
      expect(inputOf(write, reads.effect.to)).toBe(true);
      if (reads.effect.match) expect(inputOf(write, reads.effect.match.in)).toBe(true);
    }
    // A create has nothing to read yet; an update, a delete or an action reads one resource.
    if (reads.change !== 'create') expect(Object.keys(reads.with).length + (reads.pick ? 1 : 0)).toBeGreaterThan(0);
  });

  it('covers all 27 writes of the description', () => {
    expect(writes).toHaveLength(27);
  });
});
