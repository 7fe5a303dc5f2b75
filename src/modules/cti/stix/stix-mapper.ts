import { findSource, type StixDescription, type StixObservable } from '../../sources/index.ts';
import type { ExportedHit } from '../exported-hits.ts';
import { TLP_MARKINGS, tlpMarkingId } from './tlp-markings.ts';
import { scoId } from './sco-ids.ts';
import { uuidV5Generator } from './uuid5.ts';

/** A STIX 2.1 object as JSON: its type and id, and the properties its type defines. */
export type StixObject = { type: string; id: string; [property: string]: unknown };

export interface StixBundle {
  type: 'bundle';
  id: string;
  objects: StixObject[];
}

// Dragnet's own namespace for the UUIDv5 ids of the objects it makes (docs/stix.md): the same
// hit always gives the same ids, so a platform that imports an export twice keeps one copy.
const dragnetUuid = uuidV5Generator('b7b5f5f0-6a4e-5c1e-9a8e-2f4c3c6d7e10');

export const stixId = (type: string, name: string) => `${type}--${dragnetUuid(name)}`;

const isoTime = (epochMs: number) => new Date(epochMs).toISOString();

/** A hit whose source has no STIX description (none today): its data as the note's text. */
const fallbackDescription = (hit: ExportedHit): StixDescription => ({
  observables: [],
  summary: `${hit.ruleName}: hit ${hit.key}`,
  text: JSON.stringify(hit.data),
});

/** The SCOs of a description, with their deterministic ids, refs resolved and the marking set. */
function observableObjects(items: StixObservable[], marking: string): StixObject[] {
  const objects = items.map((item): StixObject => ({
    type: item.type,
    spec_version: '2.1',
    id: scoId(item.type, item.properties),
    ...item.properties,
    object_marking_refs: [marking],
  }));
  items.forEach((item, index) => {
    for (const [property, target] of Object.entries(item.refs ?? {})) {
      objects[index]![property] = Array.isArray(target) ? target.map((i) => objects[i]!.id) : objects[target]!.id;
    }
  });
  return objects;
}

/**
 * Maps exported hits to STIX 2.1 (docs/stix.md). The one place that knows STIX: the TAXII server,
 * the bundle export and the MISP feed take its objects as they are.
 *
 * Per hit: its observables (SCOs, ids per the STIX 2.1 deterministic SCO id rules), an
 * `observed-data` over them, an `indicator` and a `sighting` of it when the hit is one (a
 * lookalike domain, a lookalike app), and a `note` with the hit's text. A sighting needs an SDO
 * to be a sighting of, so hits that are not indicators have observed-data only.
 */
export function createStixMapper(deps: { instanceName: string }) {
  const identity: StixObject = {
    type: 'identity',
    spec_version: '2.1',
    id: stixId('identity', `dragnet:${deps.instanceName}`),
    created: '2026-01-01T00:00:00.000Z',
    modified: '2026-01-01T00:00:00.000Z',
    name: deps.instanceName,
    description: 'A Dragnet instance: monitoring of leaks, lookalikes and underground sources',
    identity_class: 'system',
    object_marking_refs: [tlpMarkingId('clear')],
  };
  const shared = [identity, ...TLP_MARKINGS];
  const describers = new Map<number, ((data: Record<string, unknown>) => StixDescription) | undefined>();
  const describe = (hit: ExportedHit): StixDescription => {
    if (!describers.has(hit.sourceId)) describers.set(hit.sourceId, findSource(hit.sourceId)?.stix);
    const stix = describers.get(hit.sourceId);
    return stix ? stix(hit.data) : fallbackDescription(hit);
  };

  /**
   * The SDO/SRO properties every object of a hit shares; each object's own are assigned onto
   * them (Object.assign), not spread with them into a new literal: `{ ...common(), … }` made
   * objects V8 builds and stringifies many times slower, most of a TAXII page's CPU.
   */
  const common = (type: string, name: string, marking: string, added: string): StixObject => ({
    type,
    spec_version: '2.1',
    // One name per hit and type: each object of a hit has a UUID of its own.
    id: stixId(type, `${type}|${name}`),
    created_by_ref: identity.id,
    created: added,
    modified: added,
    object_marking_refs: [marking],
  });

  return {
    /** The objects every hit's objects refer to: the instance's identity and the TLP 2.0 marking definitions. */
    sharedObjects: (): StixObject[] => [...shared],

    /** The objects of one hit, each with a deterministic id; what they refer to is in them or in sharedObjects. */
    objectsOfHit(hit: ExportedHit): StixObject[] {
      const description = describe(hit);
      const marking = tlpMarkingId(hit.tlp);
      const added = isoTime(hit.addedAt);
      const seen = isoTime(hit.date);
      // The hit key with its rule (and so its organization): the same hit exported again, or
      // served by TAXII, keeps its ids; the same key under another rule is another finding.
      const name = `hit:${hit.ruleId}:${hit.key}`;
      const scos = observableObjects(description.observables, marking);
      const objects: StixObject[] = [...scos];
      const refs: string[] = [];
      let observed: StixObject | undefined;
      if (scos.length) {
        observed = Object.assign(common('observed-data', name, marking, added), {
          first_observed: seen,
          last_observed: seen,
          number_observed: 1,
          object_refs: scos.map((sco) => sco.id),
          x_dragnet_source: findSourceAlias(hit.sourceId),
          x_dragnet_incident: hit.incidentId,
        });
        objects.push(observed);
        refs.push(observed.id);
      }
      if (description.indicator) {
        const indicator: StixObject = Object.assign(common('indicator', name, marking, added), {
          name: description.indicator.name,
          indicator_types: description.indicator.types,
          pattern: description.indicator.pattern,
          pattern_type: 'stix',
          pattern_version: '2.1',
          valid_from: seen,
          labels: [findSourceAlias(hit.sourceId)],
        });
        const sighting: StixObject = Object.assign(common('sighting', name, marking, added), {
          first_seen: seen,
          last_seen: seen,
          count: 1,
          sighting_of_ref: indicator.id,
          where_sighted_refs: [identity.id],
        });
        if (observed) sighting.observed_data_refs = [observed.id];
        objects.push(indicator, sighting);
        refs.push(indicator.id, sighting.id);
      }
      objects.push(
        Object.assign(common('note', name, marking, added), {
          abstract: description.summary,
          content: description.text,
          authors: [deps.instanceName],
          // A hit with no observable (a card) is a note about what the instance found.
          object_refs: refs.length ? refs : [identity.id],
          labels: [findSourceAlias(hit.sourceId), `rule:${hit.ruleName}`],
          x_dragnet_incident: hit.incidentId,
        }),
      );
      return objects;
    },

    bundle: (objects: StixObject[]): StixBundle => ({
      type: 'bundle',
      id: `bundle--${crypto.randomUUID()}`,
      objects,
    }),
  };
}

const aliases = new Map<number, string>();
function findSourceAlias(sourceId: number): string {
  let alias = aliases.get(sourceId);
  if (alias === undefined) {
    alias = findSource(sourceId)?.name ?? `source-${sourceId}`;
    aliases.set(sourceId, alias);
  }
  return alias;
}
