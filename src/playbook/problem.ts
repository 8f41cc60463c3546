/** A problem found while loading a playbook: where it is, what it is, how bad. */
export interface Problem {
  /** Stable UPPER_SNAKE identifier: `SCHEMA`, `UNKNOWN_OPERATION`, `DUPLICATE_STEP_ID`... */
  code: string;
  /** What is wrong and, where it helps, what to do. */
  message: string;
  severity: 'error' | 'warning';
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** JSON pointer inside the playbook document, `''` for the whole file. */
  pointer: string;
  /**
   * The span the problem is about, for an editor or a CI annotation to underline: 1-based lines
   * and columns, 0-based offsets in the file's text (the end excluded).
   */
  range?: { start: ProblemPlace; end: ProblemPlace };
}

export interface ProblemPlace {
  line: number;
  column: number;
  offset: number;
}

export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((problem) => problem.severity === 'error');
}
