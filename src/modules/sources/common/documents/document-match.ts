import { sql, type RawBuilder } from 'kysely';
import { predicateCompilers } from '../query/message-search.sql.ts';
import { positiveTerms, type QueryNode } from '../query/query-language.ts';
import { textPreview } from '../query/text-preview.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../../kit/source.ts';

/**
 * A rule's documents: the query evaluated in SQL over the window of newly stored documents of
 * one source, newest first, with the total. The query's exact check is the messenger's own
 * predicate (instr on SQLite, strpos on PostgreSQL over text_folded: the semantics of
 * matchesFolded), asked without its trigram narrowing, which only the messages table has; the
 * compiler writes it over a table aliased `m`, so the documents table is read as `m`.
 */
export interface DocumentSearch {
  source: string;
  /** The rule's query, parsed. */
  tree: QueryNode;
  /** Conditions on the record's fields (fieldIn, fieldInAnyCase, fieldIs). */
  filters?: RawBuilder<boolean>[];
  /** Characters of text around the first match in a hit's preview. */
  contextChars: number;
  /** Identical texts count once, the newest kept (unique_only, as for messenger rules). */
  uniqueTexts?: boolean;
  /**
   * The hit field the preview around the match goes in (`content`, `snippet`); a hit's data is
   * the document's stored fields, that preview and `discovered_at`.
   */
  previewField: string;
}

interface FoundRow {
  doc_key: string;
  text: string;
  fields: string;
  discovered_at: number | string;
  total: number | string;
}

/** The string field `name` of the record is one of `values`. */
export const fieldIn = (name: string, values: readonly string[]): RawBuilder<boolean> =>
  sql<boolean>`(m.fields ->> ${sql.lit(name)}) in (${sql.join(values)})`;

/** The same, without regard to ASCII case (forum, site and syntax names). */
export const fieldInAnyCase = (name: string, values: readonly string[]): RawBuilder<boolean> =>
  sql<boolean>`lower(m.fields ->> ${sql.lit(name)}) in (${sql.join(values.map((value) => value.toLowerCase()))})`;

/**
 * The boolean field `name` of the record is `value`. `->` gives JSON, `true`/`false` on both
 * engines (`->>` would give 1/0 on SQLite but 'true'/'false' on PostgreSQL).
 */
export const fieldIs = (name: string, value: boolean): RawBuilder<boolean> =>
  sql<boolean>`(m.fields -> ${sql.lit(name)}) = ${sql.lit(String(value))}`;

/**
 * One SQL pass: the window's matching documents are counted and the newest `limit` picked by
 * id alone; only those rows are then read whole. A rule's first run (since = null) reads the
 * source's every document this way, with no row but the picked ones leaving the database.
 */
export async function matchDocuments(
  context: SourceContext,
  search: DocumentSearch,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const { tree } = search;
  const conditions: RawBuilder<unknown>[] = [sql`m.source = ${search.source}`, sql`m.discovered_at <= ${window.until}`];
  if (window.since !== null) conditions.push(sql`m.discovered_at > ${window.since}`);
  conditions.push(...(search.filters ?? []), predicateCompilers[context.engine](tree, { withoutIndex: true }));
  const { rows } = await sql<FoundRow>`
    with found as (
      select m.id, m.discovered_at, count(*) over () as total from documents m where ${sql.join(conditions, sql` and `)}
      order by m.discovered_at desc, m.id desc limit ${limit})
    select d.doc_key, d.text, cast(d.fields as text) as fields, d.discovered_at, f.total
    from found f join documents d on d.id = f.id
    order by f.discovered_at desc, f.id desc`.execute(context.db);
  const terms = positiveTerms(tree);
  const seen = new Set<string>();
  const hits: Hit[] = [];
  for (const row of rows) {
    if (search.uniqueTexts) {
      if (seen.has(row.text)) continue;
      seen.add(row.text);
    }
    const discoveredAt = Number(row.discovered_at);
    hits.push({
      key: row.doc_key,
      date: discoveredAt,
      data: {
        ...(JSON.parse(row.fields) as Record<string, unknown>),
        [search.previewField]: textPreview(row.text, terms, search.contextChars),
        discovered_at: new Date(discoveredAt).toISOString(),
      },
    });
  }
  const total = rows.length === 0 ? 0 : Number(rows[0]!.total);
  return { hits, total: search.uniqueTexts ? hits.length : total };
}
