/** How loader problems are shown to a person: one place for `validate`, `run` and `daemon`. */
import { relative } from 'node:path';
import { codeFrame, DEFAULT_MAX_PLAYBOOK_BYTES, readPlaybookText, type Problem } from '../playbook/index.js';

/** A path as the user would type it from here. */
export function shownPath(file: string): string {
  return relative(process.cwd(), file) || file;
}

/** Problems with a whole file that is not a playbook: its lines are never printed. */
const UNFRAMED: ReadonlySet<string> = new Set([
  'FILE_NOT_FOUND',
  'FILE_TOO_LARGE',
  'FILE_UNREADABLE',
  'NOT_A_FILE',
  'NOT_TEXT',
  'INVALID_UTF8',
  'NOT_A_PLAYBOOK',
]);

/** `file:line:col  severity  message  (code)` and a code frame for each problem. */
export function formatProblems(problems: readonly Problem[], shown: (file: string) => string = shownPath): string {
  const texts = new Map<string, string | undefined>();
  const textOf = (file: string): string | undefined => {
    if (!texts.has(file)) {
      // Read as the loader reads a playbook: a device, a FIFO or a huge file is not framed.
      texts.set(file, readPlaybookText(file, DEFAULT_MAX_PLAYBOOK_BYTES).text);
    }
    return texts.get(file);
  };
  return problems
    .map((problem) => {
      const head = `${shown(problem.file)}:${problem.line}:${problem.column}  ${problem.severity}  ${problem.message}  (${problem.code})`;
      // A file that could not be read, or is binary, has nothing to frame; one that is not a
      // playbook at all (a `.env` given by mistake) is not shown either: it may hold secrets.
      const text = problem.pointer === '' && UNFRAMED.has(problem.code) ? undefined : textOf(problem.file);
      return text === undefined || text.includes('\u0000')
        ? head
        : `${head}\n${codeFrame(text, problem.line, problem.column)}\n`;
    })
    .join('\n');
}
