import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  IngestError,
  jsonErrorLocation,
  MAX_LINE_BYTES,
  newInputResult,
  openInput,
  readLines,
  storeInBatches,
  type ReadRecord,
} from './ingest-kit.ts';

const lines = async (chunks: (string | Buffer)[]) => {
  const read: { line: string; number: number }[] = [];
  for await (const line of readLines(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)))))
    read.push(line);
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

/** Where JSON.parse fails on `text`, as the kit reports it. */
const failureIn = (text: string) => {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonErrorLocation(text, error);
  }
  throw new Error(`${text} is valid JSON`);
};

describe('jsonErrorLocation', () => {
  it('turns the position V8 gives into a line and column', () => {
    expect(failureIn('{"a":\n  1x}')).toBe('line 2, column 4');
    expect(failureIn('{"a":1}\r\n{"b":2}')).toBe('line 2, column 1');
    // Newer V8s add their own line and column; the position is what counts.
    expect(
      jsonErrorLocation(
        '{"a":1}\n{"b":2}',
        new SyntaxError('Unexpected non-whitespace character after JSON at position 8 (line 2 column 1)'),
      ),
    ).toBe('line 2, column 1');
  });

  it('puts an input that ends early at its end', () => {
    expect(failureIn('{"a":\n[1,')).toBe('line 2, column 4');
    expect(failureIn('')).toBe('line 1, column 1');
  });

  it('finds an unexpected token from the text V8 quotes around it, short or long, at the start, middle or end', () => {
    expect(failureIn('{"a": tru}')).toBe('line 1, column 10');
    expect(failureIn('{"a": tru, "bbbbbbbbbbbbbbbbbbbbbbbbbb": 1}')).toBe('line 1, column 10');
    expect(failureIn('{\n  "name": "alpha",\n  "value": tru,\n  "other": "zzzzzzzzzzzzzzzzzzzz"\n}')).toBe(
      'line 3, column 15',
    );
    expect(failureIn('["aaaaaaaaaaaaaaaaaaaaaaaaaaaa",\n tru]')).toBe('line 2, column 5');
    expect(failureIn('undefined')).toBe('line 1, column 1');
  });

  it('quotes V8 rather than guess when its quote fits more than one place', () => {
    const text = '["[0,0,0,0,0,x,0,0,0,0,0]", [0,0,0,0,0,x,0,0,0,0,0]]';
    const location = failureIn(text);
    // A V8 that gives the position here is taken at its word.
    expect(['near "0,0,0,0,0,x,0,0,0,0,"', 'line 1, column 40']).toContain(location);
    expect(jsonErrorLocation('{}', new Error('not from JSON.parse'))).toBe('position unknown');
  });
});

describe('storeInBatches', () => {
  const recordsOf = async function* (entries: (number | string | Error)[]): AsyncGenerator<ReadRecord<number>> {
    for (const [i, entry] of entries.entries()) {
      if (entry instanceof Error) throw entry;
      yield { location: `line ${i + 1}`, record: entry };
    }
  };
  const store = async (entries: (number | string | Error)[], options: { keepBeforeFailure?: boolean } = {}) => {
    const result = newInputResult('input');
    const batches: number[][] = [];
    const lines: string[] = [];
    const progress = { start() {}, advance() {}, finish: (line: string) => lines.push(line) };
    const write = async (batch: number[]) => {
      batches.push([...batch]);
      return { added: batch.filter((n) => n > 0).length, duplicates: batch.filter((n) => n <= 0).length };
    };
    await storeInBatches({
      result,
      records: recordsOf(entries),
      batchSize: 2,
      write,
      noun: 'numbers',
      progress,
      ...options,
    });
    return { result, batches, lines };
  };

  it('writes full batches as they fill and the rest at the end, counting and rejecting into the result', async () => {
    const { result, batches, lines } = await store([1, 'no number', 2, 0, 3]);
    expect(batches).toEqual([[1, 2], [0, 3], []]);
    expect(result).toMatchObject({
      ok: true,
      records: 4,
      added: 3,
      duplicates: 1,
      rejected: 1,
      rejections: [{ location: 'line 2', reason: 'no number' }],
    });
    expect(lines).toEqual(['input: 4 numbers read, 3 added, 1 duplicates skipped, 1 rejected']);
  });

  it('fails the input on an IngestError, dropping the unwritten batch unless the records before are whole', async () => {
    const failure = new IngestError('input', 'line 4', 'truncated');
    const dropped = await store([1, 2, 3, failure]);
    expect(dropped.batches).toEqual([[1, 2]]);
    expect(dropped.result).toMatchObject({ ok: false, records: 3, added: 2, error: 'input: line 4: truncated' });
    expect(dropped.lines).toEqual(['input: FAILED: input: line 4: truncated']);
    expect((await store([1, 2, 3, failure], { keepBeforeFailure: true })).batches).toEqual([[1, 2], [3]]);
  });

  it('lets any other error through: a fault of ours, not of the input', async () => {
    const fault = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    await expect(store([1, fault])).rejects.toBe(fault);
  });

  it('fails an input its stream cannot read (EISDIR), closing the stream', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'ingest-kit-'));
    try {
      const result = newInputResult(folder);
      const { stream } = openInput(folder);
      const lines = async function* () {
        for await (const { line, number } of readLines(stream)) yield { location: `line ${number}`, record: line };
      };
      await storeInBatches({
        result,
        records: lines(),
        batchSize: 2,
        write: async () => ({ added: 0, duplicates: 0 }),
        stream,
        noun: 'lines',
      });
      expect(result.ok).toBe(false);
      expect(result.error).toMatch(new RegExp(`^${folder}: read: EISDIR`));
      expect(stream.destroyed).toBe(true);
    } finally {
      rmSync(folder, { recursive: true });
    }
  });
});
