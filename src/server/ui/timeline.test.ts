import { describe, expect, it } from 'vitest';
import type { RunRecord, StepNode } from '../../store/index.js';
import { html, trusted } from './html.js';
import { ITEM_GROUPS, MAX_ITEM_BARS, renderTimeline, timelineRows } from './timeline.js';

const at = (ms: number) => new Date(Date.UTC(2026, 2, 1, 10) + ms).toISOString();

function node(
  path: string,
  label: string,
  status: string,
  from: number,
  to?: number,
  children: StepNode[] = [],
): StepNode {
  return {
    path,
    label,
    stepId: label,
    kind: 'sleep',
    status: status as StepNode['status'],
    attempts: 1,
    startedAt: at(from),
    ...(to === undefined ? {} : { endedAt: at(to) }),
    children,
  };
}

function loop(items: number, failedEvery = 0): StepNode {
  const children = Array.from({ length: items }, (_, index) =>
    node(
      `systems[${index}]`,
      `[${index}]`,
      failedEvery && index % failedEvery === 0 ? 'failed' : 'succeeded',
      index,
      index + 10,
      [node(`systems[${index}].update`, 'update', 'succeeded', index, index + 9)],
    ),
  );
  return node('systems', 'systems', 'succeeded', 0, items + 10, children);
}

const run = { id: 'r1', playbook: 'p', status: 'succeeded', startedAt: at(0), endedAt: at(6000) } as RunRecord;

describe('timeline', () => {
  it('draws one bar per step and per item (with its inner steps) for a small loop', () => {
    const rows = timelineRows([loop(3)], new Map());
    expect(rows.map((row) => `${'-'.repeat(row.depth)}${row.label}`)).toEqual([
      'systems',
      '-[0]',
      '--update',
      '-[1]',
      '--update',
      '-[2]',
      '--update',
    ]);
  });

  it(`draws each item of a loop of up to ${MAX_ITEM_BARS} items, without their inner steps past 20`, () => {
    expect(timelineRows([loop(MAX_ITEM_BARS)], new Map())).toHaveLength(1 + MAX_ITEM_BARS);
  });

  it('groups a 5,000-item loop into at most 100 bars, each counting its items by status, worst colour first', () => {
    const rows = timelineRows([loop(5000, 1000)], new Map());
    expect(rows).toHaveLength(1 + ITEM_GROUPS);
    expect(rows[1]).toMatchObject({ label: '[0]–[49]', status: 'failed', counts: { failed: 1, succeeded: 49 } });
    expect(rows[2]).toMatchObject({ label: '[50]–[99]', status: 'succeeded', counts: { succeeded: 50 } });
    const svg = renderTimeline(run, rows, Date.parse(at(6000)));
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(1 + ITEM_GROUPS);
    expect(svg).toContain('failed · 1 failed, 49 succeeded');
  });

  it('marks attempts and an operation in progress, and writes each status in words', () => {
    const retried = { ...node('call', 'call', 'running', 0), attempts: 3 };
    const svg = renderTimeline(
      { ...run, status: 'running', endedAt: undefined } as unknown as RunRecord,
      timelineRows([retried], new Map([['call', 40]])),
      Date.parse(at(5000)),
    );
    expect(svg).toContain('<rect class="progress"');
    expect(svg).toContain('>×3</text>');
    expect(svg).toContain('running · 3 attempts · 40%');
  });

  it('escapes what it writes: a step label cannot open markup', () => {
    const svg = renderTimeline(
      run,
      timelineRows([node('x', '<script>alert(1)</script>', 'succeeded', 0, 5)], new Map()),
      0,
    );
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

describe('html', () => {
  it('escapes every interpolated value but markup it made itself', () => {
    const value = `<img src=x onerror="alert('1')">&`;
    expect(html`<p title="${value}">${value}</p>`.text).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</p>',
    );
    // Called by another name so the formatter leaves the markup as written.
    const markup = html;
    const items = ['<a>', markup`<li>${'<b>'}</li>`];
    expect(markup`<ul>${items}</ul>`.text).toBe('<ul>&lt;a&gt;<li>&lt;b&gt;</li></ul>');
    expect(html`${undefined}${null}${false}${0}${trusted('<br>')}`.text).toBe('0<br>');
  });
});
