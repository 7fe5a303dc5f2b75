import { createRequire } from 'node:module';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import PDFDocument from 'pdfkit';
import { create } from 'xmlbuilder2';
import type { ExportItem } from './search.service.ts';

// Messages are in every script (Cyrillic, Arabic, …): the PDF standard fonts cover Latin only,
// so the report embeds DejaVu Sans.
const fontDir = path.join(path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const FONT = path.join(fontDir, 'DejaVuSans.ttf');
const FONT_BOLD = path.join(fontDir, 'DejaVuSans-Bold.ttf');

export const exportFormats = ['csv', 'json', 'xml', 'pdf'] as const;
export type ExportFormat = (typeof exportFormats)[number];

export interface ExportInput {
  history: {
    id: number;
    query: string;
    parsed_query: string;
    total_matches: number;
    channels_matched: number;
    searched_at: string;
  };
  items: ExportItem[];
}

export const contentTypes: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  pdf: 'application/pdf',
};

const columns = [
  'message_id',
  'channel_id',
  'channel_username',
  'user_id',
  'date',
  'text',
  'has_media',
  'media_type',
  'file_name',
  'links',
  'channel_count',
  'channels_list',
] as const;

const cellText = (item: ExportItem, column: (typeof columns)[number]): string => {
  const value = item[column];
  if (value === null || value === undefined) return '';
  return Array.isArray(value) ? value.join(' ') : String(value);
};

/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection": = + - @, tab, CR) gets a
 * leading apostrophe so it is shown as text.
 */
export const neutralizeFormula = (cell: string): string => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell);

function toCsv(input: ExportInput): string {
  const rows = input.items.map((item) => columns.map((c) => neutralizeFormula(cellText(item, c))));
  return stringify([[...columns], ...rows], { bom: true });
}

function toJson(input: ExportInput): string {
  const results = input.items.map(({ text_preview: _preview, ...item }) => item);
  return JSON.stringify({ search: input.history, results }, null, 2);
}

// XML 1.0 cannot carry most control characters even escaped; drop them rather than emit a
// document no parser accepts.
const xmlSafe = (value: string) => value.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '');

function toXml(input: ExportInput): string {
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('search');
  for (const [key, value] of Object.entries(input.history)) root.ele(key).txt(xmlSafe(String(value)));
  const results = root.ele('results');
  for (const item of input.items) {
    const message = results.ele('message');
    for (const column of columns) {
      const value = item[column];
      const element = message.ele(column);
      if (Array.isArray(value)) for (const entry of value) element.ele(column === 'links' ? 'link' : 'channel').txt(xmlSafe(entry));
      else if (value !== null && value !== undefined) element.txt(xmlSafe(String(value)));
    }
  }
  return root.end({ prettyPrint: true });
}

function toPdf(input: ExportInput): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', margin: 40, info: { Title: `Dragnet search ${input.history.id}` } });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);

    doc.font(FONT_BOLD).fontSize(18).text('Dragnet messenger search report');
    doc.font(FONT);
    doc.moveDown(0.5).fontSize(10);
    doc.text(`Query: ${input.history.query}`);
    doc.text(`Parsed: ${input.history.parsed_query}`);
    doc.text(`Searched at: ${input.history.searched_at}`);
    doc.text(`Matches: ${input.history.total_matches} in ${input.history.channels_matched} channels` +
      (input.items.length < input.history.total_matches ? ` (this report lists the newest ${input.items.length})` : ''));
    doc.moveDown();

    const x = doc.page.margins.left;
    const widths = [110, 90, 315];
    const header = ['Date (UTC)', 'Channel', 'Message'];
    const row = (cells: string[], bold: boolean) => {
      doc.font(bold ? FONT_BOLD : FONT).fontSize(8);
      const height = Math.max(...cells.map((cell, i) => doc.heightOfString(cell, { width: widths[i]! })));
      if (doc.y + height > doc.page.height - doc.page.margins.bottom) doc.addPage();
      const top = doc.y;
      let left = x;
      cells.forEach((cell, i) => {
        doc.text(cell, left, top, { width: widths[i]! });
        left += widths[i]! + 5;
      });
      doc.x = x;
      doc.y = top + height + 4;
    };
    row(header, true);
    for (const item of input.items) {
      const text = item.text.length > 600 ? `${item.text.slice(0, 600)}…` : item.text;
      row([item.date.replace('T', ' ').replace(/\.\d+Z$/, ''), item.channel_username ?? item.channels_list?.[0] ?? String(item.channel_id), text], false);
    }
    doc.end();
  });
}

export async function renderExport(format: ExportFormat, input: ExportInput): Promise<string | Buffer> {
  switch (format) {
    case 'csv':
      return toCsv(input);
    case 'json':
      return toJson(input);
    case 'xml':
      return toXml(input);
    case 'pdf':
      return toPdf(input);
  }
}

/** PDFs are for reading: the newest this many rows; the data formats carry the whole snapshot. */
export const exportRowLimit = (format: ExportFormat): number => (format === 'pdf' ? 1000 : 100_000);
