import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { csvRows } from '../../lib/csv.ts';
import type { ExportItem } from './search.types.ts';

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
  /** How many results the export lists (the newest of the search's matches). */
  listed: number;
  /** The results, newest first, a batch at a time as the store reads them. */
  batches: AsyncIterable<ExportItem[]>;
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

async function* toCsv(input: ExportInput): AsyncGenerator<string> {
  yield csvRows([[...columns]], { bom: true });
  for await (const batch of input.batches) yield csvRows(batch.map((item) => columns.map((c) => cellText(item, c))));
}

const indented = (value: unknown, depth: number) =>
  JSON.stringify(value, null, 2).replaceAll('\n', `\n${' '.repeat(depth)}`);

/** `{ "search": …, "results": [ … ] }` written as the results arrive, laid out as JSON.stringify(…, null, 2) would. */
async function* toJson(input: ExportInput): AsyncGenerator<string> {
  yield `{\n  "search": ${indented(input.history, 2)},\n  "results": [`;
  let first = true;
  for await (const batch of input.batches) {
    const parts = batch.map(({ text_preview: _preview, ...item }) => `\n    ${indented(item, 4)}`);
    if (parts.length === 0) continue;
    yield (first ? '' : ',') + parts.join(',');
    first = false;
  }
  yield first ? ']\n}' : '\n  ]\n}';
}

// XML 1.0 cannot carry most control characters even escaped; drop them rather than emit a
// document no parser accepts.
const xmlSafe = (value: string) => value.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '');

/** The document's head and tail are written around the results, each result serialized on its own. */
async function* toXml(input: ExportInput): AsyncGenerator<string> {
  // Loaded on first use, like pdfkit: every `dragnet` command would otherwise pay for both.
  const { create } = await import('xmlbuilder2');
  const head = create().ele('search');
  for (const [key, value] of Object.entries(input.history)) head.ele(key).txt(xmlSafe(String(value)));
  const summary = head.end({ headless: true, prettyPrint: true });
  yield `<?xml version="1.0" encoding="UTF-8"?>\n${summary.replace(/<\/search>$/, '')}  <results>\n`;
  for await (const batch of input.batches) {
    const messages = batch.map((item) => {
      const message = create().ele('message');
      for (const column of columns) {
        const value = item[column];
        const element = message.ele(column);
        if (Array.isArray(value))
          for (const entry of value) element.ele(column === 'links' ? 'link' : 'channel').txt(xmlSafe(entry));
        else if (value !== null && value !== undefined) element.txt(xmlSafe(String(value)));
      }
      return message.end({ headless: true, prettyPrint: true, indent: '  ', offset: 2 });
    });
    yield `${messages.join('\n')}\n`;
  }
  yield '  </results>\n</search>';
}

/** The PDF is written row by row as the results arrive (pdfkit streams the pages it finishes). */
async function* toPdf(input: ExportInput): AsyncGenerator<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: 40, info: { Title: `Dragnet search ${input.history.id}` } });
  doc.font(FONT_BOLD).fontSize(18).text('Dragnet messenger search report');
  doc.font(FONT);
  doc.moveDown(0.5).fontSize(10);
  doc.text(`Query: ${input.history.query}`);
  doc.text(`Parsed: ${input.history.parsed_query}`);
  doc.text(`Searched at: ${input.history.searched_at}`);
  doc.text(
    `Matches: ${input.history.total_matches} in ${input.history.channels_matched} channels` +
      (input.listed < input.history.total_matches ? ` (this report lists the newest ${input.listed})` : ''),
  );
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
  (async () => {
    for await (const batch of input.batches) {
      for (const item of batch) {
        const text = item.text.length > 600 ? `${item.text.slice(0, 600)}…` : item.text;
        row(
          [
            item.date.replace('T', ' ').replace(/\.\d+Z$/, ''),
            item.channel_username ?? item.channels_list?.[0] ?? String(item.channel_id),
            text,
          ],
          false,
        );
      }
    }
    doc.end();
  })().catch((error: unknown) => doc.destroy(error instanceof Error ? error : new Error(String(error))));
  yield* doc;
}

/** The export as a stream: its rows are read from the store while it is being sent. */
export function renderExport(format: ExportFormat, input: ExportInput): Readable {
  switch (format) {
    case 'csv':
      return Readable.from(toCsv(input));
    case 'json':
      return Readable.from(toJson(input));
    case 'xml':
      return Readable.from(toXml(input));
    case 'pdf':
      return Readable.from(toPdf(input));
  }
}

/** PDFs are for reading: the newest this many rows; the data formats carry the newest 100,000. */
export const exportRowLimit = (format: ExportFormat): number => (format === 'pdf' ? 1000 : 100_000);
