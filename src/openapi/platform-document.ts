/**
 * The document of `schemas/openapi/platform.yaml`, as `loadPlatformDescription` reads it.
 * Parsing that YAML costs about 200 ms and 30 MB at every start of the CLI, so the build
 * (`npm run build`, scripts/build-artifacts.js) writes the parsed document as JSON beside the
 * compiled module (`dist/openapi/platform.json`), read in about 2 ms. The JSON carries the
 * SHA-256 of the YAML text it was made of: after an edit of the YAML without a rebuild it
 * is ignored and the YAML parsed, so it can never describe another platform than the YAML.
 * Under vitest (src/) there is no JSON and the YAML is parsed.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** Where the document is read from. */
export interface PlatformDocumentFiles {
  /** @default schemas/openapi/platform.yaml of the package */
  yamlPath: string;
  /** @default platform.json beside this module (dist/openapi/ after the build) */
  jsonPath: string;
}

/** The JSON file the build writes. */
interface PlatformDocumentJson {
  /** SHA-256 (hex) of the YAML text `document` was parsed from. */
  yamlSha256: string;
  document: unknown;
}

// src/openapi/ under vitest and dist/openapi/ after the build: the package root is two levels up.
const DEFAULT_FILES: PlatformDocumentFiles = {
  yamlPath: fileURLToPath(new URL('../../schemas/openapi/platform.yaml', import.meta.url)),
  jsonPath: fileURLToPath(new URL('./platform.json', import.meta.url)),
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The written JSON when it was made of `yamlText`, else undefined (absent, unreadable, or of another text). */
function readJson(jsonPath: string, yamlText: string): PlatformDocumentJson | undefined {
  let json: Partial<PlatformDocumentJson>;
  try {
    json = JSON.parse(readFileSync(jsonPath, 'utf8')) as Partial<PlatformDocumentJson>;
  } catch {
    return undefined;
  }
  return json.yamlSha256 === sha256(yamlText) && 'document' in json ? (json as PlatformDocumentJson) : undefined;
}

/** The parsed document, and whether it came from the build's JSON or from parsing the YAML. */
export function readPlatformDocument(files: PlatformDocumentFiles = DEFAULT_FILES): {
  document: unknown;
  source: 'json' | 'yaml';
} {
  const yamlText = readFileSync(files.yamlPath, 'utf8');
  const json = readJson(files.jsonPath, yamlText);
  return json ? { document: json.document, source: 'json' } : { document: parse(yamlText) as unknown, source: 'yaml' };
}

/** Parses the YAML and writes the JSON `readPlatformDocument` prefers (the build runs this after tsc). */
export function writePlatformDocumentJson(files: PlatformDocumentFiles = DEFAULT_FILES): void {
  const yamlText = readFileSync(files.yamlPath, 'utf8');
  const json: PlatformDocumentJson = { yamlSha256: sha256(yamlText), document: parse(yamlText) as unknown };
  writeFileSync(files.jsonPath, JSON.stringify(json));
}
