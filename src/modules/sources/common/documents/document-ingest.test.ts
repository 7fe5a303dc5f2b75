import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError, MAX_LINE_BYTES } from '../ingest/ingest-kit.ts';
import { jsonLines, readJsonDocument, type DocumentRecord } from './document-ingest.ts';
import { storable } from './document-store.ts';
import { isJsonObject, parseDate, RecordError } from './record-fields.ts';

describe('document ingest helpers', () => {
  let dir: string;
  const file = (name: string, content: string) => {
    const target = path.join(dir, name);
    writeFileSync(target, content);
    return target;
  };
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-documents-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('JSON Lines: each line a record, numbered; blank lines skipped; bad JSON, bad records and cut lines rejected with their line', async () => {
    const read = jsonLines((value) => {
      if (!isJsonObject(value) || typeof value.id !== 'string') throw new RecordError('id is required');
      return { key: value.id, text: String(value.text), fields: { id: value.id } };
    });
    const input = file(
      'posts.jsonl',
      [
        '{"id":"a","text":"one"}',
        '',
        '{"id":',
        '{"text":"no id"}',
        `{"id":"long","text":"${'x'.repeat(MAX_LINE_BYTES)}"}`,
        '{"id":"b","text":"two"}\r',
        '',
      ].join('\n'),
    );
    const records: DocumentRecord[] = [];
    for await (const record of read(input)) records.push(record);
    expect(records.map(({ location, record }) => [location, typeof record === 'string' ? record : record.key])).toEqual(
      [
        ['line 1', 'a'],
        ['line 3', 'not valid JSON'],
        ['line 4', 'id is required'],
        ['line 5', 'longer than 1 MiB (a line is read up to that)'],
        ['line 6', 'b'],
      ],
    );
  });

  it('a JSON document is read whole only up to its cap', async () => {
    expect(await readJsonDocument(file('list.json', '\uFEFF[{"key":"0CeaNm8Y"}]'), 1024)).toEqual([
      { key: '0CeaNm8Y' },
    ]);
    const big = file('big.json', JSON.stringify({ messages: 'x'.repeat(3 << 20) }));
    await expect(readJsonDocument(big, 2 << 20)).rejects.toThrow(
      new IngestError(big, 'size', 'larger than the 2 MiB a JSON document is read whole up to'),
    );
    const broken = file('broken.json', '[\n  {"key": }\n]');
    await expect(readJsonDocument(broken, 1024)).rejects.toThrow(/: line \d+, column \d+: malformed JSON$/);
  });

  it('dates: ISO 8601 with or without a zone (none is UTC), or epoch seconds as a number or digits', () => {
    expect(parseDate('2026-03-10T08:15:00Z')).toBe(Date.parse('2026-03-10T08:15:00Z'));
    expect(parseDate('2026-03-10T08:15:00.5+02:00')).toBe(Date.parse('2026-03-10T06:15:00.5Z'));
    expect(parseDate('2026-03-10 08:15')).toBe(Date.parse('2026-03-10T08:15:00Z'));
    expect(parseDate('2026-03-10')).toBe(Date.parse('2026-03-10T00:00:00Z'));
    expect(parseDate('1442911802')).toBe(1_442_911_802_000);
    expect(parseDate(1442911802.5)).toBe(1_442_911_802_500);
    for (const bad of ['March 10, 2026', '2026-13-40', '', null, true, -5])
      expect(parseDate(bad), String(bad)).toBeNull();
  });

  it('text the store cannot keep on PostgreSQL (NUL, a lone surrogate) is replaced, a surrogate pair is kept', () => {
    expect(storable('a\0b\uD800c😀')).toBe('ab\uFFFDc😀');
  });
});
