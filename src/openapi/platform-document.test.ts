import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildPlatformDescription, loadPlatformDescription } from './description.js';
import { readPlatformDocument, writePlatformDocumentJson, type PlatformDocumentFiles } from './platform-document.js';

const packageYaml = fileURLToPath(new URL('../../schemas/openapi/platform.yaml', import.meta.url));

describe('readPlatformDocument', () => {
  let dir: string;
  let files: PlatformDocumentFiles;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetbook-platform-'));
    files = { yamlPath: join(dir, 'platform.yaml'), jsonPath: join(dir, 'platform.json') };
    writeFileSync(files.yamlPath, readFileSync(packageYaml));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('parses the YAML when the build wrote no JSON (the sources under vitest)', () => {
    expect(readPlatformDocument(files).source).toBe('yaml');
  });

  it('reads the JSON the build wrote, which describes the platform exactly as the YAML does', () => {
    const fromYaml = readPlatformDocument(files);
    writePlatformDocumentJson(files);
    const fromJson = readPlatformDocument(files);
    expect(fromJson.source).toBe('json');
    expect(fromJson.document).toStrictEqual(fromYaml.document);
    const description = buildPlatformDescription(fromJson.document);
    expect(description).toStrictEqual(buildPlatformDescription(fromYaml.document));
    expect(description).toStrictEqual(loadPlatformDescription());
  });

  it('ignores a JSON made of another YAML text: an edit without a rebuild is never hidden', () => {
    writePlatformDocumentJson(files);
    const edited = readFileSync(files.yamlPath, 'utf8').replace(
      /operationId: privateCloud\.listServers\b/,
      'operationId: privateCloud.listServersRenamed',
    );
    writeFileSync(files.yamlPath, edited);
    const read = readPlatformDocument(files);
    expect(read.source).toBe('yaml');
    expect(buildPlatformDescription(read.document).byId.has('privateCloud.listServersRenamed')).toBe(true);
  });

  it('parses the YAML when the JSON is unreadable', () => {
    writeFileSync(files.jsonPath, '{"yamlSha256": ');
    expect(readPlatformDocument(files).source).toBe('yaml');
  });
});
