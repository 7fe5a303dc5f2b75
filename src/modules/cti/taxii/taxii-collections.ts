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

/** Incidents read per query while a page of hits fills. */
const INCIDENT_BATCH = 100;

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

  /** The next incidents of the collection after `after`, in its order, with their stored hit counts. */
  async function nextIncidents(input: {
    orgId: number;
    collection: TaxiiCollection;
    after: { addedAt: number; matchId: number } | null;
    addedAfter: number | null;
  }) {
    let query = db.selectFrom('matches').select(['id', 'created_at', 'stored_hits']).where('org_id', '=', input.orgId);
    if (input.collection.ruleId !== null) query = query.where('rule_id', '=', input.collection.ruleId);
    if (input.addedAfter !== null) query = query.where('created_at', '>', input.addedAfter);
    const { after } = input;
    if (after) {
      query = query.where(
        sql<boolean>`(${sql.ref('created_at')}, ${sql.ref('id')}) > (${after.addedAt}, ${after.matchId})`,
      );
    }
    const rows = await query.orderBy('created_at').orderBy('id').limit(INCIDENT_BATCH).execute();
    return rows.map((row) => ({
      id: Number(row.id),
      addedAt: Number(row.created_at),
      stored: Number(row.stored_hits),
    }));
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
     * `inclusive`), only those added after `addedAfter`. Fewer only at the collection's end.
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
      const hitsOf = () => scoped(orgId, collection, addedAfter);
      const rows: Parameters<typeof exportedHit>[0][] = [];
      if (from) {
        rows.push(
          ...(await hitsOf()
            .where('match_hits.match_id', '=', from.matchId)
            .where('match_hits.id', input.inclusive ? '>=' : '>', from.hitId)
            .orderBy('match_hits.id')
            .limit(limit)
            .execute()),
        );
      }
      // The incidents after `from`, a few at a time, then their hits by index ranges: no query
      // sorts more than one page's worth of hits (a join ordered across incidents made
      // PostgreSQL sort every later hit of the collection for each page).
      let after = from && { addedAt: from.addedAt, matchId: from.matchId };
      while (rows.length < limit) {
        const incidents = await nextIncidents({ orgId, collection, after, addedAfter });
        if (incidents.length === 0) break;
        const remaining = limit - rows.length;
        // Whole incidents while their stored hits fit in one query; else the next one alone, cut.
        const whole = [];
        let budget = remaining;
        for (const incident of incidents) {
          if (incident.stored > budget) break;
          whole.push(incident);
          budget -= incident.stored;
        }
        if (whole.length > 0) {
          const fetched = await hitsOf()
            .where(
              'match_hits.match_id',
              'in',
              whole.map((incident) => incident.id),
            )
            .orderBy('match_hits.match_id')
            .orderBy('match_hits.id')
            .execute();
          for (const incident of whole) rows.push(...fetched.filter((row) => Number(row.match_id) === incident.id));
        } else {
          rows.push(
            ...(await hitsOf()
              .where('match_hits.match_id', '=', incidents[0]!.id)
              .orderBy('match_hits.id')
              .limit(remaining)
              .execute()),
          );
        }
        const last = whole.length > 0 ? whole[whole.length - 1]! : incidents[0]!;
        after = { addedAt: last.addedAt, matchId: last.id };
      }
      return rows.slice(0, limit).map(exportedHit);
    },
  };
}

export type TaxiiCollections = ReturnType<typeof createTaxiiCollections>;
