import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/**
 * Synthetic Google Play listings for `npm run bench -- sources`: files of at most 200,000 apps,
 * one google-play-scraper `app()` object a line (description of a few hundred characters), one
 * in ten a newer version of an app listed before (a new row, as a store crawl finds it).
 */
const APPS_PER_FILE = 200_000;
const WORDS = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'northwind',
  'contoso',
  'fabrikam',
  'tailspin',
  'wingtip',
  'litware',
];
const KINDS = ['Wallet', 'Bank', 'Pay', 'Rewards', 'Scanner', 'Weather', 'Notes', 'Fitness', 'Radio', 'Puzzle'];
const GENRES = ['Finance', 'Tools', 'Productivity', 'Health & Fitness', 'Music & Audio', 'Puzzle'];
const UPDATED = 1_767_225_600_000;
const FILLER =
  'Track your spending, pay friends and get alerts for every card payment. Works offline and keeps your data on your phone. ';

function app(n: number, version: number): string {
  const brand = WORDS[n % WORDS.length]!;
  const kind = KINDS[(n >> 3) % KINDS.length]!;
  const developer = `${WORDS[(n >> 5) % WORDS.length]} Labs ${n % 97}`;
  const appId = `com.${brand}${n.toString(36)}.${kind.toLowerCase()}`;
  return JSON.stringify({
    title: `${brand[0]!.toUpperCase()}${brand.slice(1)} ${kind} ${n.toString(36)}`,
    description: FILLER.repeat(1 + (n % 4)),
    summary: `The ${kind.toLowerCase()} app for ${brand} fans`,
    installs: '10,000+',
    minInstalls: 10_000 * (1 + (n % 50)),
    score: 3 + (n % 20) / 10,
    scoreText: (3 + (n % 20) / 10).toFixed(1),
    ratings: 100 + n,
    free: true,
    developer,
    developerId: developer.replace(/ /g, '+'),
    developerEmail: `support@${brand}-labs.example`,
    genre: GENRES[n % GENRES.length],
    released: 'Jun 8, 2024',
    updated: UPDATED - n * 1000,
    version: `${1 + (n % 5)}.${version}.0`,
    appId,
    url: `https://play.google.com/store/apps/details?id=${appId}&hl=en&gl=us`,
  });
}

export const benchSource = {
  source: 'app_store',
  ingester: 'app_store',
  format: 'play',
  unit: 'apps',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    let written = 0;
    let next = 0;
    for (let n = 0; written < count; n++) {
      const file = path.join(dir, `play-apps-${String(n + 1).padStart(4, '0')}.jsonl`);
      const out = createWriteStream(file);
      for (let inFile = 0; inFile < APPS_PER_FILE && written < count; inFile++, written++) {
        // Every tenth listing is the app five before it, one version on.
        const line = written % 10 === 9 ? app(next - 5, 1) : app(next++, 0);
        if (!out.write(`${line}\n`)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'finish');
      files.push(file);
    }
    return files;
  },
};
