/**
 * Server-rendered HTML with escaping by default: `html\`<p>${value}</p>\`` escapes every
 * interpolated value unless it is itself `Html` (made by `html` or, for markup the server
 * generated, `trusted`). Arrays are joined; `undefined`, `null` and `false` render nothing. A
 * playbook description or an input value holding `<script>` renders as text.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (value === undefined || value === null || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

/**
 * Markup the code itself built, every text in it escaped where it was placed: the SVG timeline
 * (renderTimeline), a description's Markdown (markdown-it, raw HTML off). Never a value: a value
 * reaches the page through `html`, which escapes it in an attribute as in text.
 */
export const trusted = (text: string): Html => new Html(text);
