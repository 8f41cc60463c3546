import { describe, expect, it } from 'vitest';
import { csvText } from './file.js';

describe('csvText', () => {
  it('quotes what RFC 4180 asks to quote', () => {
    expect(csvText([{ name: 'a,b', note: 'say "hi"' }], undefined).text).toBe('name,note\r\n"a,b","say ""hi"""\r\n');
  });

  it('writes a cell a spreadsheet would run as a formula as text, and leaves numbers be', () => {
    const { text } = csvText(
      [{ a: '=HYPERLINK("http://x","y")', b: '+1+2', c: '@SUM(A1)', d: '-5', e: '+3.5', f: -7 }],
      undefined,
    );
    expect(text.split('\r\n')[1]).toBe(`"'=HYPERLINK(""http://x"",""y"")",'+1+2,'@SUM(A1),-5,+3.5,-7`);
  });
});
