import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomPastes } from '../../src/modules/sources/paste_site/demo-pastes.ts';

/**
 * Synthetic pastes (combolists, SQL dumps, configs, scripts of a few hundred bytes to a few KB)
 * as the generic paste JSON Lines for `npm run bench -- sources`, 50,000 a file. Keys count up
 * (8 characters, as Pastebin's) so that no two of a large run collide.
 */
const PASTES_PER_FILE = 50_000;
const START = Date.parse('2025-01-01T00:00:00Z');

export const benchSource = {
  source: 'paste_site',
  ingester: 'paste_site',
  format: 'jsonl',
  unit: 'pastes',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    for (let start = 0; start < count; start += PASTES_PER_FILE) {
      const pastes = randomPastes(
        files.length + 1,
        Math.min(PASTES_PER_FILE, count - start),
        (i) => START + (start + i) * 1000,
      ).map((paste, i) => {
        const key = (start + i).toString(36).padStart(8, '0');
        return { ...paste, key, url: paste.url.replace(paste.key, key) };
      });
      const file = path.join(dir, `pastes-${String(files.length + 1).padStart(4, '0')}.jsonl`);
      await writeFile(file, pastes.map((paste) => JSON.stringify(paste)).join('\n') + '\n');
      files.push(file);
    }
    return files;
  },
};
