import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains, likeEndsWith } from '../../../db/like.ts';
import type { DomainName } from '../common/domains/domain-name.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../kit/source.ts';
import { shortLinkDb, type ShortLinkTable } from './short-link-store.ts';
import { isoDateOrNull as iso } from '../../../lib/iso-date.ts';

/** What a url_shortener rule looks for (docs/sources.md "URL shorteners"). */
export interface LinkQuery {
  /** The watched domain: links whose target host is it or a host under it. */
  domain: DomainName;
  /** Shortener host names, without `www.`. */
  services?: string[];
  /** Lower case; found in the target's decoded path. */
  pathContains?: string;
}

function linkHit(row: Selectable<ShortLinkTable>): Hit {
  return {
    key: `link:${row.id}`,
    date: Number(row.discovered_at),
    data: {
      short_url: row.short_url,
      shortcode: row.shortcode,
      service: row.service,
      target_url: row.target_url,
      target_host: row.target_host,
      target_domain: row.target_domain,
      crawled_at: iso(row.crawled_at),
      discovered_at: iso(row.discovered_at),
    },
  };
}

/** The short links of one rule stored within the window (since, until], newest first. */
export async function matchShortLinks(
  context: SourceContext,
  query: LinkQuery,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const { domain: host, registrable } = query.domain;
  const matching = shortLinkDb(context)
    .selectFrom('short_links')
    .where((eb) => {
      const conditions: Expression<SqlBool>[] = [
        eb('target_domain', '=', registrable),
        eb.or([eb('target_host', '=', host), likeEndsWith(sql.ref('target_host'), `.${host}`)]),
        eb('discovered_at', '<=', window.until),
      ];
      if (window.since !== null) conditions.push(eb('discovered_at', '>', window.since));
      if (query.services?.length) conditions.push(eb('service', 'in', query.services));
      if (query.pathContains) conditions.push(likeContains(sql.ref('target_path'), query.pathContains));
      return eb.and(conditions);
    });
  const rows = await matching.selectAll().orderBy('discovered_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  return { hits: rows.map(linkHit), total: Number(total) };
}
