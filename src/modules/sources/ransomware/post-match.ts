import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains } from '../../../db/like.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../kit/source.ts';
import { padded, queryDomainOf, wordsOf } from './post-names.ts';
import { postDb, type RansomwarePostTable } from './post-store.ts';
import { isoDateOrNull as iso } from '../../../lib/iso-date.ts';

/** What a ransomware rule looks for (docs/sources.md "Ransomware leak sites"). */
export interface PostQuery {
  /** The query's words, found as a whole-word run of the victim name. */
  words: string[];
  /** The registrable domain, when the query is a host name or URL: also found in the victim, website and description. */
  domain: string | null;
  groups?: string[];
  countries?: string[];
}

export const postQueryOf = (args: { query: string; groups?: string[]; countries?: string[] }): PostQuery => ({
  words: wordsOf(args.query),
  domain: queryDomainOf(args.query),
  groups: args.groups?.map((group) => group.trim().toLowerCase()),
  countries: args.countries?.map((country) => country.trim().toUpperCase()),
});

type MatchedOn = 'victim' | 'website' | 'description';

/** Which part of the post the query matched, the victim name first. */
function matchedOn(row: Selectable<RansomwarePostTable>, query: PostQuery): MatchedOn {
  const domain = query.domain && padded([query.domain]);
  if (row.victim_words.includes(padded(query.words)) || (domain && row.victim_domains.includes(domain)))
    return 'victim';
  if (domain && row.site_domains.includes(domain)) return 'website';
  return 'description';
}

function postHit(row: Selectable<RansomwarePostTable>, query: PostQuery): Hit {
  return {
    key: `post:${row.id}`,
    date: Number(row.discovered_at),
    data: {
      group: row.group_name,
      victim: row.victim,
      website: row.website,
      country: row.country,
      activity: row.activity,
      description: row.description,
      post_url: row.post_url,
      permalink: row.permalink,
      published_at: iso(row.published_at),
      listed_at: iso(row.listed_at),
      discovered_at: iso(row.discovered_at),
      matched_on: matchedOn(row, query),
    },
  };
}

/** The posts of one rule stored within the window (since, until], newest first. */
export async function matchPosts(
  context: SourceContext,
  query: PostQuery,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const matching = postDb(context)
    .selectFrom('ransomware_posts')
    .where((eb) => {
      const named: Expression<SqlBool>[] = [likeContains(sql.ref('victim_words'), padded(query.words))];
      if (query.domain) {
        const domain = padded([query.domain]);
        named.push(
          ...['victim_domains', 'site_domains', 'description_domains'].map((column) =>
            likeContains(sql.ref(column), domain),
          ),
        );
      }
      const conditions: Expression<SqlBool>[] = [eb.or(named), eb('discovered_at', '<=', window.until)];
      if (window.since !== null) conditions.push(eb('discovered_at', '>', window.since));
      if (query.groups?.length) conditions.push(eb('group_name', 'in', query.groups));
      if (query.countries?.length) conditions.push(eb('country', 'in', query.countries));
      return eb.and(conditions);
    });
  const rows = await matching
    .selectAll()
    .orderBy('discovered_at', 'desc')
    .orderBy('published_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  return { hits: rows.map((row) => postHit(row, query)), total: Number(total) };
}
