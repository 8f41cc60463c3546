/**
 * The lexer of the filter grammar (`filter` and `sort` query parameters). Positions are
 * 1-based character offsets into the text, as the error messages show them.
 */
import { badRequest } from '../errors.js';

export type LiteralKind = 'string' | 'integer' | 'decimal' | 'timestamp' | 'boolean' | 'null';

export type Token =
  | { kind: 'punct'; value: '(' | ')' | '[' | ']' | ','; pos: number }
  | { kind: 'word'; value: string; pos: number }
  | { kind: 'literal'; literal: LiteralKind; value: string | number | boolean | null; text: string; pos: number }
  | { kind: 'end'; pos: number };

/** A 400 naming the problem in `parameter` and the 1-based position where it was found. */
export function syntaxError(parameter: string, problem: string, pos: number): Error {
  const description = `${problem} at position ${pos}`;
  return badRequest(`Invalid ${parameter}: ${description}`, [
    { source: 'query.parameter', subject: parameter, description },
  ]);
}

/** How a token is named in error messages. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the text';
    case 'punct':
    case 'word':
      return `'${token.value}'`;
    case 'literal':
      return `${token.literal} literal ${token.text}`;
  }
}

// RFC 3339 date-time; the grammar writes timestamps unquoted.
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// Property paths use `/` between segments; keywords are words too.
const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:\/[A-Za-z_][A-Za-z0-9_]*)*/y;
const WORD_LITERALS: Record<string, { literal: LiteralKind; value: boolean | null }> = {
  true: { literal: 'boolean', value: true },
  false: { literal: 'boolean', value: false },
  null: { literal: 'null', value: null },
};

/**
 * Reserved characters of the reference arrive percent-encoded inside string literals; `%25`
 * is decoded too so that a literal can hold a `%` followed by hex digits.
 */
const DECODED_ESCAPES = new Set([..."!#$&'()*+,/:;=?@[]%"]);

function decodeReserved(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (whole, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return DECODED_ESCAPES.has(char) ? char : whole;
  });
}

function matchAt(pattern: RegExp, text: string, index: number): string | undefined {
  pattern.lastIndex = index;
  return pattern.exec(text)?.[0];
}

/** Splits `text` into tokens; throws a 400 for a character that starts no token. */
export function tokenize(text: string, parameter: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    const pos = i + 1;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (ch === '(' || ch === ')' || ch === '[' || ch === ']' || ch === ',') {
      tokens.push({ kind: 'punct', value: ch, pos });
      i += 1;
      continue;
    }
    if (ch === "'") {
      let value = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw syntaxError(parameter, 'unterminated string literal', pos);
        if (text[j] === "'") {
          if (text[j + 1] === "'") {
            value += "'";
            j += 2;
            continue;
          }
          break;
        }
        value += text[j];
        j += 1;
      }
      tokens.push({
        kind: 'literal',
        literal: 'string',
        value: decodeReserved(value),
        text: text.slice(i, j + 1),
        pos,
      });
      i = j + 1;
      continue;
    }
    const timestamp = matchAt(TIMESTAMP, text, i);
    if (timestamp !== undefined) {
      const ms = Date.parse(timestamp);
      if (Number.isNaN(ms)) throw syntaxError(parameter, `invalid timestamp ${timestamp}`, pos);
      tokens.push({ kind: 'literal', literal: 'timestamp', value: ms, text: timestamp, pos });
      i += timestamp.length;
      continue;
    }
    const number = matchAt(NUMBER, text, i);
    if (number !== undefined) {
      const isInteger = /^-?\d+$/.test(number);
      tokens.push({
        kind: 'literal',
        literal: isInteger ? 'integer' : 'decimal',
        value: Number(number),
        text: number,
        pos,
      });
      i += number.length;
      continue;
    }
    const word = matchAt(WORD, text, i);
    if (word !== undefined) {
      const literal = WORD_LITERALS[word];
      tokens.push(literal ? { kind: 'literal', ...literal, text: word, pos } : { kind: 'word', value: word, pos });
      i += word.length;
      continue;
    }
    throw syntaxError(parameter, `unexpected character '${ch}'`, pos);
  }
  tokens.push({ kind: 'end', pos: text.length + 1 });
  return tokens;
}
