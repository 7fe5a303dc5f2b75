import type { Generated } from 'kysely';
import { writeRows } from '../../../../db/bulk-insert.ts';
import { foldText } from '../query/query-language.ts';
import type { SourceContext } from '../../kit/source.ts';
import { withoutNul } from '../ingest/ingest-kit.ts';
import * as m0001 from './migrations/0001_documents.ts';
import * as m0002 from './migrations/0002_conversations.ts';

/**
 * The text-document store the chat-server, hacker-forum and paste-site sources share: records
 * searched with the messenger query language, one row per record (migration
 * documents/0001_documents says why each column is there).
 */

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type DocumentTables = {
  documents: {
    id: Generated<number>;
    source: string;
    doc_key: string;
    text: string;
    text_folded: string;
    fields: string;
    discovered_at: number;
  };
};

/** Every source on the store declares its table; the registry applies the migration once. */
export const documentStoreMigrations = {
  'documents/0001_documents': m0001,
  'documents/0002_conversations': m0002,
};

export const documentDb = (context: SourceContext) => context.db.withTables<DocumentTables>();

/** One record as a source hands it to the store. */
export interface DocumentInput {
  /** The record's natural key within its source (a message id, forum + post id, site + paste key). */
  key: string;
  /** What the query searches; hits show a preview of it. */
  text: string;
  /** The record's hit fields, stored as JSON and read back into each hit. */
  fields: Record<string, unknown>;
}

export interface WriteCounts {
  added: number;
  duplicates: number;
}

// PostgreSQL refuses NUL in text and a lone surrogate in jsonb, on both engines alike, so a
// paste with a stray NUL is stored and found the same way everywhere: NUL is removed, as from
// everything an ingest reads (withoutNul), and a lone surrogate replaced.
const LONE_SURROGATE = /\p{Cs}/gu;
export const storable = (text: string): string => withoutNul(text).replace(LONE_SURROGATE, '\uFFFD');

// JSON.stringify writes NUL as \u0000 and a lone surrogate as \udXXX: only JSON holding such an
// escape (or a literal backslash-u that looks like one) is written again value by value.
const ESCAPED_UNSTORABLE = /\\u(?:0000|d[89a-f])/i;
function storableJson(fields: Record<string, unknown>): string {
  const json = JSON.stringify(fields);
  return ESCAPED_UNSTORABLE.test(json)
    ? JSON.stringify(fields, (_key, value: unknown) => (typeof value === 'string' ? storable(value) : value))
    : json;
}

// Rows per INSERT (6 columns each, far below SQLite's 32,766 bound variables), and a bound on
// the characters one statement carries, since a paste may be megabytes.
const ROWS_PER_STATEMENT = 500;
const CHARS_PER_STATEMENT = 16 << 20;

/** Splits rows into statements of at most ROWS_PER_STATEMENT rows and about CHARS_PER_STATEMENT characters. */
function* statements<T extends { text: string }>(rows: T[]): Generator<T[]> {
  let current: T[] = [];
  let chars = 0;
  for (const row of rows) {
    // The text goes in twice: as written and folded.
    const size = row.text.length * 2;
    if (current.length > 0 && (current.length === ROWS_PER_STATEMENT || chars + size > CHARS_PER_STATEMENT)) {
      yield current;
      current = [];
      chars = 0;
    }
    current.push(row);
    chars += size;
  }
  if (current.length > 0) yield current;
}

/**
 * Writes one source's documents. Each `write` is one transaction, so a batch is stored whole or
 * not at all; a document whose key the source already has is skipped (the first version
 * stored is kept), on both engines through the unique (source, doc_key) index.
 */
export function createDocumentWriter(context: SourceContext, source: string) {
  const db = documentDb(context);
  return {
    async write(documents: DocumentInput[], discoveredAt: number): Promise<WriteCounts> {
      if (documents.length === 0) return { added: 0, duplicates: 0 };
      const rows = documents.map((document) => {
        const text = storable(document.text);
        return {
          source,
          doc_key: storable(document.key),
          text,
          text_folded: foldText(text),
          fields: storableJson(document.fields),
          discovered_at: discoveredAt,
        };
      });
      const added = await writeRows(db, context.engine, {
        table: 'documents',
        rows,
        conflict: ['source', 'doc_key'],
        statements,
      });
      return { added, duplicates: documents.length - added };
    },
  };
}

export type DocumentWriter = ReturnType<typeof createDocumentWriter>;
