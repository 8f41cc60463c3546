/**
 * The door × policy matrix of docs/architecture.md is kept true: every door of `Door` has its
 * row (a door added without one fails here), every row has a cell per policy, and every test a
 * cell names exists, in the file it names; a cell says `n/a` and why, or names its test (none is
 * left `open`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Door } from '../../src/admission/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const POLICIES = ['window and freeze', 'approval deadline', 'notification once', 'cancel', 'secret redaction', 'role'];

function matrix(): { header: string[]; rows: string[][] } {
  const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = text.split('### Door × policy')[1] ?? '';
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
  const [header, _rule, ...rows] = lines;
  return { header: cells(header ?? ''), rows: rows.map(cells) };
}

describe('the door × policy matrix (docs/architecture.md)', () => {
  const { header, rows } = matrix();

  it('has a column per policy and a row per door, each door once', () => {
    expect(header).toEqual(['door', ...POLICIES]);
    expect(rows.map((row) => row[0]).sort()).toEqual(Object.values(Door).sort());
    for (const row of rows) expect(row, row[0]).toHaveLength(POLICIES.length + 1);
  });

  it('names, in each cell, a test that exists, or says why none applies (n/a); no cell is left open', () => {
    for (const row of rows) {
      for (const [index, cell] of row.slice(1).entries()) {
        const where = `${row[0]} × ${POLICIES[index]}`;
        if (/^n\/a: \S/.test(cell)) continue;
        const named = /^`([^`]+)` › "(.+)"$/.exec(cell);
        expect(named, `${where}: ${cell}`).not.toBeNull();
        const [, file = '', title = ''] = named ?? [];
        expect(existsSync(join(ROOT, file)), `${where}: ${file}`).toBe(true);
        expect(readFileSync(join(ROOT, file), 'utf8'), `${where}: ${title}`).toContain(title);
      }
    }
  });
});
