/**
 * The loader finds platform.yaml from its own location: src/openapi/ under vitest (every other
 * test) and dist/openapi/ after `tsc` builds src into dist, where the build also writes
 * platform.json. This test compiles the loader into a temporary package laid out like the
 * published one and runs it with plain node, before and after that JSON is written.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = mkdtempSync(join(tmpdir(), 'fleetbook-dist-'));

afterAll(() => rmSync(packageDir, { recursive: true, force: true }));

/** Runs `script` (an ES module body) with plain node in the temporary package. */
const runInPackage = (script: string): string =>
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: packageDir, encoding: 'utf8' }).trim();

const LOAD =
  "const { loadPlatformDescription } = await import('./dist/openapi/description.js');" +
  'const d = loadPlatformDescription(); console.log(d.operations.length, d.byId.get("users.inviteUser").successStatus);';

describe('the loader in a built package', () => {
  it('loads schemas/openapi/platform.yaml from dist/openapi/, then the JSON the build writes there', () => {
    mkdirSync(join(packageDir, 'dist/openapi'), { recursive: true });
    for (const file of readdirSync(join(ROOT, 'src/openapi')).filter(
      (name) => name.endsWith('.ts') && !name.endsWith('.test.ts'),
    )) {
      const { outputText } = ts.transpileModule(readFileSync(join(ROOT, 'src/openapi', file), 'utf8'), {
        // ES2022 output: what NodeNext emits for an ESM package; transpileModule cannot see package.json.
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
        fileName: file,
      });
      writeFileSync(join(packageDir, 'dist/openapi', file.replace(/\.ts$/, '.js')), outputText);
    }
    writeFileSync(join(packageDir, 'package.json'), JSON.stringify({ name: 'fleetbook-layout', type: 'module' }));
    cpSync(join(ROOT, 'schemas/openapi/platform.yaml'), join(packageDir, 'schemas/openapi/platform.yaml'));
    symlinkSync(join(ROOT, 'node_modules'), join(packageDir, 'node_modules'), 'dir');

    expect(runInPackage(LOAD)).toBe('72 201');
    runInPackage(
      "const { writePlatformDocumentJson } = await import('./dist/openapi/platform-document.js'); writePlatformDocumentJson();",
    );
    expect(existsSync(join(packageDir, 'dist/openapi/platform.json'))).toBe(true);
    expect(runInPackage(LOAD)).toBe('72 201');
  });
});
