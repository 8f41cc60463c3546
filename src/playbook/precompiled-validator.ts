/**
 * The playbook schema's validator compiled at build time. Compiling the schema of the
 * built-in step kinds and operations costs ajv about 0.4 s and 50 MB at every start, so the
 * build (`npm run build`, scripts/build-artifacts.js) writes ajv's standalone code for it
 * beside the compiled module (`dist/playbook/playbook-validator-<digest>.cjs`). The file is
 * named by the SHA-256 of the schema it checks: it serves exactly that schema, and any other
 * (a custom registry or description, a platform.yaml edited since the build) is compiled
 * at run time. Under vitest (src/) there is no such file.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type standaloneCodeModule from 'ajv/dist/standalone/index.js';
import type { JsonSchema } from '../steps/index.js';
import { createPlaybookAjv } from './playbook-ajv.js';

/** What a compiled validator is to its callers, run-time or precompiled. */
export type PlaybookValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** This module's folder: dist/playbook/ after the build. */
const MODULE_DIR = fileURLToPath(new URL('.', import.meta.url));

// The validator is CommonJS, and ajv (needed only to write it) is loaded only then.
const require = createRequire(import.meta.url);

const PREFIX = 'playbook-validator-';

/** The file name of the validator of `schema`: its digest, so the file cannot serve another schema. */
function fileNameOf(schema: JsonSchema): string {
  return `${PREFIX}${createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 32)}.cjs`;
}

/** The precompiled validator of `schema`, or undefined when the build wrote none for it. */
export function loadPrecompiledValidator(schema: JsonSchema, dir = MODULE_DIR): PlaybookValidator | undefined {
  const file = join(dir, fileNameOf(schema));
  return existsSync(file) ? (require(file) as PlaybookValidator) : undefined;
}

/**
 * Writes the standalone validator of `schema` into `dir` (the build runs this after tsc with
 * the default playbook schema) and removes those of earlier schemas.
 */
export function writePrecompiledValidator(schema: JsonSchema, dir = MODULE_DIR): void {
  const name = fileNameOf(schema);
  for (const old of readdirSync(dir)) {
    if (old.startsWith(PREFIX) && old !== name) rmSync(join(dir, old));
  }
  // CommonJS: the code requires ajv's runtime helpers and ajv-formats' formats by name.
  const { default: standaloneCode } = require('ajv/dist/standalone/index.js') as {
    default: typeof standaloneCodeModule.default;
  };
  const ajv = createPlaybookAjv({ source: true });
  writeFileSync(join(dir, name), standaloneCode(ajv, ajv.compile(schema)));
}
