import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { demoCards } from '../../src/modules/sources/common/cards/demo-cards.ts';

/**
 * Synthetic cards (the demo generator's Luhn-valid numbers on shipped BINs) as a pipe dump
 * (PAN|MM|YY|CVV|name) for `npm run bench -- sources`, 50,000 a file; one seed per file so no
 * two files repeat a card.
 */
const CARDS_PER_FILE = 50_000;
const BINS = ['414720', '414709', '510560', '371241', '400022'];

export const benchSource = {
  source: 'credit_card',
  ingester: 'credit_card',
  format: 'pipe',
  unit: 'cards',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    for (let start = 0; start < count; start += CARDS_PER_FILE) {
      const seed = files.length + 1;
      const cards = demoCards(
        { sourceName: 'bench', seed, bins: BINS, count: Math.min(CARDS_PER_FILE, count - start), listing: false },
        2025,
      );
      const lines = cards.map(
        (card, i) =>
          `${card.pan}|${String(card.expMonth ?? 0).padStart(2, '0')}|${(card.expYear ?? 0) % 100}|${card.hasCvv ? 100 + (i % 900) : ''}|JOHN DOE`,
      );
      const file = path.join(dir, `cards-${String(seed).padStart(4, '0')}.txt`);
      await writeFile(file, lines.join('\n') + '\n');
      files.push(file);
    }
    return files;
  },
};
