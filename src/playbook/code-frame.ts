/** Characters of one line a frame shows: a line of 650 KB (a name pasted by mistake) is shown around the caret. */
const FRAME_WIDTH = 100;
/** Characters before the caret kept when a line is cut. */
const BEFORE_CARET = 40;

/** The part of `text` a frame shows, and how far the caret moves left with the cut. */
function window(text: string, column?: number): { shown: string; shift: number } {
  if (text.length <= FRAME_WIDTH) return { shown: text, shift: 0 };
  const start = column === undefined ? 0 : Math.min(Math.max(0, column - 1 - BEFORE_CARET), text.length - FRAME_WIDTH);
  const head = start > 0 ? '…' : '';
  const tail = start + FRAME_WIDTH < text.length ? '…' : '';
  return { shown: `${head}${text.slice(start, start + FRAME_WIDTH)}${tail}`, shift: start - head.length };
}

/** A few lines of `text` around `line`, with a caret under `column`, for terminal messages. */
export function codeFrame(text: string, line: number, column: number, context = 2): string {
  const lines = text.split(/\r?\n/);
  const first = Math.max(1, line - context);
  const last = Math.min(lines.length, line + 1);
  const width = String(last).length;
  const out: string[] = [];
  for (let number = first; number <= last; number += 1) {
    const marker = number === line ? '>' : ' ';
    const { shown, shift } = window(lines[number - 1] ?? '', number === line ? column : undefined);
    out.push(`${marker} ${String(number).padStart(width)} | ${shown}`.trimEnd());
    if (number === line) out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, column - 1 - shift))}^`);
  }
  return out.join('\n');
}
