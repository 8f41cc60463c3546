import { describe, expect, it } from 'vitest';
import { markdown } from './markdown.js';
import { valueView } from './values.js';

/** The texts of the elements `tag` in `markup`, tags inside them dropped. */
const texts = (markup: string, tag: string): string[] =>
  [...markup.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((match) =>
    (match[1] ?? '').replace(/<[^>]+>/g, '').trim(),
  );

describe('readable values', () => {
  it('draws a list of flat objects as a table, one column per key, every text escaped', () => {
    const systems = [
      { system: 'sys-1', before: '2.1', after: '2.2', changed: true },
      { system: 'sys-<b>2</b>', before: '2.2', after: '2.2', changed: false, note: null },
    ];
    const markup = valueView({ updated: 2, systems }, 'outputs').text;
    expect(texts(markup, 'th')).toEqual(['system', 'before', 'after', 'changed', 'note']);
    expect(texts(markup, 'td')).toEqual([
      'sys-1',
      '2.1',
      '2.2',
      'true',
      '',
      'sys-&lt;b&gt;2&lt;/b&gt;',
      '2.2',
      '2.2',
      'false',
      'null',
    ]);
    expect(markup).not.toContain('<b>');
    // The object around it is a tree of keys and values, and its JSON is one toggle away.
    expect(texts(markup, 'dt')).toEqual(['updated', 'systems']);
    expect(markup).toContain('<details class="json" data-key="outputs:json">');
    expect(texts(markup, 'pre')[0]).toContain('&quot;system&quot;: &quot;sys-1&quot;');
  });

  it('draws nested objects as trees and a list of plain values as indexed entries', () => {
    const markup = valueView({ a: { b: [1, 'two'] } }, 'x').text;
    expect(texts(markup, 'dt')).toEqual(['a', 'b', '0', '1']);
    expect(markup.match(/<dl class="kv">/g)).toHaveLength(3);
  });
});

describe('Markdown descriptions', () => {
  it('renders code and emphasis, and keeps raw HTML and script links inert', () => {
    const markup = markdown('Updates `canary` systems *first* <script>alert(1)</script> [x](javascript:alert(1))').text;
    expect(texts(markup, 'code')).toEqual(['canary']);
    expect(texts(markup, 'em')).toEqual(['first']);
    expect(markup).not.toContain('<script');
    expect(markup).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(markup).not.toContain('<a ');
  });
});
