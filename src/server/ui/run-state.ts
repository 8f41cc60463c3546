/**
 * The run page's state, made from the run's record and its journal only, so the page loaded
 * and the page kept live (run-live.ts) are the same function of the same entries: the step
 * tree (the journal's fold), the waits (a `run.waiting` until its decision, the window's end,
 * a cancel, the gate starting again or the run's end), the decisions, and the log lines.
 */
import {
  buildStepTree,
  foldJournal,
  type JournalEntry,
  type RunRecord,
  type StepNode,
  type StepRecord,
} from '../../store/index.js';
import { logLines, type LogLine } from '../views.js';

/** A wait of the run: open (no `endedAt`) while the run still waits there. */
export interface WaitSpan {
  path: string;
  reason: string;
  since: string;
  endedAt?: string;
  /** How it ended, in words: `approved by ops lead`, `window opened`, `cancelled by ...`. */
  outcome?: string;
}

/** One `approval.decided` of the run, for the header. */
export interface DecisionView {
  path: string;
  decision: string;
  by: string;
  at: string;
  comment?: string;
}

export interface RunPageState {
  /** The journal's fold, one record per step and loop item (the tree nests them). */
  records: StepRecord[];
  tree: StepNode[];
  waits: WaitSpan[];
  decisions: DecisionView[];
  log: LogLine[];
  lastSeq: number;
}

function waitSpans(run: RunRecord, journal: readonly JournalEntry[]): WaitSpan[] {
  const spans: WaitSpan[] = [];
  const close = (at: string, outcome: string, path?: string): void => {
    const open = spans.at(-1);
    if (open && open.endedAt === undefined && (path === undefined || open.path === path)) {
      open.endedAt = at;
      open.outcome = outcome;
    }
  };
  for (const { at, event } of journal) {
    if (event.type === 'run.waiting') spans.push({ path: event.path, reason: event.wait.reason, since: at });
    else if (event.type === 'approval.decided')
      close(at, event.decision === 'timedOut' ? 'timed out' : `${event.decision} by ${event.by}`, event.path);
    else if (event.type === 'wait.ended') close(at, 'window opened', event.path);
    else if (event.type === 'run.cancelled') close(at, `cancelled by ${event.by}`);
    // Resumed without a decision (after a crash): the gate asks again, the old wait is over.
    else if (event.type === 'step.started') close(at, 'resumed', event.path);
  }
  if (run.endedAt !== undefined) close(run.endedAt, run.status);
  return spans;
}

/**
 * The fold journals a waiting gate `interrupted` (its drive stopped there): while the run waits
 * at it, the gate and the steps holding it are drawn `waiting`, which is what they do.
 */
function markWaiting(nodes: StepNode[], open: WaitSpan | undefined): void {
  if (!open) return;
  for (const node of nodes) {
    const holds =
      node.path === open.path || open.path.startsWith(`${node.path}.`) || open.path.startsWith(`${node.path}[`);
    if (!holds) continue;
    if (node.status === 'interrupted' || node.status === 'running') node.status = 'waiting' as StepNode['status'];
    markWaiting(node.children, open);
  }
}

/** A run cancelled while a step was stopped (at a gate, by a window) ends that step cancelled too. */
function markCancelled(nodes: StepNode[]): void {
  for (const node of nodes) {
    if (node.status === 'interrupted') node.status = 'cancelled' as StepNode['status'];
    markCancelled(node.children);
  }
}

export function runPageState(run: RunRecord, journal: readonly JournalEntry[], logLimit: number): RunPageState {
  const records = foldJournal(journal);
  const tree = buildStepTree(records);
  const waits = waitSpans(run, journal);
  const last = waits.at(-1);
  markWaiting(tree, last && last.endedAt === undefined && run.status === 'waiting' ? last : undefined);
  if (run.status === 'cancelled') markCancelled(tree);
  const decisions: DecisionView[] = [];
  for (const { event } of journal)
    if (event.type === 'approval.decided')
      decisions.push({
        path: event.path,
        decision: event.decision,
        by: event.by,
        at: event.at,
        ...(event.comment === undefined ? {} : { comment: event.comment }),
      });
  return { records, tree, waits, decisions, log: logLines(journal, logLimit), lastSeq: journal.at(-1)?.seq ?? 0 };
}
