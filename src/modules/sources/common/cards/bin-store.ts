import { createReadStream } from 'node:fs';
import { newInputResult, reject, type InputResult } from '../ingest/ingest-kit.ts';
import type { SourceContext } from '../../kit/source.ts';
import {
  createBinTable,
  DEFAULT_BIN_FILE,
  readBinRanges,
  type BinEntry,
  type BinRow,
  type BinTable,
} from './bin-table.ts';
import type { CardBrand, CardType } from './card-number.ts';
import type { KeyRing } from '../../../../lib/crypto.ts';
import { cardDb, iin8Digests, type CardBinTable, type CardDb, type CardTransaction } from './card-store.ts';

/** The BIN table in the store (card_bins): loaded for each ingest, replaced by `dragnet ingest bins`. */

// Rows per INSERT: 5 columns × 1,000 stays well under SQLite's bound-variable limit.
const ROWS_PER_STATEMENT = 1000;

const entryOf = (row: CardBinTable): BinEntry => ({
  prefix: row.prefix,
  info: {
    scheme: row.scheme as CardBrand | null,
    cardType: row.card_type as CardType | null,
    country: row.country,
    bank: row.bank_name,
  },
});

async function insertEntries(tx: CardTransaction, entries: BinEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const inserted = await tx
    .insertInto('card_bins')
    .values(
      entries.map(({ prefix, info }) => ({
        prefix,
        scheme: info.scheme,
        card_type: info.cardType,
        country: info.country,
        bank_name: info.bank,
      })),
    )
    .onConflict((oc) => oc.column('prefix').doNothing())
    .returning('prefix')
    .execute();
  return inserted.length;
}

/**
 * Stores the prefixes of binlist-format rows. A prefix given twice keeps its first row (counted
 * as a duplicate); a row without prefixes is rejected with its line.
 */
export async function writeBinRows(
  tx: CardTransaction,
  rows: AsyncIterable<BinRow>,
  result: InputResult,
): Promise<void> {
  let pending: BinEntry[] = [];
  const flush = async () => {
    const added = await insertEntries(tx, pending);
    result.added += added;
    result.duplicates += pending.length - added;
    pending = [];
  };
  for await (const { line, entries } of rows) {
    if (typeof entries === 'string') {
      reject(result, `line ${line}`, entries);
      continue;
    }
    result.records++;
    pending.push(...entries);
    if (pending.length >= ROWS_PER_STATEMENT) await flush();
  }
  await flush();
}

export async function readBinTable(db: CardDb): Promise<BinTable> {
  return createBinTable((await db.selectFrom('card_bins').selectAll().execute()).map(entryOf));
}

/** The stored BIN table; on first use, the one the project ships (binlist/data) is stored first. */
export async function loadBinTable(context: SourceContext): Promise<BinTable> {
  const db = cardDb(context);
  const stored = await readBinTable(db);
  if (stored.size > 0) return stored;
  // Two processes seeding at once both insert with ON CONFLICT DO NOTHING: the same table results.
  await db
    .transaction()
    .execute((tx) =>
      writeBinRows(
        tx,
        readBinRanges(createReadStream(DEFAULT_BIN_FILE), DEFAULT_BIN_FILE),
        newInputResult(DEFAULT_BIN_FILE),
      ),
    );
  return readBinTable(db);
}

/**
 * Applies a new table to the stored cards: each distinct issuer prefix is looked up again, and
 * what the table knows replaces what the row had. Returns the number of cards changed. A card
 * keeps its 8-digit prefix only as a digest: the prefix is found again among the hundred that
 * extend its BIN.
 */
export async function reenrichCards(tx: CardTransaction, table: BinTable, keys: KeyRing): Promise<number> {
  const prefixes = await tx.selectFrom('cards').select(['bin6', 'iin8_hash']).distinct().execute();
  const iin8ByDigest = new Map<string, Map<string, string>>();
  let changed = 0;
  for (const { bin6, iin8_hash } of prefixes) {
    if (iin8_hash !== null && !iin8ByDigest.has(bin6)) iin8ByDigest.set(bin6, iin8Digests(keys, bin6));
    const known = table.lookup((iin8_hash !== null && iin8ByDigest.get(bin6)!.get(iin8_hash)) || bin6);
    if (!known) continue;
    const knownFields = Object.entries({
      brand: known.scheme,
      card_type: known.cardType,
      issuer: known.bank,
      country: known.country,
    }).filter(([, value]) => value !== null);
    if (knownFields.length === 0) continue;
    const result = await tx
      .updateTable('cards')
      .set(Object.fromEntries(knownFields))
      .where('bin6', '=', bin6)
      .where((eb) => (iin8_hash === null ? eb('iin8_hash', 'is', null) : eb('iin8_hash', '=', iin8_hash)))
      .executeTakeFirst();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}
