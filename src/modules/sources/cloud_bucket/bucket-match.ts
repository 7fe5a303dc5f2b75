import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import { likeContains } from '../../../db/like.ts';
import type { Hit, MatchResult, MatchWindow, SourceContext } from '../kit/source.ts';
import { bucketDb, type BucketObjectTable } from './bucket-store.ts';
import { isoDateOrNull as iso } from '../../../lib/iso-date.ts';

/** What a rule of the cloud-bucket source looks for. */
export interface BucketFilter {
  keyword: string;
  providers?: string[];
  /** Lowercase, without the dot. */
  extensions?: string[];
}

function objectHit(row: Selectable<BucketObjectTable>, keyword: string): Hit {
  return {
    key: `object:${row.id}`,
    date: Number(row.discovered_at),
    data: {
      bucket: row.bucket,
      key: row.object_key,
      size: Number(row.size),
      last_modified: iso(row.last_modified),
      provider: row.provider,
      region: row.region,
      url: row.url,
      extension: row.extension,
      matched_on: row.bucket.toLowerCase().includes(keyword) ? 'bucket' : 'key',
      discovered_at: iso(row.discovered_at),
    },
  };
}

/**
 * The objects one rule reports in the window (since, until], newest first: those whose bucket
 * name or key contains the keyword (any case), of the rule's providers and extensions. Each
 * object is stored once, so it is reported to a rule once.
 */
export async function matchBucketObjects(
  context: SourceContext,
  filter: BucketFilter,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const keyword = filter.keyword.toLowerCase();
  const matching = bucketDb(context)
    .selectFrom('bucket_objects')
    .where((eb) => {
      const conditions: Expression<SqlBool>[] = [
        eb('discovered_at', '<=', window.until),
        eb.or([likeContains(sql`lower(bucket)`, keyword), likeContains(sql`lower(object_key)`, keyword)]),
      ];
      if (window.since !== null) conditions.push(eb('discovered_at', '>', window.since));
      if (filter.providers?.length) conditions.push(eb('provider', 'in', filter.providers));
      if (filter.extensions?.length) conditions.push(eb('extension', 'in', filter.extensions));
      return eb.and(conditions);
    });
  const rows = await matching.selectAll().orderBy('discovered_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  const { total } = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  return { hits: rows.map((row) => objectHit(row, keyword)), total: Number(total) };
}
