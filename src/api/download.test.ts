import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CellBytes, contentDispositionFilename } from './download.js';
import { NotFoundError } from './errors.js';
import { createMockPlatform } from './testing.js';

const contentsPath = '/consumption-analytics/v1/reports/rep-1/contents';
const csv =
  'date,cost\n' +
  Array.from({ length: 2000 }, (_, i) => `2026-01-${String((i % 28) + 1).padStart(2, '0')},${i}.5`).join('\n');
const csvHeaders = {
  headers: { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="usage-2026-01.csv"' },
};

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'fleetbook-download-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('download', () => {
  it('streams the CSV to a file and reports bytes and file name', async () => {
    const platform = createMockPlatform();
    let accept = '';
    platform
      .regional('eu-central')
      .intercept({ path: contentsPath, method: 'GET' })
      .reply((request) => {
        accept = (request.headers as Record<string, string>).accept ?? '';
        return { statusCode: 200, data: csv, responseOptions: csvHeaders };
      });
    const target = join(directory, 'out.csv');
    const result = await platform
      .client()
      .download('consumptionAnalytics.downloadReportContents', { id: 'rep-1' }, target);
    expect(result).toEqual({
      bytesWritten: Buffer.byteLength(csv),
      lines: 2001,
      filename: 'usage-2026-01.csv',
      path: target,
      contentType: 'text/csv',
    });
    expect(await readFile(target, 'utf8')).toBe(csv);
    expect(accept).toBe('text/csv');
    expect(await readdir(directory)).toEqual(['out.csv']);
  });

  it('names the file from Content-Disposition when the destination is a directory', async () => {
    const platform = createMockPlatform();
    platform.regional('eu-central').intercept({ path: contentsPath, method: 'GET' }).reply(200, csv, csvHeaders);
    const result = await platform
      .client()
      .download('consumptionAnalytics.downloadReportContents', { id: 'rep-1' }, directory);
    expect(result.path).toBe(join(directory, 'usage-2026-01.csv'));
    expect(await readFile(join(directory, 'usage-2026-01.csv'), 'utf8')).toBe(csv);
  });

  it('streams to a writable stream', async () => {
    const platform = createMockPlatform();
    platform.regional('eu-central').intercept({ path: contentsPath, method: 'GET' }).reply(200, csv, csvHeaders);
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (chunk: Buffer) => chunks.push(chunk));
    const result = await platform
      .client()
      .download('consumptionAnalytics.downloadReportContents', { id: 'rep-1' }, sink);
    expect(result.bytesWritten).toBe(Buffer.byteLength(csv));
    expect(result.lines).toBe(2001);
    expect(Buffer.concat(chunks).toString()).toBe(csv);
  });

  it('with sumColumns, counts the CSV records and sums the columns as it streams (quotes, CRLF, blank lines)', async () => {
    const platform = createMockPlatform();
    const quoted =
      'product,"cost",note\r\n"Storage, block",10.25,"said ""hi"""\r\n"Compute\nlarge",5,\r\n\r\nNetwork,,"a,b"\r\nBackup,n/a,x';
    platform.regional('eu-central').intercept({ path: contentsPath, method: 'GET' }).reply(200, quoted, csvHeaders);
    const target = join(directory, 'out.csv');
    const result = await platform
      .client()
      .download('consumptionAnalytics.downloadReportContents', { id: 'rep-1' }, { path: target, sumColumns: ['cost'] });
    // Four records: the quoted line break stays in its record, the blank line is none; an empty cell adds 0, 'n/a' is counted apart.
    expect(result).toMatchObject({ path: target, rows: 4, sums: { cost: 15.25 }, nonNumeric: { cost: 1 } });
    expect(await readFile(target, 'utf8')).toBe(quoted);
  });

  it('with sumColumns, sums cells of every form as Number reads them (signs, points, spaces, exponents, hex, long)', async () => {
    const platform = createMockPlatform();
    const cells = [
      '1',
      '-2.5',
      '+0.125',
      ' 7 ',
      '.5',
      '3.',
      '1e3',
      '0x10',
      '12345678901234567',
      '0.1',
      '0.2',
      '-0',
      '""',
    ];
    const body = `name,cost\n${cells.map((cell, index) => `r${index},${cell}`).join('\n')}\nbad,1.2.3\nalso,Infinity\n`;
    platform.regional('eu-central').intercept({ path: contentsPath, method: 'GET' }).reply(200, body, csvHeaders);
    const result = await platform
      .client()
      .download(
        'consumptionAnalytics.downloadReportContents',
        { id: 'rep-1' },
        { path: join(directory, 'out.csv'), sumColumns: ['cost'] },
      );
    const expected = cells
      .map((cell) => Number(cell.replaceAll('"', '').trim()))
      .reduce((sum, value) => sum + value, 0);
    expect(result).toMatchObject({ rows: cells.length + 2, sums: { cost: expected }, nonNumeric: { cost: 2 } });
  });

  it('with sumColumns, reads column names beyond ASCII and a byte order mark (the parser reads bytes, not text)', async () => {
    const platform = createMockPlatform();
    const body = '\uFEFFproduit,"coût €",note\nstockage « bloc »,1.5,é\nréseau,2,"ü, ""ß"""\n';
    platform.regional('eu-central').intercept({ path: contentsPath, method: 'GET' }).reply(200, body, csvHeaders);
    const target = join(directory, 'out.csv');
    const result = await platform
      .client()
      .download(
        'consumptionAnalytics.downloadReportContents',
        { id: 'rep-1' },
        { path: target, sumColumns: ['coût €'] },
      );
    expect(result).toMatchObject({ rows: 2, sums: { 'coût €': 3.5 } });
    expect(await readFile(target, 'utf8')).toBe(body);
  });

  it('with sumColumns, names a column the header lacks and leaves no file', async () => {
    const platform = createMockPlatform();
    platform.regional('eu-central').intercept({ path: contentsPath, method: 'GET' }).reply(200, csv, csvHeaders);
    const target = join(directory, 'out.csv');
    await expect(
      platform
        .client()
        .download(
          'consumptionAnalytics.downloadReportContents',
          { id: 'rep-1' },
          { path: target, sumColumns: ['cost', 'price'] },
        ),
    ).rejects.toThrow("the CSV has no column 'price' to sum (its columns: date, cost)");
    expect(await readdir(directory)).toEqual([]);
  });

  it('leaves no file behind when the report does not exist', async () => {
    const platform = createMockPlatform();
    platform
      .regional('eu-central')
      .intercept({ path: contentsPath, method: 'GET' })
      .reply(404, { message: 'report not found' });
    const target = join(directory, 'out.csv');
    await expect(
      platform.client().download('consumptionAnalytics.downloadReportContents', { id: 'rep-1' }, target),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await readdir(directory)).toEqual([]);
  });
});

