/**
 * Renders a generated report in the requested format. Reports are small (world records),
 * so they are rendered whole. EXCEL is the XML spreadsheet format spreadsheet programs
 * open; PDF is a minimal one-page-per-60-lines text document.
 */
export type ReportFormat = 'CSV' | 'TXT' | 'EXCEL' | 'PDF';

export interface RenderedReport {
  contentType: string;
  extension: string;
  body: Buffer;
}

type Cell = string | number;

function csvCell(value: Cell): string {
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function spreadsheet(columns: readonly string[], rows: readonly Cell[][]): string {
  const row = (cells: readonly Cell[]) =>
    `<Row>${cells.map((c) => `<Cell><Data ss:Type="${typeof c === 'number' ? 'Number' : 'String'}">${xmlEscape(String(c))}</Data></Cell>`).join('')}</Row>`;
  return [
    '<?xml version="1.0"?>',
    '<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">',
    '<Worksheet ss:Name="Report"><Table>',
    row(columns),
    ...rows.map(row),
    '</Table></Worksheet></Workbook>',
  ].join('\n');
}

function pdfEscape(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, '?');
}

/** A valid PDF with the report as monospaced text, 60 lines per page. */
function pdf(title: string, lines: readonly string[]): Buffer {
  const pages: string[][] = [];
  const all = [title, '', ...lines];
  for (let i = 0; i < all.length; i += 60) pages.push(all.slice(i, i + 60));
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>';
  pages.forEach((page, i) => {
    const content = `BT /F1 9 Tf 11 TL 36 806 Td ${page.map((line) => `(${pdfEscape(line)}) '`).join(' ')} ET`;
    objects[pageIds[i]!] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`;
    objects[pageIds[i]! + 1] = `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id += 1) {
    offsets[id] = Buffer.byteLength(out);
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id += 1) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export function renderReport(
  format: ReportFormat,
  title: string,
  columns: readonly string[],
  rows: readonly Cell[][],
): RenderedReport {
  switch (format) {
    case 'CSV':
      return {
        contentType: 'text/csv; charset=utf-8',
        extension: 'csv',
        body: Buffer.from([columns, ...rows].map((r) => r.map(csvCell).join(',')).join('\n') + '\n'),
      };
    case 'TXT':
      return {
        contentType: 'text/plain; charset=utf-8',
        extension: 'txt',
        body: Buffer.from([columns, ...rows].map((r) => r.map(String).join('\t')).join('\n') + '\n'),
      };
    case 'EXCEL':
      return {
        contentType: 'application/vnd.ms-excel',
        extension: 'xls',
        body: Buffer.from(spreadsheet(columns, rows)),
      };
    case 'PDF':
      return {
        contentType: 'application/pdf',
        extension: 'pdf',
        body: pdf(
          title,
          [columns, ...rows].map((r) => r.map(String).join('  ')),
        ),
      };
  }
}
