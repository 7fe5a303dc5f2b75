import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import { notFound } from '../../../lib/errors.ts';
import { exportedHit, selectExportedHits, type ExportedHit } from '../exported-hits.ts';
import { stixId } from '../stix/stix-mapper.ts';

/** A TAXII collection of an organization: all its incidents, or one rule's (docs/taxii.md). */
export interface TaxiiCollection {
  id: string;
  title: string;
  description: string;
  /** The rule whose incidents it holds; null for "All incidents". */
  ruleId: number | null;
}

/** Where a hit stands in a collection's order: (date_added, incident, hit). */
export interface HitPosition {
  addedAt: number;
  matchId: number;
  hitId: number;
}

// A collection id is a UUIDv5 (in Dragnet's namespace, as every STIX id it makes) of the
// organization and the rule: the same across restarts and instances of one store, and another
// organization's ids say nothing about its rules.
const collectionId = (orgId: number, ruleId: number | null) =>
  stixId('x-dragnet-collection', `taxii:${orgId}:${ruleId ?? 'all'}`).split('--')[1]!;

/**
 * The collections and the hits in them. Every read is scoped to the organization, and walks its
 * incidents in keyset order on the indexes of migration 0020_taxii_indexes (no OFFSET).
 */
export function createTaxiiCollections(db: Kysely<Database>) {
  async function list(orgId: number): Promise<TaxiiCollection[]> {
    // Paused rules keep their collection (their incidents stay); a deleted rule's is gone (its
    // incidents stay in "All incidents", as in the incident inbox).
    const rules = await db
      .selectFrom('alert_rules')
      .select(['id', 'name'])
      .where('org_id', '=', orgId)
      .where('is_deleted', '=', 0)
      .orderBy('id')
      .execute();
    return [
      {
        id: collectionId(orgId, null),
        title: 'All incidents',
        description: "Every hit of every incident of the organization's rules, as STIX 2.1.",
        ruleId: null,
      },
      ...rules.map((rule) => ({
        id: collectionId(orgId, Number(rule.id)),
        title: `Rule: ${rule.name}`,
        description: `The hits of the incidents of the rule "${rule.name}" (rule ${rule.id}), as STIX 2.1.`,
        ruleId: Number(rule.id),
      })),
    ];
  }

  function scoped(orgId: number, collection: TaxiiCollection, addedAfter: number | null) {
    let query = selectExportedHits(db).where('matches.org_id', '=', orgId).where('match_hits.is_excluded', '=', 0);
    if (collection.ruleId !== null) query = query.where('matches.rule_id', '=', collection.ruleId);
    if (addedAfter !== null) query = query.where('matches.created_at', '>', addedAfter);
    return query;
  }

  return {
    list,

    /** A collection of the organization; 404 for any other id (another organization's too). */
    async get(orgId: number, id: string): Promise<TaxiiCollection> {
      const found = (await list(orgId)).find((collection) => collection.id === id);
      if (!found) throw notFound('collection');
      return found;
    },

    /**
     * Up to `limit` hits of the collection in its order, from `from` on (that hit included when
     * `inclusive`), only those added after `addedAfter`. Two keyset queries: the rest of the
     * incident `from` is in, then the incidents after it.
     */
    async hitsFrom(input: {
      orgId: number;
      collection: TaxiiCollection;
      from: HitPosition | null;
      inclusive: boolean;
      addedAfter: number | null;
      limit: number;
    }): Promise<ExportedHit[]> {
      const { orgId, collection, from, addedAfter, limit } = input;
      const rows = [];
      if (from) {
        rows.push(
          ...(await scoped(orgId, collection, addedAfter)
            .where('match_hits.match_id', '=', from.matchId)
            .where('match_hits.id', input.inclusive ? '>=' : '>', from.hitId)
            .orderBy('match_hits.id')
            .limit(limit)
            .execute()),
        );
      }
      if (rows.length < limit) {
        let later = scoped(orgId, collection, addedAfter);
        if (from) {
          later = later.where(
            sql<boolean>`(${sql.ref('matches.created_at')}, ${sql.ref('matches.id')}) > (${from.addedAt}, ${from.matchId})`,
          );
        }
        rows.push(
          ...(await later
            .orderBy('matches.created_at')
            .orderBy('matches.id')
            .orderBy('match_hits.id')
            .limit(limit - rows.length)
            .execute()),
        );
      }
      return rows.map(exportedHit);
    },
  };
}

export type TaxiiCollections = ReturnType<typeof createTaxiiCollections>;
