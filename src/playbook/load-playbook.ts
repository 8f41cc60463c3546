/**
 * `loadPlaybook`: read → parse (positions kept) → schema → semantic rules → normalise,
 * every problem located, all of them in one pass. Never throws for a user's mistake.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { didYouMean, withShownNames } from '../errors/index.js';
import { fileURLToPath } from 'node:url';
import { loadPlatformDescription, type PlatformDescription } from '../openapi/index.js';
import { createStepRegistry, type StepRegistry } from '../steps/index.js';
import type { JsonSchema } from '../steps/index.js';
import { normalisePlaybook } from './normalise-playbook.js';
import { createPlaybookSchema } from './playbook-schema.js';
import type { Problem } from './problem.js';
import { hasErrors } from './problem.js';
import { withCallInputHelp } from './call-input-help.js';
import { callInputRule } from './call-input-rule.js';
import { expressionReferenceRule } from './reference-rule.js';
import { isRawObject } from './raw-steps.js';
import { runDocumentRules, type Finding } from './rules.js';
import { validateAgainstSchema } from './schema-validation.js';
import { parseSourceDocument, type SourceDocument } from './source-document.js';
import type { Playbook } from '../model/index.js';

/** Files larger than this are refused before parsing. @default 1 MiB */
export const DEFAULT_MAX_PLAYBOOK_BYTES = 1024 * 1024;

// src/playbook/ under vitest and dist/playbook/ after the build: the package root is two levels up.
const BUNDLED_DIR = fileURLToPath(new URL('../../playbooks/', import.meta.url));

export interface LoadPlaybookOptions {
  /** @default the built-in step kinds */
  registry?: StepRegistry;
  /** @default the platform description of the package */
  description?: PlatformDescription;
  /** @default DEFAULT_MAX_PLAYBOOK_BYTES */
  maxBytes?: number;
  /**
   * Folders `uses:` may also read playbooks from, besides the calling playbook's folder (and
   * those under it) and the bundled playbooks. @default none
   */
  usesFrom?: readonly string[];
}

export interface LoadPlaybookResult {
  /** Present when there is no error (warnings may remain). */
  playbook?: Playbook;
  problems: Problem[];
}

const schemas = new WeakMap<StepRegistry, WeakMap<PlatformDescription, JsonSchema>>();

let builtInRegistry: StepRegistry | undefined;

/**
 * The built-in step kinds, built once: the playbook schema is compiled per registry (about
 * 0.4 s), so a fresh registry per call would pay that for every file validated or loaded.
 */
function defaultRegistry(): StepRegistry {
  return (builtInRegistry ??= createStepRegistry());
}

function schemaFor(registry: StepRegistry, description: PlatformDescription): JsonSchema {
  let byDescription = schemas.get(registry);
  if (!byDescription) schemas.set(registry, (byDescription = new WeakMap()));
  let schema = byDescription.get(description);
  if (!schema) byDescription.set(description, (schema = createPlaybookSchema(registry, description)));
  return schema;
}

/** The schema of the built-in step kinds and the package's description: the one the build precompiles (precompiled-validator.ts). */
export function defaultPlaybookSchema(): JsonSchema {
  return schemaFor(defaultRegistry(), loadPlatformDescription());
}

/** A bare name (no slash, no `.yaml`) is a bundled playbook; anything else a path from `fromDir`. */
export function resolvePlaybookRef(ref: string, fromDir: string): string {
  if (!ref.includes('/') && !ref.includes('\\') && !/\.ya?ml$/.test(ref)) return resolve(BUNDLED_DIR, `${ref}.yaml`);
  return isAbsolute(ref) ? ref : resolve(fromDir, ref);
}

/** The path with symbolic links resolved, so a link cannot lead `uses:` out of its folders; as given when it does not exist. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const isInside = (file: string, folder: string): boolean => {
  const path = relative(folder, file);
  return path !== '' && !path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path);
};

/**
 * Why `uses: ref` may not read `target`, or undefined when it may: only a `.yaml`/`.yml` file
 * in the calling playbook's folder (or under it), a bundled playbook, or one under a folder the
 * caller allowed. Checked before the file is opened, so no other file is ever read and shown.
 */
