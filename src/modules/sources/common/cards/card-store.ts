import type { Generated, Transaction } from 'kysely';
import { slices, writeRows } from '../../../../db/bulk-insert.ts';
import type { Database } from '../../../../db/schema.ts';
import type { KeyRing } from '../../../../lib/crypto.ts';
import type { SourceContext } from '../../kit/source.ts';
import type { BinTable } from './bin-table.ts';
import { iin8DigestInput, panParts, schemeOf } from './card-number.ts';
import type { CardRecord } from './card-record.ts';
import * as m0001 from './migrations/0001_cards.ts';
import * as m0002 from './migrations/0002_card_hash_key.ts';
import * as m0003 from './migrations/0003_card_expiry_extra.ts';

/** The tables of the card store (migrations cards/0001_cards to cards/0003_card_expiry_extra). */
export interface CardTable {
  id: Generated<number>;
  sighting_key: string;
  pan_hash: string;
  bin6: string;
  /** Card digest of the first 8 digits of a PAN of 16 or more; null for shorter PANs. */
  iin8_hash: string | null;
  last4: string;
  pan_length: number;
  brand: string | null;
  card_type: string | null;
  issuer: string | null;
  country: string | null;
  level: string | null;
  exp_month: number | null;
  exp_year: number | null;
  has_cvv: number;
  holder: string | null;
  billing_state: string | null;
  billing_country: string | null;
  price_cents: number | null;
  base: string | null;
  shop: string | null;
  source_name: string;
  source_type: string;
  discovered_at: number;
  /** The input's columns Dragnet has no field for: a JSON object of header -> text. */
  extra: string | null;
}

export interface CardBinTable {
  prefix: string;
  scheme: string | null;
  card_type: string | null;
  country: string | null;
  bank_name: string | null;
}

export type CardTables = {
  cards: CardTable;
  card_bins: CardBinTable;
};

/** Both card sources declare the store's tables; the registry applies the migration once. */
export const cardStoreMigrations = {
  'cards/0001_cards': m0001,
  'cards/0002_card_hash_key': m0002,
  'cards/0003_card_expiry_extra': m0003,
};

export const cardDb = (context: SourceContext) => context.db.withTables<CardTables>();

export type CardDb = ReturnType<typeof cardDb>;
export type CardTransaction = Transaction<Database & CardTables>;

/**
 * The card digests of every 8-digit prefix that starts with `prefix` (6 to 8 digits), each
 * with its prefix: at most 100, which a BIN rule or the BIN table compares with `iin8_hash`.
 */
export function iin8Digests(keys: KeyRing, prefix: string): Map<string, string> {
  const digests = new Map<string, string>();
  const count = 10 ** (8 - prefix.length);
  for (let n = 0; n < count; n++) {
    const iin8 = prefix + (count > 1 ? String(n).padStart(8 - prefix.length, '0') : '');
    digests.set(keys.cardDigest(iin8DigestInput(iin8)), iin8);
  }
  return digests;
}

/** What the BIN table says about a card, falling back on what its input claims. */
function enrichment(bins: BinTable, prefix: string, claimed: CardRecord['claimed']) {
  const known = bins.lookup(prefix);
  return {
    brand: known?.scheme ?? claimed.brand ?? schemeOf(prefix),
    card_type: known?.cardType ?? claimed.cardType,
    issuer: known?.bank ?? claimed.issuer,
    country: known?.country ?? null,
  };
}

/** A listing with a price, a base or a shop comes from a carding shop; anything else is a dump. */
const sourceTypeOf = (record: CardRecord): 'shop' | 'dump' =>
  record.priceCents !== null || record.base || record.shop ? 'shop' : 'dump';

// Rows per INSERT: 24 columns × 500 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 500;

export interface WriteCounts {
  added: number;
  duplicates: number;
}

/**
 * Writes card sightings. Each `write` is one transaction, so a batch is stored whole or not at
 * all; a sighting already stored (same PAN, expiry and source name) is skipped. The PAN is split
 * here and goes no further: the BIN table sees its 8-digit prefix, the store gets card digests.
 */
export function createCardWriter(context: SourceContext, bins: BinTable) {
  const db = cardDb(context);
  const { keys } = context;

  const row = (record: CardRecord, sourceName: string, discoveredAt: number) => {
    const parts = panParts(record.pan);
    return {
      sighting_key: keys.cardDigest(
        `card-sighting:${record.pan}\n${record.expMonth ?? '-'}/${record.expYear ?? '-'}\n${sourceName}`,
      ),
      pan_hash: keys.cardDigest(`pan:${record.pan}`),
      bin6: parts.bin,
      iin8_hash: parts.iin8 === null ? null : keys.cardDigest(iin8DigestInput(parts.iin8)),
      last4: parts.last4,
      pan_length: parts.length,
      ...enrichment(bins, parts.iin8 ?? parts.bin, record.claimed),
      level: record.level,
      exp_month: record.expMonth,
      exp_year: record.expYear,
      has_cvv: record.hasCvv ? 1 : 0,
      holder: record.holder,
      billing_state: record.billingState,
      billing_country: record.billingCountry,
      price_cents: record.priceCents,
      base: record.base,
      shop: record.shop,
      source_name: sourceName,
      source_type: sourceTypeOf(record),
      discovered_at: discoveredAt,
      extra: record.extra && JSON.stringify(record.extra),
    };
  };

  return {
    async write(records: CardRecord[], source: { name: string; discoveredAt: number }): Promise<WriteCounts> {
      if (records.length === 0) return { added: 0, duplicates: 0 };
      const added = await writeRows(db, context.engine, {
        table: 'cards',
        rows: records.map((record) => row(record, source.name, source.discoveredAt)),
        conflict: ['sighting_key'],
        statements: slices(ROWS_PER_STATEMENT),
      });
      return { added, duplicates: records.length - added };
    },
  };
}

export type CardWriter = ReturnType<typeof createCardWriter>;
