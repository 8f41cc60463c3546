/**
 * A value the way a reader takes it in: a list of flat objects (the per-system before/after of
 * a fleet step) as a table, an object as a tree of keys and values, a list of plain values as a
 * list, and beside each a toggle to the JSON itself. Every text goes through `html`.
 */
import { json } from './format.js';
import { html, type Html } from './html.js';

type Plain = string | number | boolean | null;

const isPlain = (value: unknown): value is Plain =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A non-empty list of objects whose values are all plain: one row each. */
const isTable = (value: unknown): value is Record<string, Plain>[] =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every((row) => isObject(row) && Object.values(row).every((cell) => cell === undefined || isPlain(cell)));

/** Keys beyond this many rows of a table or entries of an object are left to the JSON. */
const MAX_SHOWN = 200;

function plainText(value: Plain): Html {
  if (value === null) return html`<span class="null">null</span>`;
  return html`<span class="${typeof value}">${String(value)}</span>`;
}

function table(rows: readonly Record<string, Plain>[]): Html {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const shown = rows.slice(0, MAX_SHOWN);
  return html`<table class="value-table">
      <thead>
        <tr>
          ${columns.map((column) => html`<th scope="col">${column}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${shown.map(
          (row) =>
            html`<tr>
              ${columns.map((column) => html`<td>${row[column] === undefined ? '' : plainText(row[column])}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
    ${rows.length > shown.length ? html`<p class="meta">${shown.length} of ${rows.length} rows; the JSON has all.</p>` : ''}`;
}

function tree(value: unknown, depth: number): Html {
  if (isPlain(value)) return plainText(value);
  if (value === undefined) return html``;
  if (isTable(value)) return table(value);
  // Past a few levels a tree says less than its JSON.
  if (depth > 4) return html`<code>${JSON.stringify(value)}</code>`;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return html`<span class="empty">${Array.isArray(value) ? '[]' : '{}'}</span>`;
  return html`<dl class="kv">
    ${entries.slice(0, MAX_SHOWN).map(
      ([key, item]) =>
        html`<dt>${key}</dt>
          <dd>${tree(item, depth + 1)}</dd>`,
    )}
  </dl>`;
}

/**
 * `value` readable, with its JSON one click away (the raw text, as the API gives it); `key`
 * names the toggle, so the live page keeps it open across a redraw.
 */
export function valueView(value: unknown, key: string): Html {
  return html`<div class="value">
    ${tree(value, 0)}
    <details class="json" data-key="${key}:json">
      <summary>JSON</summary>
      <pre>${json(value)}</pre>
    </details>
  </div>`;
}