function usesRefusal(ref: string, target: string, callerDir: string, usesFrom: readonly string[]): string | undefined {
  if (!/\.ya?ml$/i.test(target)) return `'${ref}' is not a playbook file: uses reads only .yaml or .yml files`;
  const real = realPath(target);
  const folders = [callerDir, BUNDLED_DIR, ...usesFrom].map((folder) => realPath(resolve(folder)));
  if (folders.some((folder) => isInside(real, folder))) return undefined;
  return `'${ref}' is outside the calling playbook's folder (${callerDir}): uses reads playbooks from that folder and those under it, and the bundled ones`;
}

/** A name that is not a bundled playbook: the closest bundled names, and all of them. */
function noBundledPlaybook(file: string): string {
  const wanted = basename(file).replace(/\.ya?ml$/, '');
  const bundled = readdirSync(BUNDLED_DIR)
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => name.replace(/\.yaml$/, ''))
    .sort();
  return `no bundled playbook '${wanted}' (nor a file: a path needs a '/' or a .yaml ending).${didYouMean(wanted, bundled)} Bundled: ${bundled.join(', ')}.`;
}

function fileProblem(file: string, code: string, message: string, line = 1, column = 1): Problem {
  return { code, message, severity: 'error', file, line, column, pointer: '' };
}

/**
 * The bytes of a regular file, at most `maxBytes + 1` of them (one more tells "too large"
 * without reading the rest). Opened without blocking and checked on the open descriptor, so a
 * FIFO, a device such as /dev/zero or a directory is refused rather than read without end.
 */
function readRegularFile(file: string, maxBytes: number): Buffer | Problem {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) return fileProblem(file, 'NOT_A_FILE', 'is a directory, not a playbook file');
    if (!stats.isFile())
      return fileProblem(
        file,
        'NOT_A_FILE',
        'is not a regular file (a device, a FIFO or a socket); a playbook is read only from a regular file',
      );
    if (stats.size > maxBytes)
      return fileProblem(file, 'FILE_TOO_LARGE', `is ${stats.size} bytes; a playbook may have at most ${maxBytes}`);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read)
      read = readSync(fd, buffer, length, buffer.length - length, null);
    // The file grew after it was looked at: still no more than the cap is read.
    if (length > maxBytes)
      return fileProblem(file, 'FILE_TOO_LARGE', `is over ${maxBytes} bytes; a playbook may have at most ${maxBytes}`);
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The file as text, or the problem that keeps it from being read as a playbook. */
export function readPlaybookText(file: string, maxBytes: number): { text?: string; problem?: Problem } {
  let bytes: Buffer;
  try {
    const read = readRegularFile(file, maxBytes);
    if (!Buffer.isBuffer(read)) return { problem: read };
    bytes = read;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return {
        problem: fileProblem(
          file,
          'FILE_NOT_FOUND',
          resolve(dirname(file)) === resolve(BUNDLED_DIR) ? noBundledPlaybook(file) : 'no such file',
        ),
      };
    if (code === 'EISDIR') return { problem: fileProblem(file, 'NOT_A_FILE', 'is a directory, not a playbook file') };
    return { problem: fileProblem(file, 'FILE_UNREADABLE', `cannot be read (${code ?? String(error)})`) };
  }
  const lossy = bytes.toString('utf8');
  const at = (index: number): { line: number; column: number } => {
    const before = lossy.slice(0, index).split('\n');
    return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
  };
  const nul = lossy.indexOf('\u0000');
  if (nul !== -1) {
    const { line, column } = at(nul);
    return {
      problem: fileProblem(
        file,
        'NOT_TEXT',
        'is a binary file (it holds a NUL byte), not a YAML playbook',
        line,
        column,
      ),
    };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const { line, column } = at(lossy.indexOf('\uFFFD'));
    return { problem: fileProblem(file, 'INVALID_UTF8', 'is not valid UTF-8 text', line, column) };
  }
}

