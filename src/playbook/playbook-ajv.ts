/**
 * The one configuration of ajv that checks playbooks: the playbook schema (compiled at run
 * time, or at build time into standalone code) and the schemas written in playbooks. One
 * factory so a precompiled validator reports exactly what a run-time one does.
 */
import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv/dist/2020.js';
import type { Ajv2020, CodeOptions } from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';

// Loaded on first use: a process that validates with the precompiled playbook validator
// and reads no input declaration never loads ajv. Both packages are CommonJS.
const require = createRequire(import.meta.url);

/**
 * An ajv instance: all errors (one finding per mistake), not strict (the schemas carry
 * annotations of their own), verbose (findings read `schema`, `parentSchema` and `data`),
 * with the formats of ajv-formats. `code.source` keeps the generated code for standalone output.
 * `inlineRefs: false`: each `$defs` entry (a step, every operation's input) is a function of its
 * own instead of one 1.8 MB function, so V8 compiles only those a playbook reaches; loading the
 * precompiled validator peaked 18 MB higher (RSS) when it was one function.
 */
export function createPlaybookAjv(code: CodeOptions = {}): Ajv2020 {
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof AjvModule;
  const addFormats = require('ajv-formats') as typeof addFormatsModule.default;
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, code, inlineRefs: false });
  addFormats(ajv);
  return ajv;
}
