import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readJsonLines } from './jsonl.ts';

const record = (id: number) =>
  JSON.stringify({ channel: { username: 'c', title: 'C' }, message_id: id, text: `текст ${id} ✓`, date: 1735689600 });

/** The message ids read and the rejections, with the input cut into chunks of `size` bytes. */
async function read(text: string, size: number) {
  const bytes = Buffer.from(text);
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
    bytes.subarray(i * size, (i + 1) * size),
  );
  const rejected: { location: string; reason: string }[] = [];
  const ids: number[] = [];
  for await (const batch of readJsonLines(Readable.from(chunks), 'input', rejected))
    ids.push(...batch.messages.map((m) => m.messageId));
  return { ids, rejected: rejected.map((r) => r.location) };
}

describe('readJsonLines', () => {
  it('ends lines at \\n, \\r\\n and a lone \\r, wherever the chunks are cut, multi-byte characters too', async () => {
    const text = [record(1), '', record(2), '[]', record(3), '  ', record(4)].join('\n').replace('\n', '\r\n');
    const lone = `${record(5)}\r\r\n[]\r${record(6)}\r`;
    for (const size of [1, 2, 3, 5, 64, 1 << 16]) {
      expect(await read(text, size)).toEqual({ ids: [1, 2, 3, 4], rejected: ['line 4'] });
      expect(await read(lone, size)).toEqual({ ids: [5, 6], rejected: ['line 3'] });
    }
  });

  it('names the line of malformed JSON, the last one without a line end too', async () => {
    await expect(read(`${record(1)}\n${record(2)}\n{"broken`, 7)).rejects.toThrow(/line 3/);
  });
});
