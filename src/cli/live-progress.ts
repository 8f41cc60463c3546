/**
 * The live progress view of a run on a terminal: a few lines kept at the bottom of the screen
 * and redrawn as the journal records the run, one per loop (items done, failed, running, of
 * how many) and one per async operation in flight (its percent). Log lines scroll above it.
 * The journal is the source, as for `runs logs`: every loop item and operation is in it.
 *
 * Shown on a terminal with the human view; FLEETBOOK_PROGRESS=live forces it (tests, a
 * terminal multiplexer that hides the TTY), FLEETBOOK_PROGRESS=off turns it off.
 */
import { Writable } from 'node:stream';
import type { JournalEvent, RunStore } from '../store/index.js';
import type { CliIo } from './io.js';

interface LoopProgress {
  total?: number;
  done: number;
  failed: number;
  running: number;
  /** The loop ended: drawn once more with its last counts, then left out. */
  ended?: boolean;
}

/** Operations shown by name; more are counted on one line, so the view stays a few lines. */
const SHOWN_OPERATIONS = 4;
/** Redraws on loop items at most this often: a loop of 10,000 quick items must not flood the terminal. */
const REDRAW_EVERY_MS = 100;

/** What the view shows, kept from journal events. */
export class RunProgress {
  private readonly loops = new Map<string, LoopProgress>();
  private readonly operations = new Map<string, number | undefined>();

  /** Takes one journal event; true when it changed something worth drawing at once (not a loop item). */
  record(event: JournalEvent): boolean {
    switch (event.type) {
      case 'step.started': {
        if (event.kind !== 'forEach') return false;
        const items = (event.input as { items?: unknown } | undefined)?.items;
        this.loops.set(event.path, {
          ...(typeof items === 'number' ? { total: items } : {}),
          done: 0,
          failed: 0,
          running: 0,
        });
        return true;
      }
      case 'item.started': {
        const loop = this.loops.get(event.path);
        if (loop) loop.running += 1;
        return false;
      }
      case 'item.finished': {
        const loop = this.loops.get(event.path);
        if (!loop) return false;
        loop.running = Math.max(0, loop.running - 1);
        if (event.status === 'failed') loop.failed += 1;
        else loop.done += 1;
        return false;
      }
      case 'request.answered':
        if (event.location === undefined) return false;
        this.operations.set(event.path, undefined);
        return true;
      case 'operation.progress':
        this.operations.set(event.path, event.progressPercent);
        return true;
      case 'operation.finished':
        return this.operations.delete(event.path);
      case 'step.finished': {
        const wasOperation = this.operations.delete(event.path);
        const loop = this.loops.get(event.path);
        if (loop) loop.ended = true;
        return loop !== undefined || wasOperation;
      }
      default:
        return false;
    }
  }

  /** The view's lines (none when nothing is in progress); a loop that ended is in them this once. */
  lines(): string[] {
    const loops = [...this.loops];
    for (const [path, loop] of loops) if (loop.ended) this.loops.delete(path);
    const lines = loops.map(
      ([path, loop]) =>
        `  ${path}  ${loop.done + loop.failed}${loop.total === undefined ? '' : `/${loop.total}`} items: ${loop.done} done, ${loop.failed} failed, ${loop.running} running`,
    );
    const operations = [...this.operations];
    for (const [path, percent] of operations.slice(0, SHOWN_OPERATIONS))
      lines.push(`  ${path}  operation ${percent === undefined ? 'started' : `${percent}%`}`);
    if (operations.length > SHOWN_OPERATIONS)
      lines.push(`  ... and ${operations.length - SHOWN_OPERATIONS} more operations in flight`);
    return lines;
  }
}

/** Whether the live view is wanted: forced by FLEETBOOK_PROGRESS, else a terminal with the human view. */
export function wantsLiveProgress(io: CliIo, humanView: boolean): boolean {
  // Never inside JSON or YAML: the view is for a person.
  if (!humanView) return false;
  const asked = io.env.FLEETBOOK_PROGRESS;
  if (asked === 'live') return true;
  if (asked === 'off') return false;
  return io.stdout.isTTY === true && io.env.TERM !== 'dumb';
}

/** A stream whose writes go to `write` (the logger's destination, through the view). */
export function streamTo(write: (text: string) => void): NodeJS.WritableStream {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      write(String(chunk));
      done();
    },
  });
}

export interface LiveProgress {
  /** `store` with its journal appends observed by the view; give it to the engine. */
  observe(store: RunStore): RunStore;
  /** Writes `text` above the view (which is redrawn under it). */
  write(text: string): void;
  /** Clears the view for good (the run ended). */
  close(): void;
}

/** ANSI: cursor up `n` lines to their start, and clear from there down. */
const clearLines = (n: number): string => (n === 0 ? '' : `\u001b[${n}F\u001b[J`);

export function createLiveProgress(out: NodeJS.WritableStream): LiveProgress {
  const progress = new RunProgress();
  let drawn = 0;
  let drawnAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const frame = (): string => {
    const lines = progress.lines();
    drawn = lines.length;
    drawnAt = Date.now();
    return lines.map((line) => `${line}\n`).join('');
  };
  const redraw = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (closed) return;
    const previous = drawn;
    out.write(`${clearLines(previous)}${frame()}`);
  };
  const soon = (): void => {
    if (timer !== undefined || closed) return;
    const waitMs = Math.max(0, REDRAW_EVERY_MS - (Date.now() - drawnAt));
    timer = setTimeout(redraw, waitMs);
    timer.unref();
  };

  return {
    observe(store) {
      return new Proxy(store, {
        get(target, name, receiver) {
          if (name !== 'append') return Reflect.get(target, name, receiver) as unknown;
          return async (runId: string, event: JournalEvent, options?: Parameters<RunStore['append']>[2]) => {
            await target.append(runId, event, options);
            if (progress.record(event)) redraw();
            else soon();
          };
        },
      });
    },
    write(text) {
      if (closed) {
        out.write(text);
        return;
      }
      const previous = drawn;
      out.write(`${clearLines(previous)}${text}${frame()}`);
    },
    close() {
      clearTimeout(timer);
      if (!closed) out.write(clearLines(drawn));
      closed = true;
      drawn = 0;
    },
  };
}
