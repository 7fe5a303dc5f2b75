import { DAY_MS } from '../../../../lib/clock.ts';
import { seededRandom } from '../seeded-random.ts';
import type { SourceContext } from '../../kit/source.ts';
import { loadBinTable } from './bin-store.ts';
import { luhnCheckDigit } from './card-number.ts';
import type { CardRecord } from './card-record.ts';
import { createCardWriter } from './card-store.ts';

/**
 * Synthetic demo cards: Luhn-valid numbers on BINs of the shipped BIN table, random digits,
 * random initials. No real card and no real person: nothing is taken from any dump.
 */
export interface DemoCardSet {
  /** The source name the cards are filed under; with the seed it keeps the demo idempotent. */
  sourceName: string;
  seed: number;
  bins: string[];
  count: number;
  /** Shop listings: always a CVV, a price, a base and a shop. */
  listing: boolean;
}

const LETTERS = 'ABCDEFGHIJKLMNOPRSTW';
const STATES = ['NY', 'CA', 'TX', 'FL', 'IL', 'WA'];
const LEVELS = ['CLASSIC', 'GOLD', 'PLATINUM'];

/** The set's cards; expiries run one to four years past `year`, so a fresh demo has live cards. */
export function demoCards(set: DemoCardSet, year: number): CardRecord[] {
  const random = seededRandom(set.seed);
  const digit = () => String(Math.floor(random() * 10));
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  return Array.from({ length: set.count }, (_, i) => {
    const bin = set.bins[i % set.bins.length]!;
    const length = /^3[47]/.test(bin) ? 15 : 16;
    let partial = bin;
    while (partial.length < length - 1) partial += digit();
    return {
      pan: partial + luhnCheckDigit(partial),
      expMonth: 1 + (i % 12),
      expYear: year + 1 + (i % 4),
      hasCvv: set.listing || i % 3 !== 0,
      holder: `${pick([...LETTERS])}. ${pick([...LETTERS])}.`,
      billingState: set.listing ? pick(STATES) : null,
      billingCountry: set.listing ? 'US' : null,
      priceCents: set.listing ? (5 + (i % 8) * 5) * 100 : null,
      base: set.listing ? `DEMO_BASE_${year}` : null,
      shop: set.listing ? 'demo-shop' : null,
      level: set.listing ? pick(LEVELS) : null,
      extra: null,
      claimed: { brand: null, cardType: null, issuer: null },
    };
  });
}

const DEMO_DAYS = 30;

/** Stores the set's cards as learned of over the 30 days before `now`; returns how many were new. */
export async function loadDemoCards(context: SourceContext, now: number, set: DemoCardSet): Promise<number> {
  const writer = createCardWriter(context, await loadBinTable(context));
  const cards = demoCards(set, new Date(now).getUTCFullYear());
  let added = 0;
  for (let day = 0; day < DEMO_DAYS; day++) {
    const ofDay = cards.filter((_, i) => i % DEMO_DAYS === day);
    added += (await writer.write(ofDay, { name: set.sourceName, discoveredAt: now - (day + 1) * DAY_MS })).added;
  }
  return added;
}
