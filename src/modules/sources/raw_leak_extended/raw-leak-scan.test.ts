import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { presentLine, scanStream, termPattern, type LineMatch } from './raw-leak-scan.ts';
import { BLOCK } from './raw-leak-store.ts';

/** The line index storeRawFile builds: lines before every BLOCK-byte boundary. */
function lineIndexOf(buffer: Buffer): number[] {
  const index = [0];
  let lines = 0;
  for (let at = 0; at < buffer.length; at++) {
    if ((at + 1) % BLOCK === 0) index.push(lines + (buffer[at] === 10 ? 1 : 0));
    if (buffer[at] === 10) lines++;
  }
  return index;
}

async function scan(text: string | Buffer, pattern: RegExp, chunk = BLOCK): Promise<LineMatch[]> {
  const buffer = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < buffer.length; at += chunk) chunks.push(buffer.subarray(at, at + chunk));
  const found: LineMatch[] = [];
  await scanStream(Readable.from(chunks), lineIndexOf(buffer), pattern, (m) => found.push(m));
  return found;
}

describe('raw leak scan', () => {
  it('finds each matching line once, with its number, case-insensitively by default', async () => {
    const text = 'a@acme-bank.com:pw1\nnothing here\nACME-BANK.COM acme-bank.com twice\nlast line acme-bank.com';
    expect(await scan(text, termPattern('acme-bank.com', 'keyword', false))).toEqual([
      { line: 1, text: 'a@acme-bank.com:pw1' },
      { line: 3, text: 'ACME-BANK.COM acme-bank.com twice' },
      { line: 4, text: 'last line acme-bank.com' },
    ]);
    expect((await scan(text, termPattern('acme-bank.com', 'keyword', true))).map((m) => m.line)).toEqual([1, 3, 4]);
    expect((await scan(text, termPattern('ACME-BANK.COM', 'keyword', true))).map((m) => m.line)).toEqual([3]);
  });

  it('term types stand alone: a domain includes subdomains but not longer names', async () => {
    const text = 'vpn.acme-bank.com\nnotacme-bank.com\nacme-bank.community\nuser@acme-bank.com\n10.0.0.12\n10.0.0.1 up';
    const lines = async (term: string, type: Parameters<typeof termPattern>[1]) =>
      (await scan(text, termPattern(term, type, false))).map((m) => m.line);
    expect(await lines('acme-bank.com', 'domain')).toEqual([1, 4]);
    expect(await lines('acme-bank.com', 'keyword')).toEqual([1, 2, 3, 4]);
    expect(await lines('10.0.0.1', 'ip')).toEqual([6]);
  });

  it('numbers lines across blocks, with lines that straddle a block boundary and multi-byte text', async () => {
    const filler = `${'x'.repeat(99)}\n`;
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) lines.push(i % 7919 === 0 ? `пароль для acme-bank.com ${i}` : filler.slice(0, -1));
    const text = `${lines.join('\n')}\n`;
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * BLOCK);
    const expected = lines
      .map((line, i) => [i + 1, line] as const)
      .filter(([, line]) => line.includes('acme-bank.com'));
    for (const chunk of [BLOCK, 4096]) {
      const found = await scan(text, termPattern('acme-bank.com', 'keyword', false), chunk);
      expect(found.map((m) => [m.line, m.text])).toEqual(expected);
    }
    expect((await scan(text, termPattern('пароль', 'keyword', false))).length).toBe(expected.length);
  });

  it('masks the password of a short credential record, and cuts long lines', () => {
    expect(presentLine('j.doe@acme-bank.com:Secret123', 'acme-bank.com')).toBe('j.doe@acme-bank.com:S****3');
    expect(presentLine('https://acme-bank.com/login|j.doe|hunter22', 'acme-bank.com')).toBe(
      'https://acme-bank.com/login|j.doe|h****2',
    );
    expect(presentLine("INSERT INTO users VALUES (1,'a@acme-bank.com','x','y','z');", 'acme-bank.com')).toContain(
      "'a@acme-bank.com'",
    );
    expect(presentLine(`acme-bank.com ${'y'.repeat(600)}`, 'acme-bank.com')).toHaveLength(501);
  });
});
