import { createReadStream, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readLines } from '../common/ingest/ingest-kit.ts';
import { shortenerOfFileName, shortenerOfPrefix } from './short-link-ingest.ts';
import { losslessText, MAX_SHORTCODE, parseDumpLine, type DumpLine } from './urlteam-dump.ts';

// Real terroroftinytown test definitions (../shared/fixtures/SOURCES.md), read where they are, never copied here.
const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../../../shared/fixtures/urlteam/${name}`, import.meta.url));

async function dumpOf(file: string): Promise<(DumpLine & { line: number })[]> {
  const entries: (DumpLine & { line: number })[] = [];
  for await (const { line, number } of readLines(createReadStream(file))) {
    const entry = parseDumpLine(line);
    if (entry) entries.push({ ...entry, line: number });
  }
  return entries;
}
const links = (entries: DumpLine[]) =>
  entries.flatMap((entry) =>
    entry.kind === 'link' ? [[entry.shortcode, entry.targetUrl, entry.target.hostname]] : [],
  );
const pseudo = (entries: DumpLine[]) =>
  entries.flatMap((entry) => (entry.kind === 'pseudo' ? [[entry.shortcode, entry.target]] : []));

describe('terroroftinytown test definitions (where present)', () => {
  it('vgd.txt: links, a notfound, a comment and a blank line', async () => {
    if (!existsSync(fixture('vgd.txt'))) return;
    const entries = await dumpOf(fixture('vgd.txt'));
    expect(links(entries)).toEqual([
      ['ulrA0Q', 'http://archiveteam.org', 'archiveteam.org'],
      ['Xs2bkX', 'http://archive.org', 'archive.org'],
      ['gBRPfS', 'http://www.torah.org/learning/maharal/p2m7.html', 'www.torah.org'],
      ['WSNPzV', 'http://riversidemusicstudios.com/rates/', 'riversidemusicstudios.com'],
      ['vGFtAn', 'http://nisworld.net/484189244', 'nisworld.net'],
    ]);
    expect(pseudo(entries)).toEqual([['WSNPd4', 'notfound']]);
    expect(entries.filter((entry) => entry.kind === 'bad' || entry.kind === 'meta')).toEqual([]);
  });

  it('snipurl.txt: split on the first | only, spaces kept, commented-out links ignored, notfound and blocked', async () => {
    if (!existsSync(fixture('snipurl.txt'))) return;
    const entries = await dumpOf(fixture('snipurl.txt'));
    const found = links(entries);
    expect(found.map(([code]) => code)).toEqual([
      'baaa',
      'snort_outrage',
      'rists',
      '27wio7a',
      '4cb2a',
      '7od',
      '6cw',
      '278ieh2',
      '1nl',
      '20wa718',
    ]);
    const withBar = found.find(([code]) => code === '278ieh2')!;
    expect(withBar[1]).toMatch(
      /^http:\/\/www\.avast\.com\/pl-pl\/lp-fr-virus-alert\?.*diskwrite\.exe\|DW\.exe&p_var=.*p_vbd=1489\?$/,
    );
    const withSpaces = found.find(([code]) => code === '6cw')!;
    expect(withSpaces[1]).toContain('&ver=7.6 CorporateEdition&base=');
    expect(withSpaces[2]).toBe('service4.symantec.com');
    expect(found.find(([code]) => code === '4cb2a')![2]).toBe('ads.cnn.com');
    expect(pseudo(entries)).toEqual([
      ['oycsuls', 'notfound'],
      ['25ssuzl', 'blocked'],
      ['20wa6rx', 'notfound'],
      ['1x77q', 'notfound'],
      ['28wo6', 'notfound'],
    ]);
    expect(entries.filter((entry) => entry.kind === 'bad')).toEqual([]);
  });
});

describe('a dump line read losslessly', () => {
  const bytes = (...parts: (string | number[])[]) =>
    Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

  it('is its UTF-8 text when it is UTF-8', () => {
    expect(losslessText(bytes('a|https://bücher.de/straße?q=😀'))).toBe('a|https://bücher.de/straße?q=😀');
  });

  it('percent-encodes each byte that is no part of well-formed UTF-8, keeping the UTF-8 around it', () => {
    // latin-1 é, cp437 é, a lone continuation byte, a truncated sequence, an overlong "/", a UTF-16 surrogate
    expect(
      losslessText(bytes('x/', [0xe9], 'é', [0x82], [0x80], [0xe2, 0x82], '!', [0xc0, 0xaf], [0xed, 0xa0, 0x80])),
    ).toBe('x/%E9é%82%80%E2%82!%C0%AF%ED%A0%80');
  });

  it('drops U+0000, as every ingest does', () => {
    expect(losslessText(bytes('a', [0], 'b', [0xff]))).toBe('ab%FF');
  });
});

describe('a dump line', () => {
  it('is a BEACON meta line, a comment, or nothing when blank', () => {
    expect(parseDumpLine('#FORMAT: BEACON')).toEqual({ kind: 'meta', field: 'FORMAT', value: 'BEACON' });
    expect(parseDumpLine('#PREFIX: https://v.gd/ ')).toEqual({ kind: 'meta', field: 'PREFIX', value: 'https://v.gd/' });
    expect(parseDumpLine('#TIMESTAMP:2016-08-23T19:17:02.123456')).toEqual({
      kind: 'meta',
      field: 'TIMESTAMP',
      value: '2016-08-23T19:17:02.123456',
    });
    expect(parseDumpLine('# PREFIX: not meta')).toBeNull();
    expect(parseDumpLine('## Link disabled')).toBeNull();
    expect(parseDumpLine('   ')).toBeNull();
  });

  it('keeps non-ASCII URLs as written, with the host in punycode', () => {
    const entry = parseDumpLine('kZ9|https://bücher.de/straße?q=grüße');
    expect(entry).toMatchObject({ kind: 'link', shortcode: 'kZ9', targetUrl: 'https://bücher.de/straße?q=grüße' });
    expect(entry?.kind === 'link' && entry.target.hostname).toBe('xn--bcher-kva.de');
  });

  it('says why a line is no link', () => {
    expect(parseDumpLine('just text')).toEqual({ kind: 'bad', reason: 'expected shortcode|long_url' });
    expect(parseDumpLine('|http://example.com/')).toEqual({ kind: 'bad', reason: 'the shortcode is empty' });
    expect(parseDumpLine('abc|')).toEqual({ kind: 'bad', reason: 'the long URL is empty' });
    expect(parseDumpLine('abc|www.example.com/no-scheme')).toEqual({
      kind: 'bad',
      reason: 'the long URL is not an absolute URL with a host',
    });
    expect(parseDumpLine('abc|javascript:alert(1)')).toEqual({
      kind: 'bad',
      reason: 'the long URL is not an absolute URL with a host',
    });
    expect(parseDumpLine(`${'x'.repeat(MAX_SHORTCODE + 1)}|http://example.com/`)).toEqual({
      kind: 'bad',
      reason: `the shortcode is longer than ${MAX_SHORTCODE} characters`,
    });
  });
});

describe('the shortener of a dump', () => {
  it('is the host of its #PREFIX:, without www.', () => {
    expect(shortenerOfPrefix('http://v.gd/')).toEqual({ service: 'v.gd', prefix: 'http://v.gd/' });
    expect(shortenerOfPrefix('https://www.TinyURL.com/')).toEqual({
      service: 'tinyurl.com',
      prefix: 'https://www.TinyURL.com/',
    });
    expect(shortenerOfPrefix('bit.ly/')).toEqual({ service: 'bit.ly', prefix: 'https://bit.ly/' });
    expect(shortenerOfPrefix('http://')).toBeNull();
  });

  it('else the host its file is named after', () => {
    expect(shortenerOfFileName('/dumps/v.gd.txt')).toEqual({ service: 'v.gd', prefix: 'https://v.gd/' });
    expect(shortenerOfFileName('snipurl.com.TXT')).toEqual({ service: 'snipurl.com', prefix: 'https://snipurl.com/' });
    expect(shortenerOfFileName('vgd.txt')).toBeNull();
    expect(shortenerOfFileName('0001____.txt')).toBeNull();
  });
});
