import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../lib/errors.ts';
import { findSource } from '../sources/index.ts';

/** Traffic Light Protocol 2.0 levels, as a rule's `tlp` stores them (migration 0020_rule_tlp). */
export const TLP_LEVELS = ['clear', 'green', 'amber', 'amber+strict', 'red'] as const;
export type Tlp = (typeof TLP_LEVELS)[number];

const asTlp = (stored: string): Tlp => ((TLP_LEVELS as readonly string[]).includes(stored) ? (stored as Tlp) : 'amber');

/**
 * A stored hit with what every export of it needs (STIX, TAXII, MISP, SIEM): its incident, its
 * rule and the rule's marking. `data` is the hit as its organization sees it through the hits
 * endpoint (the source's presentHit): a sealed password never reaches an export.
 */
export interface ExportedHit {
  /** match_hits.id: the order hits were stored in. */
  id: number;
  /** The incident (match) the hit belongs to. */
  incidentId: number;
  /** When Dragnet stored the hit: its incident's created_at, epoch ms. */
  addedAt: number;
  ruleId: number;
  ruleName: string;
  /** The rule's catalog service id (findSource). */
  sourceId: number;
  tlp: Tlp;
  /** The hit's key within its source (hit_key). */
  key: string;
  /** When the hit appeared, epoch ms. */
  date: number;
  data: Record<string, unknown>;
}

type HitRow = {
  id: number | string;
  match_id: number | string;
  added_at: number | string;
  rule_id: number | string;
  rule_name: string;
  service_id: number | string;
  tlp: string;
  hit_key: string;
  hit_date: number | string;
  data: string;
};

export function exportedHit(row: HitRow): ExportedHit {
  const sourceId = Number(row.service_id);
  const stored = JSON.parse(row.data) as Record<string, unknown>;
  const source = findSource(sourceId);
  return {
    id: Number(row.id),
    incidentId: Number(row.match_id),
    addedAt: Number(row.added_at),
    ruleId: Number(row.rule_id),
    ruleName: row.rule_name,
    sourceId,
    tlp: asTlp(row.tlp),
    key: row.hit_key,
    date: Number(row.hit_date),
    data: source?.presentHit?.(stored) ?? stored,
  };
}

/** The columns exportedHit reads, from match_hits joined to matches and alert_rules. */
export function selectExportedHits(db: Kysely<Database>) {
  return db
    .selectFrom('match_hits')
    .innerJoin('matches', 'matches.id', 'match_hits.match_id')
    .innerJoin('alert_rules', 'alert_rules.id', 'match_hits.rule_id')
    .select([
      'match_hits.id',
      'match_hits.match_id',
      'matches.created_at as added_at',
      'match_hits.rule_id',
      'alert_rules.name as rule_name',
      'alert_rules.service_id',
      'alert_rules.tlp',
      'match_hits.hit_key',
      'match_hits.hit_date',
      'match_hits.data',
    ]);
}

export function createExportedHitReader(db: Kysely<Database>) {
  return {
    /** An incident's hits in the order they were stored; excluded ones left out. 404 for another org's incident. */
    async ofIncident(orgId: number, incidentId: number): Promise<ExportedHit[]> {
      const incident = await db
        .selectFrom('matches')
        .select('id')
        .where('id', '=', incidentId)
        .where('org_id', '=', orgId)
        .executeTakeFirst();
      if (!incident) throw notFound('incident');
      const rows = await selectExportedHits(db)
        .where('match_hits.match_id', '=', incidentId)
        .where('match_hits.is_excluded', '=', 0)
        .orderBy('match_hits.id')
        .execute();
      return rows.map(exportedHit);
    },
  };
}
