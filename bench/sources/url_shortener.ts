import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/**
 * Synthetic URLTeam dumps for `npm run bench -- sources`: BEACON files of at most 1,000,000 lines,
 * one shortener each, with a notfound every 50 codes (skipped, not counted) and a long
 * URL holding a `|` every 97.
 */
const LINES_PER_FILE = 1_000_000;
const SERVICES = ['v.gd', 'is.gd', 'bit.ly', 'tinyurl.com'];
const HOSTS = [
  'www.example.com',
  'shop.example.net',
  'login.acme-bank.example',
  'news.example.org',
  'cdn.example.io',
  'blog.example.co.uk',
];

/** Line `i` of file `n`; shortcodes are unique per service because the file number leads them. */
function line(n: number, i: number): string {
  const shortcode = `${n}-${i.toString(36)}`;
  if (i % 50 === 49) return `${shortcode}|notfound\n`;
  const host = HOSTS[i % HOSTS.length]!;
  const query = i % 97 === 0 ? `?a=${i}|b` : `?id=${i}`;
  return `${shortcode}|https://${host}/path/${i % 1000}/page-${i}.html${query}\n`;
}

export const benchSource = {
  source: 'url_shortener',
  ingester: 'url_shortener',
  format: 'urlteam',
  unit: 'links',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    let written = 0;
    for (let n = 0; written < count; n++) {
      const service = SERVICES[n % SERVICES.length]!;
      const file = path.join(dir, `${String(n + 1).padStart(4, '0')}-${service}.txt`);
      const out = createWriteStream(file);
      out.write(
        `#FORMAT: BEACON\n#PREFIX: https://${service}/\n#HOMEPAGE: http://urlte.am/\n#TIMESTAMP: 2026-01-15T12:00:00\n\n`,
      );
      for (let inFile = 0; inFile < LINES_PER_FILE && written < count; inFile++) {
        if (inFile % 50 !== 49) written++;
        if (!out.write(line(n, inFile))) await once(out, 'drain');
      }
      out.end();
      await once(out, 'finish');
      files.push(file);
    }
    return files;
  },
};