function locateFindings(
  source: SourceDocument,
  findings: Array<Finding & { offsetInValue?: number; lengthInValue?: number }>,
): Problem[] {
  return findings.map((finding) => {
    const range = source.span(finding.pointer, {
      ...(finding.atKey ? { key: true } : {}),
      ...(finding.offsetInValue === undefined ? {} : { offsetInValue: finding.offsetInValue }),
      ...(finding.lengthInValue === undefined ? {} : { lengthInValue: finding.lengthInValue }),
    });
    return {
      code: finding.code,
      message: finding.message,
      severity: finding.severity ?? 'error',
      file: source.file,
      line: range.start.line,
      column: range.start.column,
      pointer: finding.pointer,
      range,
    };
  });
}

/** Sorted by position, so output follows the file. */
function byPosition(a: Problem, b: Problem): number {
  return a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column;
}

/**
 * Gives a problem of `file` that has no range (a YAML error, a file-level one) the empty range at
 * its line and column, so every problem of `validate -o json` carries one.
 */
function withRange(problem: Problem, file: string, text: string): Problem {
  if (problem.range !== undefined || problem.file !== file) return problem;
  const lines = text.split('\n');
  const before = lines.slice(0, problem.line - 1).reduce((sum, line) => sum + line.length + 1, 0);
  const offset = Math.min(text.length, before + problem.column - 1);
  const place = { line: problem.line, column: problem.column, offset };
  return { ...problem, range: { start: place, end: place } };
}

function load(file: string, options: Required<LoadPlaybookOptions>, stack: readonly string[]): LoadPlaybookResult {
  const { text, problem } = readPlaybookText(file, options.maxBytes);
  if (text === undefined) return { problems: problem ? [problem] : [] };
  const result = check(file, text, options, stack);
  // Every problem's message passes here: a name pasted by mistake (650 KB) is shown by its start and size.
  const shown = (one: Problem): Problem => {
    const message = withShownNames(one.message);
    return message === one.message ? one : { ...one, message };
  };
  return { ...result, problems: result.problems.map((one) => shown(withRange(one, file, text))) };
}

/**
 * The schema's findings of `data`, but those of a step the rules already explain (no known kind,
 * an unknown operation: reported once, by its rule, not again field by field); a `call` missing
 * its input says what to write.
 */
function schemaFindingsOf(
  data: unknown,
  ruleFindings: readonly Finding[],
  options: Required<LoadPlaybookOptions>,
): Finding[] {
  const explained = ruleFindings
    .filter(
      (finding) =>
        finding.code === 'UNKNOWN_STEP_KIND' ||
        finding.code === 'MULTIPLE_STEP_KINDS' ||
        finding.code === 'UNKNOWN_OPERATION',
    )
    .map((finding) =>
      finding.code === 'UNKNOWN_OPERATION' ? finding.pointer.replace(/\/call$/, '') : finding.pointer,
    );
  return validateAgainstSchema(schemaFor(options.registry, options.description), data)
    .filter(
      (finding) =>
        !explained.some((pointer) => finding.pointer === pointer || finding.pointer.startsWith(`${pointer}/`)),
    )
    .map((finding) => withCallInputHelp(finding, data, options.description));
}

