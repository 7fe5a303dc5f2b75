import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import type { QueryNode } from '../../src/modules/sources/common/query/query-language.ts';
import { lexiconRead, type WordNarrowing } from '../../src/modules/sources/common/query/word-index.ts';

/**
 * PostgreSQL: the word index's narrowing of a query, its lexicon read alone (a search selects
 * the same columns beside its other opening reads).
 */
export async function narrowByWords(db: Kysely<Database>, tree: QueryNode): Promise<WordNarrowing | null> {
  const read = lexiconRead(tree);
  if (read.columns.length === 0) return read.narrowing({});
  const { rows } = await sql<Record<string, unknown>>`select ${sql.join(read.columns)}`.execute(db);
  return read.narrowing(rows[0]!);
}

/** PostgreSQL: the words that have a bitmap (word-bitmaps.ts), alphabetically. */
export async function bitmapWordNames(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ word: string }>`
    select l.word from message_frequent_words f join message_lexicon l on l.id = f.word_id order by l.word`.execute(db);
  return rows.map((row) => row.word);
}
