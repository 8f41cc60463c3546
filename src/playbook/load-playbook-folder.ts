/**
 * Every playbook of a folder (the daemon's, or one `fleetbook validate` is given), loaded and validated in one pass: the problems of
 * every file (located, as `fleetbook validate` reports them; schedule inputs the playbook
 * would refuse among them), plus what only the daemon cares about: a schedule id used by
 * two schedules (they would share their state in the store).
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadPlaybook, type LoadPlaybookOptions, type LoadPlaybookResult } from './load-playbook.js';
import { hasErrors, type Problem } from './problem.js';
import { ProblemCode } from './problem-codes.js';
import type { Playbook, ScheduleSpec } from '../model/index.js';

export interface PlaybookFolder {
  /** Absolute path of the folder. */
  dir: string;
  /** The valid playbooks, by file name. */
  playbooks: Playbook[];
  /** Every problem found; the folder is usable when none is an error. */
  problems: Problem[];
}

export const isPlaybookFile = (name: string): boolean => /\.ya?ml$/.test(name);

/** The playbook files of a folder (sorted), or the problem of a folder that cannot be read. */
export function listPlaybookFiles(dir: string): { names: string[] } | { problem: Problem } {
  try {
    return { names: readdirSync(dir).filter(isPlaybookFile).sort() };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return {
      problem: {
        code: ProblemCode.folderUnreadable,
        message: `the playbook folder cannot be read (${code})`,
        severity: 'error',
        file: dir,
        line: 1,
        column: 1,
        pointer: '',
      },
    };
  }
}

/** `options` apply to every playbook of the folder (the folders `uses:` may also read, say). */
export function loadPlaybookFolder(folder: string, options: LoadPlaybookOptions = {}): PlaybookFolder {
  const dir = resolve(folder);
  const listed = listPlaybookFiles(dir);
  if ('problem' in listed) return { dir, playbooks: [], problems: [listed.problem] };
  return folderOf(
    dir,
    listed.names.map((name) => loadPlaybook(join(dir, name), options)),
  );
}

/** The folder of these loads (in file order): its valid playbooks, every problem, and schedule ids used twice. */
export function folderOf(dir: string, loads: readonly LoadPlaybookResult[]): PlaybookFolder {
  const playbooks: Playbook[] = [];
  const problems: Problem[] = [];
  for (const loaded of loads) {
    problems.push(...loaded.problems);
    if (loaded.playbook && !hasErrors(loaded.problems)) playbooks.push(loaded.playbook);
  }
  problems.push(...duplicateScheduleProblems(playbooks));
  return { dir, playbooks, problems };
}

function duplicateScheduleProblems(playbooks: readonly Playbook[]): Problem[] {
  const problems: Problem[] = [];
  const firstUse = new Map<string, Playbook>();
  const problem = (schedule: ScheduleSpec, code: string, message: string): Problem => {
    const { file, line, column, pointer } = schedule.location;
    return { code, message, severity: 'error', file, line, column, pointer };
  };
  for (const playbook of playbooks) {
    for (const schedule of playbook.schedules) {
      const other = firstUse.get(schedule.key);
      if (other === undefined) {
        firstUse.set(schedule.key, playbook);
        continue;
      }
      problems.push(
        problem(
          schedule,
          ProblemCode.duplicateScheduleId,
          `schedule id '${schedule.key}' is also used in ${other.source}; schedules keep their state by id, so ids must be unique`,
        ),
      );
    }
  }
  return problems;
}