function check(
  file: string,
  text: string,
  options: Required<LoadPlaybookOptions>,
  stack: readonly string[],
): LoadPlaybookResult {
  const source = parseSourceDocument(file, text);
  const problems = [...source.problems];
  if (source.data === undefined && hasErrors(problems)) return { problems: problems.sort(byPosition) };
  const refusal = notAPlaybook(file, source.data, problems, options);
  if (refusal) return { problems: refusal };
  const data = source.data as Record<string, unknown>;

  const ruleFindings = runDocumentRules(data, options.registry, options.description);
  const schemaFindings = schemaFindingsOf(data, ruleFindings, options);
  const findings: Array<Finding & { offsetInValue?: number }> = [...schemaFindings, ...ruleFindings];

  const usesProblems: Problem[] = [];
  const expressionFindings: Array<Finding & { offsetInValue: number }> = [];
  const playbook = normalisePlaybook(data, file, {
    file,
    registry: options.registry,
    locate: (pointer) => source.locate(pointer),
    findings,
    expressionFindings,
    loadUses(ref, pointer) {
      const target = resolvePlaybookRef(ref, dirname(file));
      const refusal = usesRefusal(ref, target, dirname(file), options.usesFrom);
      if (refusal !== undefined) {
        findings.push({ code: 'USES_NOT_ALLOWED', message: refusal, pointer });
        return undefined;
      }
      if (stack.includes(target)) {
        findings.push({
          code: 'USES_CYCLE',
          message: `'${ref}' uses itself: ${[...stack, target].join(' → ')}`,
          pointer,
        });
        return undefined;
      }
      const loaded = load(target, options, [...stack, target]);
      if (loaded.problems.length > 0) {
        if (hasErrors(loaded.problems))
          findings.push({
            code: 'USES_INVALID',
            message: `the playbook '${ref}' (${target}) has problems, listed with its own file`,
            pointer,
          });
        usesProblems.push(...loaded.problems);
      }
      return loaded.playbook;
    },
  });
  // A value whose expression does not parse is not also "not a duration": the parse error says why.
  const unparsed = new Set(expressionFindings.map((finding) => finding.pointer));
  const fromSchema = new Set<Finding>(schemaFindings);
  const said = findings.filter((finding) => !(fromSchema.has(finding) && unparsed.has(finding.pointer)));
  said.push(
    ...expressionFindings,
    ...expressionReferenceRule(playbook, options.registry, options.description),
    ...callInputRule(playbook, options.registry, options.description),
  );

  problems.push(...locateFindings(source, said), ...usesProblems);
  problems.sort(byPosition);
  return hasErrors(problems) ? { problems } : { playbook, problems };
}

/** The problems of a document that is no playbook (one for the whole file, no line of it), or undefined. */
function notAPlaybook(
  file: string,
  data: unknown,
  problems: Problem[],
  options: Required<LoadPlaybookOptions>,
): Problem[] | undefined {
  const refusal = (message: string) => fileProblem(file, 'NOT_A_PLAYBOOK', message);
  if (!isRawObject(data))
    return [...problems, refusal('a playbook is a YAML mapping with `name` and `steps`')].sort(byPosition);
  if (isPlaybookShaped(data, schemaFor(options.registry, options.description))) return undefined;
  // Its problems would quote it line by line (a `uses:` of a compose file or a credentials
  // file under the folder printed its secrets): one problem for the whole file, no line of it.
  return [
    refusal(
      "a playbook is a YAML mapping with `name` and `steps`; most of the fields of this one are not a playbook's, so none of its lines is shown",
    ),
  ];
}

/**
 * A mapping is a playbook (in error, maybe) when it has `name` or `steps` and more of its
 * top-level fields are a playbook's than not: a playbook with a misspelt field is one, a
 * compose file, a workflow of another tool or a credentials file is not.
 */
function isPlaybookShaped(data: Record<string, unknown>, schema: JsonSchema): boolean {
  const fields = new Set(Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {}));
  const keys = Object.keys(data);
  const known = keys.filter((key) => fields.has(key)).length;
  return (Object.hasOwn(data, 'name') || Object.hasOwn(data, 'steps')) && known > keys.length - known;
}

/** Loads and checks a playbook file; `playbook` is absent when any problem is an error. */
export function loadPlaybook(file: string, options: LoadPlaybookOptions = {}): LoadPlaybookResult {
  const absolute = resolve(file);
  return load(
    absolute,
    {
      registry: options.registry ?? defaultRegistry(),
      description: options.description ?? loadPlatformDescription(),
      maxBytes: options.maxBytes ?? DEFAULT_MAX_PLAYBOOK_BYTES,
      usesFrom: options.usesFrom ?? [],
    },
    [absolute],
  );
}
