import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Synthetic ransomware.live posts for `npm run bench -- sources`: posts.json arrays of at most
 * 50,000 posts a file (well under the ingester's 64 MiB array cap), three in four in the 2023
 * 7-field shape with a description and websites, the rest in ransomwatch's 5-field shape.
 */
const POSTS_PER_FILE = 50_000;
const GROUPS = ['lockbit3', 'alphv', 'play', 'clop', 'akira', 'blackbasta', 'medusa', 'rhysida', '8base', 'bianlian'];
const WORDS = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Northwind',
  'Contoso',
  'Fabrikam',
  'Tailspin',
  'Wingtip',
  'Litware',
  'Proseware',
  'Adatum',
];
const KINDS = ['Bank', 'Logistics', 'Manufacturing', 'Health', 'Foods', 'Systems', 'Legal', 'Energy'];
const START = Date.parse('2023-01-01T00:00:00Z');

const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '000');

function post(i: number) {
  const name = `${WORDS[i % WORDS.length]} ${KINDS[Math.floor(i / WORDS.length) % KINDS.length]} ${i}`;
  const published = START + i * 60_000;
  const base = {
    post_title: `${name} Ltd`,
    group_name: GROUPS[i % GROUPS.length]!,
    discovered: stamp(published + 3_600_000),
    published: stamp(published),
  };
  if (i % 4 === 3) return { ...base, post_url: '' };
  const domain = `${name.toLowerCase().replace(/ /g, '-')}.example`;
  return {
    ...base,
    description: `${name} is a company. We have 120 GB of its data: contracts, HR files and finance; see www.${domain}.`,
    website: i % 2 ? `www.${domain}` : `www.${domain}, shop.${domain}`,
    post_url: `http://${GROUPS[i % GROUPS.length]}benchxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.onion/post/${i.toString(36)}`,
  };
}

export const benchSource = {
  source: 'ransomware',
  ingester: 'ransomware',
  format: 'posts',
  unit: 'posts',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    for (let start = 0; start < count; start += POSTS_PER_FILE) {
      const file = path.join(dir, `posts-${String(files.length + 1).padStart(4, '0')}.json`);
      const posts = Array.from({ length: Math.min(POSTS_PER_FILE, count - start) }, (_, i) => post(start + i));
      await writeFile(file, JSON.stringify(posts, null, 4));
      files.push(file);
    }
    return files;
  },
};
