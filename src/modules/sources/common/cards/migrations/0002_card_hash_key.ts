import type { Kysely } from 'kysely';
import { withoutOldCopies, type MigrationContext } from '../../../../../db/migration-helpers.ts';
import { iin8DigestInput } from '../card-number.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// A backup of the card store held everything needed to recover each PAN: an 8-digit IIN, the
// last four, and digests keyed from secret.key, which the backup carried too (four unknown
// digits). Now:
// - `iin` (8 digits for PANs of 16+) goes: `bin6` and `last4` are all that is kept of a number.
//   The 8-digit prefix, which 7- and 8-digit BIN rules and the BIN table's longer entries need,
//   is kept as `iin8_hash`, a card digest (null for PANs under 16 digits, as before).
// - `pan_hash` and `sighting_key` are keyed once more with the card hash key, which backups
//   leave out: new = HMAC(card key, old), the chain `cardDigest` computes for new cards, so a
//   card ingested again after this migration is still recognised.
const BATCH = 500;

interface LegacyCard {
  id: number;
  pan_hash: string;
  sighting_key: string;
  iin: string;
}

export async function up(db: Kysely<unknown>, { engine, keys }: MigrationContext): Promise<void> {
  const cards = db as unknown as Kysely<{ cards: LegacyCard & { iin8_hash: string | null } }>;
  await cards.schema.alterTable('cards').addColumn('iin8_hash', 'text').execute();
  const rekey = async (tx: typeof cards) => {
    for (let after = 0; ;) {
      const batch = await tx
        .selectFrom('cards')
        .select(['id', 'pan_hash', 'sighting_key', 'iin'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(BATCH)
        .execute();
      if (batch.length === 0) return;
      for (const card of batch) {
        await tx
          .updateTable('cards')
          .set({
            pan_hash: keys.rekeyCardDigest(card.pan_hash),
            sighting_key: keys.rekeyCardDigest(card.sighting_key),
            iin8_hash: card.iin.length === 8 ? keys.cardDigest(iin8DigestInput(card.iin)) : null,
          })
          .where('id', '=', card.id)
          .execute();
      }
      after = Number(batch.at(-1)!.id);
    }
  };
  // The old digests and IINs must not survive in SQLite's free space or WAL either.
  await withoutOldCopies(db, engine, async () => {
    // PostgreSQL runs each migration in a transaction; SQLite does not, and one transaction saves
    // a commit per card.
    if (engine === 'sqlite') await cards.transaction().execute(rekey);
    else await rekey(cards);
    await cards.schema.alterTable('cards').dropColumn('iin').execute();
  });
}
