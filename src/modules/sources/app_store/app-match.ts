import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains } from '../../../db/like.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../source.ts';
import { appDb, type AppListingTable } from './app-store.ts';
import { brandUse, developerKey, isOfficial, prefilterOf, type Brand, type BrandUse } from './brand-match.ts';

/** What a rule of the app-store source looks for. */
export interface AppFilter {
  brand: Brand;
  platforms?: string[];
  /** Official developer names and ids, as the rule gives them. */
  officialDevelopers?: string[];
}

type Row = Selectable<AppListingTable>;

const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());
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
 * cannot use the brand, so only the rows it keeps are matched word by word.
 */
function prefilter(brand: Brand) {
  const { glued, pieces } = prefilterOf(brand);
  return (eb: { or(e: Expression<SqlBool>[]): Expression<SqlBool> }, table: string) =>
    eb.or([
      ...pieces.map((piece) => likeContains(sql.ref(`${table}.names_compact`), piece)),
      likeContains(sql`replace(${sql.ref(`${table}.description_words`)}, ' ', '')`, glued),
    ]);
}

/**
 * The apps one rule reports in the window (since, until], newest first. An app is reported to a
 * rule once: when the first of its listings that uses the brand (and is not by an official
 * developer) was stored within the window. Its later versions are not news; the hit shows the
 * latest listing stored by the window's end.
 */
export async function matchApps(context: SourceContext, filter: AppFilter, window: MatchWindow, limit: number): Promise<MatchResult> {
  const db = appDb(context);
  const candidate = prefilter(filter.brand);
  const rows = await db
    .selectFrom('app_listings as s')
    .selectAll('s')
    .where((eb) => {
      const conditions: Expression<SqlBool>[] = [eb('s.discovered_at', '<=', window.until), candidate(eb, 's')];
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
              .where((inner) => inner.and([inner('w.discovered_at', '>', since), inner('w.discovered_at', '<=', window.until), candidate(inner, 'w')])),
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
    const use = brandUse(filter.brand, { name: row.name, appId: row.app_id, developer: row.developer, descriptionWords: row.description_words });
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
