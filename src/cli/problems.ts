/** How loader problems are shown to a person: one place for `validate`, `run` and `daemon`. */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { codeFrame, type Problem } from '../playbook/index.js';

/** A path as the user would type it from here. */
export function shownPath(file: string): string {
  return relative(process.cwd(), file) || file;
}

/** `file:line:col  severity  message  (code)` and a code frame for each problem. */
export function formatProblems(problems: readonly Problem[], shown: (file: string) => string = shownPath): string {
  const texts = new Map<string, string | undefined>();
  const textOf = (file: string): string | undefined => {
    if (!texts.has(file)) {
      try {
        texts.set(file, readFileSync(file, 'utf8'));
      } catch {
        texts.set(file, undefined);
      }
    }
    return texts.get(file);
  };
  return problems
    .map((problem) => {
      const head = `${shown(problem.file)}:${problem.line}:${problem.column}  ${problem.severity}  ${problem.message}  (${problem.code})`;
      // A file that could not be read, or is binary, has nothing to frame.
      const text = problem.pointer === '' && problem.code.startsWith('FILE') ? undefined : textOf(problem.file);
      return text === undefined || text.includes('\u0000') ? head : `${head}\n${codeFrame(text, problem.line, problem.column)}\n`;
    })
    .join('\n');
}
