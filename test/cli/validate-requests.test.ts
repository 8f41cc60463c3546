/**
 * `fleetbook validate` holds each `call`'s `with` to its operation's request schema where the
 * value is computed (a type known from an expression, an object a constructor builds) and
 * says what to write when the input is missing; `fleetbook run` refuses the same playbook
 * before any request.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { runCli } from '../support/cli.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../playbooks/invalid/${name}.yaml`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-validate-requests-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleetbook validate: requests typed against the operation', () => {
  it('refuses the storage devices built by a constructor without partNumber, at the constructor', async () => {
    const result = await runCli(['validate', fixture('requests-device-onboarding')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(
      "requests-device-onboarding.yaml:75:94  error  with.body.storage[] is missing the required field 'partNumber' (it has serialNumber, tags): devices.addDevices refuses this request",
    );
    expect(result.stdout).toContain(
      '`fleetbook actions devices.addDevices` describes its input)  (INVALID_CALL_INPUT)',
    );
    // The caret is under the `{` of `.{ 'serialNumber': ..., 'tags': ... }`.
    const lines = result.stdout.split('\n');
    const caret = lines[lines.findIndex((line) => line.startsWith('> 75 |')) + 1] ?? '';
    const source = lines.find((line) => line.startsWith('> 75 |')) ?? '';
    expect(source[caret.indexOf('^')]).toBe('{');
    expect(result.stdout).toContain('1 error(s), 0 warning(s) in 1 file(s)');
  });

  it.each([
    ['10:17', 'with.id must be string, and this value is integer: privateCloud.getSystem refuses this request'],
    [
      '20:30',
      "with.body.definition.queryElements has the field 'sortBy', which is not one of columns, filterCriteria: reporting.createReportExport refuses this request",
    ],
    [
      '21:41',
      'with.body.definition.enrollment.delivery.format must be one of "CSV", "TXT", "PDF", "EXCEL", and this value is "DOCX"',
    ],
    ['28:11', 'with.id takes at most 5 items, and this list has at least 6: subscriptions.updateSubscriptions'],
  ])('refuses a computed value at %s: %s', async (at, what) => {
    const result = await runCli(['validate', fixture('requests-computed-values')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`requests-computed-values.yaml:${at}  error  ${what}`);
  });

  it('refuses a literal list longer than the operation takes (5 ids a request)', async () => {
    const result = await runCli(['validate', fixture('requests-computed-values')]);
    expect(result.stdout).toContain(
      'requests-computed-values.yaml:34:9  error  steps[3].with.id takes at most 5 items, and this list has 6  (SCHEMA)',
    );
    expect(result.stdout).toContain('5 error(s), 0 warning(s) in 1 file(s)');
  });

  it('says what to write when `with` or a required field of it is missing', async () => {
    const result = await runCli(['validate', fixture('requests-missing-with')]);
    expect(result.code).toBe(2);
    const help =
      'reporting.listReportExportsMetadata requires filter (string), select (string), sort (string); for example ' +
      '`with: { filter: "kind eq \'REPORT.EXPORTS.METADATA\'", select: "type,name,columns,filterCriteria", sort: "type asc" }`. ' +
      '`fleetbook actions reporting.listReportExportsMetadata` describes every field  (MISSING_FIELD)';
    expect(result.stdout).toContain(
      `requests-missing-with.yaml:4:5  error  steps[0] is missing the required field 'with': ${help}`,
    );
    expect(result.stdout).toContain(
      `requests-missing-with.yaml:9:11  error  steps[1].with is missing the required field 'sort': ${help}`,
    );
    // The example it gives is a `with` the operation takes.
    const file = join(dir, 'metadata.yaml');
    writeFileSync(
      file,
      'name: metadata\nsteps:\n  - id: metadata\n    call: reporting.listReportExportsMetadata\n' +
        '    with: { filter: "kind eq \'REPORT.EXPORTS.METADATA\'", select: "type,name,columns,filterCriteria", sort: "type asc" }\n' +
        'outputs:\n  types: ${{ steps.metadata.outputs.body.items.type }}\n',
    );
    const ran = await runCli(['run', file, '--target', 'simulator', '--json'], {
      env: { FLEETBOOK_HOME: join(dir, 'home') },
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('"UID_DEVICE_INVENTORY"');
  });
});

describe('fleetbook validate: silent where the value may fit', () => {
  it('accepts a constructor key whose value may be undefined (left out when it is)', async () => {
    const file = join(dir, 'maybe-undefined.yaml');
    writeFileSync(
      file,
      `name: maybe-undefined
inputs:
  devices:
    type: array
    items: { type: object, properties: { serialNumber: { type: string }, partNumber: { type: string }, macAddress: { type: string } } }
steps:
  - call: devices.addDevices
    with:
      body:
        network: []
        storage: []
        # Devices without a MAC address: 'macAddress' is undefined, so the key is left out.
        compute: "\${{ [inputs.devices[$not($exists(macAddress))].{ 'serialNumber': serialNumber, 'partNumber': partNumber, 'macAddress': macAddress }] }}"
`,
    );
    const result = await runCli(['validate', file]);
    expect(result.stdout).toContain('1 playbook(s) valid');
    expect(result.code).toBe(0);
  });
});

describe('fleetbook run: the same refusal before any request', () => {
  it('adds no device when the storage devices lack partNumber', async () => {
    const sim = await startSimulator({ port: 0, timeScale: 6000 });
    try {
      const inputs = join(dir, 'devices.yaml');
      writeFileSync(
        inputs,
        'devices:\n' +
          Array.from({ length: 6 }, (_, i) =>
            i % 2 === 0
              ? `  - { serialNumber: NP00000${i}, partNumber: P-1, category: STORAGE }\n`
              : `  - { serialNumber: NP00000${i}, partNumber: P-2 }\n`,
          ).join(''),
      );
      const env = {
        FLEETBOOK_HOME: join(dir, 'home-run'),
        FLEETBOOK_CLIENT_ID: 'sim-admin',
        FLEETBOOK_CLIENT_SECRET: 'sim-admin-secret',
        FLEETBOOK_AUTH_URL: sim.authUrl,
        FLEETBOOK_BASE_URL: sim.baseUrl,
        FLEETBOOK_REGIONAL_URL: sim.regionalUrl,
        FLEETBOOK_REGION: 'eu-west',
      };
      const result = await runCli(['run', fixture('requests-device-onboarding'), '--inputs', inputs], { env });
      expect(result.code).toBe(2);
      expect(`${result.stdout}${result.stderr}`).toContain('INVALID_CALL_INPUT');
      expect(sim.control.requests({ operationId: 'devices.addDevices' })).toEqual([]);
      expect(sim.control.requests({})).toEqual([]);
    } finally {
      await sim.close();
    }
  });
});
