import { createReadStream, existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../common/ingest/ingest-kit.ts';
import { MAX_POSTS_ARRAY_BYTES, readPosts, type PostEntry } from './post-ingest.ts';

const collect = async (entries: AsyncIterable<PostEntry>) => {
  const all: PostEntry[] = [];
  for await (const entry of entries) all.push(entry);
  return all;
};
const postsOf = (text: string | Buffer[]) =>
  collect(readPosts(Readable.from(typeof text === 'string' ? [Buffer.from(text)] : text), 'input'));

// A real ransomware.live posts.json excerpt (../shared/fixtures/SOURCES.md), read where it is, never copied here.
const FIXTURE = fileURLToPath(
  new URL('../../../../../shared/fixtures/ransomware_live/posts.excerpt.json', import.meta.url),
);

describe('the ransomware.live posts.json excerpt', () => {
  it('reads all 14 records of both shapes, dates in UTC, websites as written (where the excerpt is present)', async () => {
    if (!existsSync(FIXTURE)) return;
    const entries = await collect(readPosts(createReadStream(FIXTURE), FIXTURE));
    expect(entries.map((entry) => entry.location)).toEqual(Array.from({ length: 14 }, (_, i) => `record ${i + 1}`));
    const posts = entries.map((entry) => entry.record);
    expect(posts.every((post) => typeof post !== 'string')).toBe(true);
    expect(posts[0]).toEqual({
      group: 'suncrypt',
      victim: 'Cornerstone Automation Systems, LLC',
      website: null,
      description: null,
      country: null,
      activity: null,
      postUrl: null,
      permalink: null,
      publishedAt: Date.parse('2021-09-09T23:46:53.997Z'),
      listedAt: Date.parse('2021-09-09T23:46:53.997Z'),
    });
    expect(posts[6]).toMatchObject({
      group: 'play',
      victim: 'Garage Living, The Dispenser USA',
      website: 'www.garageliving.com, www.dispenser.com',
      description: 'Ontario, Canada',
      postUrl: 'http://mbrlkbtq5jonaqkurjwmxftytyn2ethqvbxfu4rgjbkkknndqwae6byd.onion/topic.php?id=2rCMxUOMZvVzLz',
      publishedAt: Date.parse('2023-08-01T20:34:14.883Z'),
      listedAt: Date.parse('2023-08-01T20:34:14.883Z'),
    });
    // Published days before ransomware.live saw it.
    expect(posts[8]).toMatchObject({
      victim: 'ohiohistory.org',
      website: null,
      publishedAt: Date.parse('2023-07-27T13:33:00Z'),
      listedAt: Date.parse('2023-08-02T08:57:29.831Z'),
    });
    expect(posts[10]).toMatchObject({ victim: 'SHERMAN.EDU', group: 'clop', website: 'https://www.SHERMAN.EDU' });
  });
});

describe('reading posts', () => {
  const record = (victim: string) => ({
    post_title: victim,
    group_name: 'play',
    published: '2024-01-02 03:04:05.000000',
    discovered: '2024-01-02 04:00:00.000000',
  });

  it('reads a JSON array (with a byte-order mark and leading blank lines), numbering records', async () => {
    const entries = await postsOf(
      `\uFEFF\n  [${JSON.stringify(record('One'))}, 42, ${JSON.stringify({ group_name: 'play' })}]`,
    );
    expect(entries).toEqual([
      { location: 'record 1', record: expect.objectContaining({ victim: 'One' }) },
      { location: 'record 2', record: 'not a JSON object' },
      { location: 'record 3', record: 'post_title (or victim) is missing' },
    ]);
  });

  it('reads JSON Lines split anywhere across chunks, numbering lines and skipping blank ones', async () => {
    const text = `${JSON.stringify(record('One'))}\n\n{"post_title": broken\n${JSON.stringify(record('Two'))}\r\n`;
    const chunks = [...Buffer.from(text)].map((byte) => Buffer.from([byte]));
    expect(await postsOf(chunks)).toEqual([
      { location: 'line 1', record: expect.objectContaining({ victim: 'One' }) },
      { location: 'line 3', record: 'not valid JSON' },
      { location: 'line 4', record: expect.objectContaining({ victim: 'Two' }) },
    ]);
  });

  it('reads bare NaN and Infinity tokens (Python json.dumps of a pandas frame) as null, leaving strings alone', async () => {
    const line =
      '{"victim": "NaN Industries", "group": "play", "attackdate": NaN, "discovered": "2024-01-02 04:00:00", "country": -Infinity, "description": "a \\"NaN\\" in text"}';
    const [entry] = await postsOf(`[${line}]`);
    expect(entry!.record).toMatchObject({
      victim: 'NaN Industries',
      country: null,
      description: 'a "NaN" in text',
      publishedAt: Date.parse('2024-01-02T04:00:00Z'),
    });
    expect((await postsOf(line))[0]!.record).toMatchObject({ victim: 'NaN Industries', country: null });
  });

  it('an empty input has no posts', async () => {
    expect(await postsOf('')).toEqual([]);
    expect(await postsOf(' \n ')).toEqual([]);
  });

  it('a broken JSON array fails the input, saying why', async () => {
    const failure = postsOf(`[\n${JSON.stringify(record('One'))},\n{"post_title": }\n]`);
    await expect(failure).rejects.toBeInstanceOf(IngestError);
    await expect(failure).rejects.toThrow(/^input: line \d+, column \d+: not valid JSON: Unexpected token '}'/);
  });

  it('a JSON array over the cap fails the input before it is parsed', async () => {
    const mib = Buffer.alloc(2 ** 20, 0x20);
    const chunks = [
      Buffer.from('['),
      ...Array.from({ length: MAX_POSTS_ARRAY_BYTES / 2 ** 20 }, () => mib),
      Buffer.from(']'),
    ];
    await expect(postsOf(chunks)).rejects.toThrow(
      `input: size: a JSON array over 64 MiB is not read whole: convert it to JSON Lines (jq -c '.[]')`,
    );
  });
});
