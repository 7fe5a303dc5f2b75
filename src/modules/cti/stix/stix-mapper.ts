import { v5 as uuidv5 } from 'uuid';
import type { ExportedHit } from '../exported-hits.ts';

/** A STIX 2.1 object as JSON: its type and id, and the properties its type defines. */
export type StixObject = { type: string; id: string; [property: string]: unknown };

export interface StixBundle {
  type: 'bundle';
  id: string;
  objects: StixObject[];
}

// Dragnet's own namespace for the UUIDv5 ids of the objects it makes (docs/stix.md): the same
// hit always gives the same ids, so a platform that imports an export twice keeps one copy.
const DRAGNET_NAMESPACE = 'b7b5f5f0-6a4e-5c1e-9a8e-2f4c3c6d7e10';

export const stixId = (type: string, name: string) => `${type}--${uuidv5(name, DRAGNET_NAMESPACE)}`;

const isoTime = (epochMs: number) => new Date(epochMs).toISOString();

/**
 * Maps exported hits to STIX 2.1. The one place that knows STIX: the TAXII server, the bundle
 * export and the MISP feed take its objects as they are.
 */
export function createStixMapper(deps: { instanceName: string }) {
  const identity: StixObject = {
    type: 'identity',
    spec_version: '2.1',
    id: stixId('identity', `dragnet:${deps.instanceName}`),
    created: '2026-01-01T00:00:00.000Z',
    modified: '2026-01-01T00:00:00.000Z',
    name: deps.instanceName,
    identity_class: 'system',
  };
  return {
    /** The objects every hit's objects refer to: the instance's identity (and the TLP marking definitions). */
    sharedObjects: (): StixObject[] => [identity],

    /** The objects of one hit, each with a deterministic id; what they refer to is in them or in sharedObjects. */
    objectsOfHit(hit: ExportedHit): StixObject[] {
      const added = isoTime(hit.addedAt);
      return [
        {
          type: 'note',
          spec_version: '2.1',
          id: stixId('note', `hit:${hit.ruleId}:${hit.key}`),
          created: added,
          modified: added,
          created_by_ref: identity.id,
          content: JSON.stringify(hit.data),
          object_refs: [identity.id],
        },
      ];
    },

    bundle: (objects: StixObject[]): StixBundle => ({
      type: 'bundle',
      id: `bundle--${crypto.randomUUID()}`,
      objects,
    }),
  };
}
