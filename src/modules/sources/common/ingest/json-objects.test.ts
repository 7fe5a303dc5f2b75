import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jsonObjects, type JsonObjectText } from './json-objects.ts';

/** The objects of `text` read in chunks of `size` bytes (a multi-byte character may be split). */
async function objectsOf(text: string, size: number, maxChars = 1000): Promise<JsonObjectText[]> {
  const bytes = Buffer.from(text);
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
    bytes.subarray(i * size, (i + 1) * size),
  );
  const found: JsonObjectText[] = [];
  for await (const object of jsonObjects(Readable.from(chunks), { maxChars })) found.push(object);
  return found;
}

describe('jsonObjects', () => {
  const a = '{"name":"a}{\\"b","n":{"x":[1,{"y":"é"}]}}';
  const b = '{"name":"ü{"}';

  it('finds the objects of every layout, whatever the chunk size, braces in strings and escapes included', async () => {
    for (const text of [`${a}\n${b}\n`, `[\n  ${a},\n  ${b}\n]`, `${a}${b}`, `\uFEFF${a}\r\n\r\n${b}`]) {
      for (const size of [1, 2, 3, 7, 4096]) {
        const found = await objectsOf(text, size);
        expect(
          found.map((object) => ('text' in object ? JSON.parse(object.text) : object)),
          `${JSON.stringify(text)} in chunks of ${size}`,
        ).toEqual([JSON.parse(a), JSON.parse(b)]);
      }
    }
  });

  it('says where an object starts, and rejects stray text, a cut-off end and an object too large, going on after each', async () => {
    expect(await objectsOf(`${a}\nnot json\n\n${b}\n{"big":"${'x'.repeat(50)}"}\n${a}\n{"cut":`, 5, 40)).toEqual([
      { line: 1, text: a },
      { line: 2, error: 'not JSON' },
      { line: 4, text: b },
      { line: 5, error: 'an object larger than 40 characters' },
      { line: 6, text: a },
      { line: 7, error: 'cut off: the input ends inside this object' },
    ]);
  });
});
