import { findSource } from '../../sources/index.ts';
import type { ExportedHit, Tlp } from '../exported-hits.ts';
import type { StixObject } from '../stix/stix-mapper.ts';
import { uuidV5Generator } from '../stix/uuid5.ts';
import { attributesOfObjects } from './misp-attributes.ts';

// The namespace of the UUIDv5 of Dragnet's MISP events, attributes and organizations (docs/misp.md):
// the same incident always gives the same event uuid, so MISP updates the event it already has.
const MISP_NAMESPACE = '5f0c6f0e-2d3b-5a8e-9c41-7d2e8b1a6c39';
const uuidv5 = uuidV5Generator(MISP_NAMESPACE);

export interface MispTag {
  name: string;
  colour: string;
}

export interface MispAttribute {
  uuid: string;
  type: string;
  category: string;
  value: string;
  to_ids: boolean;
  comment: string;
  /** 5: as the event. */
  distribution: '5';
  timestamp: string;
  disable_correlation: boolean;
}

/** The fields the feed's manifest.json repeats for each event. */
export interface MispEventHead {
  uuid: string;
  info: string;
  date: string;
  timestamp: string;
  analysis: '0' | '1' | '2';
  threat_level_id: '1' | '2' | '3' | '4';
  Orgc: { name: string; uuid: string };
  Tag: MispTag[];
}

export interface MispEvent extends MispEventHead {
  published: boolean;
  publish_timestamp: string;
  /** 0: the receiving organization only; the MISP feed settings can widen it on import. */
  distribution: '0';
  Attribute: MispAttribute[];
}

/** An incident as the event head needs it: one row of matches joined to its rule. */
export interface IncidentRow {
  orgId: number;
  orgName: string;
  incidentId: number;
  ruleName: string;
  sourceId: number;
  tlp: Tlp;
  status: string;
  /** epoch ms */
  createdAt: number;
  /** epoch ms of the last change the event shows (completion, status change). */
  changedAt: number;
}

export const eventUuid = (orgId: number, incidentId: number) => uuidv5(`event:org:${orgId}:incident:${incidentId}`);

export const orgUuid = (orgId: number) => uuidv5(`org:${orgId}`);

// MISP's colours of the TLP 2.0 tags (its "tlp" taxonomy).
const TLP_COLOURS: Record<Tlp, string> = {
  clear: '#ffffff',
  green: '#339900',
  amber: '#ffc000',
  'amber+strict': '#ffc000',
  red: '#cc0033',
};

/** MISP threat levels (1 high, 2 medium, 3 low) by source: credentials and cards are high. */
const THREAT_LEVELS: Record<number, '1' | '2' | '3'> = {
  3: '1',
  4: '1',
  5: '1',
  6: '1',
  7: '1',
  10: '1',
  14: '1',
  8: '2',
  9: '2',
  15: '2',
};

/** Incident status → MISP analysis (0 initial, 1 ongoing, 2 completed). */
const ANALYSIS: Record<string, '0' | '1' | '2'> = {
  new: '0',
  acknowledged: '1',
  resolved: '2',
  false_positive: '2',
};

const seconds = (epochMs: number) => String(Math.floor(epochMs / 1000));

export function eventHead(incident: IncidentRow): MispEventHead {
  const source = findSource(incident.sourceId);
  const sourceName = source?.name ?? `service-${incident.sourceId}`;
  return {
    uuid: eventUuid(incident.orgId, incident.incidentId),
    info: `${incident.ruleName} (${source?.alias ?? sourceName})`,
    date: new Date(incident.createdAt).toISOString().slice(0, 10),
    timestamp: seconds(Math.max(incident.createdAt, incident.changedAt)),
    analysis: ANALYSIS[incident.status] ?? '0',
    threat_level_id: THREAT_LEVELS[incident.sourceId] ?? '3',
    Orgc: { name: incident.orgName, uuid: orgUuid(incident.orgId) },
    Tag: [
      { name: `tlp:${incident.tlp}`, colour: TLP_COLOURS[incident.tlp] },
      { name: `dragnet:source="${sourceName}"`, colour: '#0088cc' },
    ],
  };
}

/**
 * Collects the attributes of an event's hits, one hit at a time (the feed's hashes.csv walks a
 * big incident in pages): each attribute once per event, with a uuid stable across exports.
 */
export function createAttributeCollector(eventUuidOfHits: string, objectsOfHit: (hit: ExportedHit) => StixObject[]) {
  const byValue = new Map<string, MispAttribute>();
  return {
    /** The attributes this hit adds to the event (not those an earlier hit gave already). */
    add(hit: ExportedHit): MispAttribute[] {
      const added: MispAttribute[] = [];
      for (const draft of attributesOfObjects(objectsOfHit(hit), hit.sourceId)) {
        const key = `${draft.type}\u0000${draft.value}`;
        const known = byValue.get(key);
        if (known) {
          known.to_ids ||= draft.to_ids;
          continue;
        }
        const attribute: MispAttribute = {
          uuid: uuidv5(`${eventUuidOfHits}|hit:${hit.ruleId}:${hit.key}|${draft.type}|${draft.value}`),
          type: draft.type,
          category: draft.category,
          value: draft.value,
          to_ids: draft.to_ids,
          comment: draft.comment,
          distribution: '5',
          timestamp: seconds(hit.addedAt),
          // Free text (a post, a note) would correlate with everything that shares a word of it.
          disable_correlation: draft.type === 'text',
        };
        byValue.set(key, attribute);
        added.push(attribute);
      }
      return added;
    },
    attributes: () => [...byValue.values()],
  };
}

export function mispEvent(head: MispEventHead, attributes: MispAttribute[]): { Event: MispEvent } {
  return {
    Event: {
      ...head,
      published: true,
      publish_timestamp: head.timestamp,
      distribution: '0',
      Attribute: attributes,
    },
  };
}

/** The md5 lines of hashes.csv for one attribute: a composite value (filename|sha256) gives one per part, as MISP does. */
export const hashedValues = (attribute: Pick<MispAttribute, 'type' | 'value'>): string[] =>
  attribute.type.includes('|') ? attribute.value.split('|') : [attribute.value];
