import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, readLines } from './ingest-kit.ts';

const lines = async (chunks: (string | Buffer)[]) => {
  const read: { line: string; number: number }[] = [];
  for await (const line of readLines(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))))) read.push(line);
  return read.map((l) => `${l.number}:${l.line}`);
};

describe('readLines', () => {
  it('splits on \\n and \\r\\n across chunk boundaries, drops a BOM, keeps a last line without newline', async () => {
    expect(await lines(['\uFEFFa:1\r\nb:', '2\n\nc:3'])).toEqual(['1:a:1', '2:b:2', '3:', '4:c:3']);
  });

  it('decodes multi-byte characters split between chunks', async () => {
    const text = Buffer.from('пароль:секрет\nok');
    expect(await lines([text.subarray(0, 3), text.subarray(3)])).toEqual(['1:пароль:секрет', '2:ok']);
  });

  it('cuts a line longer than the limit and goes on with the next one', async () => {
    const long = Buffer.alloc(MAX_LINE_BYTES + 10, 0x78);
    const read = await lines([long.subarray(0, 600_000), long.subarray(600_000), '\nnext\n']);
    expect(read).toHaveLength(2);
    expect(read[0]!.length).toBe(`1:`.length + MAX_LINE_BYTES);
    expect(read[1]).toBe('2:next');
  });
});
