import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains } from '../../../db/like.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../kit/source.ts';
import { appDb, type AppListingTable } from './app-store.ts';
import { brandUse, developerKey, isOfficial, prefilterOf, type Brand, type BrandUse } from './brand-match.ts';
import { isoDateOrNull as iso } from '../../../lib/iso-date.ts';

/** What a rule of the app-store source looks for. */
export interface AppFilter {
  brand: Brand;
  platforms?: string[];
  /** Official developer names and ids, as the rule gives them. */
  officialDevelopers?: string[];
}

// The columns a hit and the matcher read; the description's words are selected apart.
const LISTING_COLUMNS = [
  'id',
  'platform',
  'app_id',
  'version',
  'store',
  'name',
  'developer',
  'developer_id',
  'seller',
  'url',
  'installs',
  'rating',
  'rating_count',
  'genre',
  'released_at',
  'updated_at',
  'discovered_at',
] as const;

type Row = Pick<Selectable<AppListingTable>, (typeof LISTING_COLUMNS)[number] | 'description_words'>;

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** An app as a hit: the latest listing that uses the brand, dated by the first one that did. */
function appHit(latest: Row, use: BrandUse, firstSeen: number): Hit {
  return {
    key: `app:${latest.platform}:${latest.app_id}`,
    date: firstSeen,
    data: {
      app_id: latest.app_id,
      name: latest.name,
      developer: latest.developer,
      developer_id: latest.developer_id,
      platform: latest.platform,
      store: latest.store,
      version: latest.version === '' ? null : latest.version,
      url: latest.url,
      installs: numberOrNull(latest.installs),
      rating: numberOrNull(latest.rating),
      rating_count: numberOrNull(latest.rating_count),
      genre: latest.genre,
      released_at: iso(latest.released_at),
      updated_at: iso(latest.updated_at),
      matched_on: use.matchedOn,
      lookalike: use.lookalike,
      reason: use.reason,
      discovered_at: iso(firstSeen),
    },
  };
}

/**
 * A LIKE prefilter over the stored compact texts (brand-match prefilterOf): a row it leaves out
 * cannot use the brand, so only the rows it keeps are matched word by word. `description` is
 * the test of the description alone.
 */
function prefilter(brand: Brand) {
  const { glued, pieces } = prefilterOf(brand);
  const description = (table: string) =>
    likeContains(sql`replace(${sql.ref(`${table}.description_words`)}, ' ', '')`, glued);
  const names = (table: string) => pieces.map((piece) => likeContains(sql.ref(`${table}.names_compact`), piece));
  return {
    description,
    any: (eb: { or(e: Expression<SqlBool>[]): Expression<SqlBool> }, table: string) =>
      eb.or([...names(table), description(table)]),
  };
}

/**
 * The apps one rule reports in the window (since, until], newest first. An app is reported to a
 * rule once: when the first of its listings that uses the brand (and is not by an official
 * developer) was stored within the window. Its later versions are not news; the hit shows the
 * latest listing stored by the window's end.
 */
export async function matchApps(
  context: SourceContext,
  filter: AppFilter,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const db = appDb(context);
  const candidate = prefilter(filter.brand);
  const rows = await db
    .selectFrom('app_listings as s')
    .select(LISTING_COLUMNS.map((column) => `s.${column}` as const))
    // A description is long: only one that can name the brand is read back.
    .select(
      sql<string>`case when ${candidate.description('s')} then s.description_words else '' end`.as('description_words'),
    )
    .where((eb) => {
      const conditions: Expression<SqlBool>[] = [eb('s.discovered_at', '<=', window.until), candidate.any(eb, 's')];
      if (filter.platforms?.length) conditions.push(eb('s.platform', 'in', filter.platforms));
      if (window.since !== null) {
        // Only apps with a candidate listing in the window can be news in it.
        const since = window.since;
        conditions.push(
          eb.exists(
            eb
              .selectFrom('app_listings as w')
              .select(sql.lit(1).as('one'))
              .whereRef('w.platform', '=', 's.platform')
              .whereRef('w.app_id', '=', 's.app_id')
              .where((inner) =>
                inner.and([
                  inner('w.discovered_at', '>', since),
                  inner('w.discovered_at', '<=', window.until),
                  candidate.any(inner, 'w'),
                ]),
              ),
          ),
        );
      }
      return eb.and(conditions);
    })
    .orderBy('s.discovered_at')
    .orderBy('s.id')
    .execute();

  const officials = new Set((filter.officialDevelopers ?? []).map(developerKey).filter((key) => key !== ''));
  const apps = new Map<string, { first: number; latest: Row; use: BrandUse }>();
  for (const row of rows) {
    if (isOfficial(officials, [row.developer, row.developer_id, row.seller])) continue;
    const use = brandUse(filter.brand, {
      name: row.name,
      appId: row.app_id,
      developer: row.developer,
      descriptionWords: row.description_words,
    });
    if (!use) continue;
    const key = `${row.platform}\n${row.app_id}`;
    const seen = apps.get(key);
    // Rows come oldest first: the first use dates the app, the last describes it.
    apps.set(key, { first: seen?.first ?? Number(row.discovered_at), latest: row, use });
  }
  const hits = [...apps.values()]
    .filter((app) => window.since === null || app.first > window.since)
    .sort((a, b) => b.first - a.first || Number(b.latest.id) - Number(a.latest.id))
    .map((app) => appHit(app.latest, app.use, app.first));
  return { hits: hits.slice(0, limit), total: hits.length };
}