describe('contentDispositionFilename', () => {
  it('reads plain and extended names and never leaves the directory', () => {
    expect(contentDispositionFilename('attachment; filename="a b.csv"')).toBe('a b.csv');
    expect(contentDispositionFilename('attachment; filename=plain.csv')).toBe('plain.csv');
    expect(contentDispositionFilename('attachment; filename="x.csv"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.csv')).toBe(
      'résumé.csv',
    );
    expect(contentDispositionFilename('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(contentDispositionFilename('attachment')).toBeUndefined();
    expect(contentDispositionFilename(undefined)).toBeUndefined();
  });
});

describe('CellBytes.plainDecimal', () => {
  const cellOf = (text: string): CellBytes => {
    const cell = new CellBytes();
    for (const byte of Buffer.from(text)) cell.push(byte);
    return cell;
  };

  it('reads a plain decimal as Number does, without its text', () => {
    for (const text of [
      '0',
      '42',
      '-7',
      '+3',
      '0.1',
      '-0.3',
      '.5',
      '5.',
      ' 12.75\t',
      '999999999999999',
      '0.00000000000001',
      '-0',
    ]) {
      expect(Object.is(cellOf(text).plainDecimal(), Number(text.trim())), text).toBe(true);
    }
  });

  it('leaves anything else to the text: empty, exponents, hexadecimal, 16 digits, words, two points', () => {
    for (const text of ['', '  ', '-', '.', '1e3', '0x10', '1234567890123456', '12a', '1.2.3', 'Infinity', '1 2']) {
      expect(cellOf(text).plainDecimal(), text).toBeUndefined();
    }
  });

  it('grows past its first 256 bytes', () => {
    const long = 'x'.repeat(1000);
    expect(cellOf(long).text()).toBe(long);
  });
});
