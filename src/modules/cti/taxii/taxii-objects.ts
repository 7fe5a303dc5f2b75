import { validationError } from '../../../lib/errors.ts';
import type { ExportedHit } from '../exported-hits.ts';
import type { StixObject } from '../stix/stix-mapper.ts';
import type { HitPosition, TaxiiCollection, TaxiiCollections } from './taxii-collections.ts';

/** Where an object stands in a collection: its hit, and its index among that hit's objects. */
export interface ObjectPosition extends HitPosition {
  index: number;
}

/** The filters of the objects, manifest and versions endpoints (TAXII 2.1 section 3.4). */
export interface ObjectFilters {
  ids: Set<string> | null;
  types: Set<string> | null;
  /** null, 'last', 'first' and 'all' keep every version (a collection holds one of each object). */
  versions: Set<number> | null;
  specVersions: Set<string> | null;
}

/** One object of a page, with what the manifest and the headers say of it. */
export interface PageItem {
  object: StixObject;
  dateAdded: number;
  version: string;
}

export interface ObjectPage {
  items: PageItem[];
  /** The position of the next page's first object; null when this page is the last. */
  next: ObjectPosition | null;
}

// TAXII 2.1 3.4.2: an object's version is its `modified`; an object without one (an SCO) has
// its `created`, and failing that the date it was added.
export const versionOf = (object: StixObject, dateAdded: number): string =>
  typeof object.modified === 'string'
    ? object.modified
    : typeof object.created === 'string'
      ? object.created
      : new Date(dateAdded).toISOString();

function passes(object: StixObject, version: string, filters: ObjectFilters): boolean {
  if (filters.ids && !filters.ids.has(object.id)) return false;
  if (filters.types && !filters.types.has(object.type)) return false;
  // Every object the mapper makes is STIX 2.1; an SCO may leave spec_version out.
  if (filters.specVersions && !filters.specVersions.has(String(object.spec_version ?? '2.1'))) return false;
  if (filters.versions && !filters.versions.has(Date.parse(version))) return false;
  return true;
}

/** The `next` token: the position, opaque to clients (base64url of its four numbers). */
export const encodeNext = (p: ObjectPosition) =>
  Buffer.from(`${p.addedAt}.${p.matchId}.${p.hitId}.${p.index}`).toString('base64url');

export function decodeNext(token: string): ObjectPosition {
  const parts = Buffer.from(token, 'base64url').toString('latin1').split('.');
  const numbers = parts.map((part) => (/^[0-9]{1,16}$/.test(part) ? Number(part) : NaN));
  if (numbers.length !== 4 || numbers.some((n) => !Number.isSafeInteger(n))) {
    throw validationError('next', 'is not a token this server gave');
  }
  const [addedAt, matchId, hitId, index] = numbers as [number, number, number, number];
  return { addedAt, matchId, hitId, index };
}

/** Bounds of the hits fetched per query while a page fills (hitBatch). */
const MIN_HIT_BATCH = 16;
const HIT_BATCH = 1000;
/** Objects per hit before the page has mapped any: the fewest a hit with an observable gives. */
const FIRST_OBJECTS_PER_HIT = 3;

/**
 * Hits to read for `wanted` more objects (the page's rest and the peek at the next page's
 * first): by the objects per hit the page has had so far, with a tenth to spare. Each hit read
 * is a row and a JSON.parse; reading one per object wanted read four times the hits a page of
 * the full mapping uses. Filters that pass few objects read up to the bound per query.
 */
function hitBatch({ wanted, objects, hits, limit }: { wanted: number; objects: number; hits: number; limit: number }) {
  const perHit = hits > 0 ? objects / hits : FIRST_OBJECTS_PER_HIT;
  const most = Math.max(HIT_BATCH, limit + 1);
  const batch = perHit > 0 ? Math.ceil((wanted / perHit) * 1.1) + 1 : most;
  return Math.max(MIN_HIT_BATCH, Math.min(batch, most));
}

/**
 * Pages of a collection's objects: each hit's objects as the STIX mapper makes them, in the
 * order (date_added, incident, hit, index of the object in the hit). The shared objects (the
 * instance's identity, the markings) come first, with the collection's first hit. `limit` counts
 * objects; an object repeated within a page (an SCO of several hits) is served once there.
 */
export function createObjectPager(deps: {
  collections: TaxiiCollections;
  objectsOfHit: (hit: ExportedHit) => StixObject[];
  sharedObjects: () => StixObject[];
}) {
  return async function page(input: {
    orgId: number;
    collection: TaxiiCollection;
    after: ObjectPosition | null;
    addedAfter: number | null;
    limit: number;
    filters: ObjectFilters;
  }): Promise<ObjectPage> {
    const { orgId, collection, filters, limit } = input;
    const [first] = await deps.collections.hitsFrom({
      orgId,
      collection,
      from: null,
      inclusive: false,
      addedAfter: null,
      limit: 1,
    });
    const objectsOf = (hit: ExportedHit) =>
      hit.id === first?.id ? [...deps.sharedObjects(), ...deps.objectsOfHit(hit)] : deps.objectsOfHit(hit);

    const items: PageItem[] = [];
    const seen = new Set<string>();
    let from: HitPosition | null = input.after;
    let inclusive = true;
    let mapped = 0;
    for (;;) {
      const batch = hitBatch({ wanted: limit + 1 - items.length, objects: items.length, hits: mapped, limit });
      const hits = await deps.collections.hitsFrom({
        orgId,
        collection,
        from,
        inclusive,
        addedAfter: input.addedAfter,
        limit: batch,
      });
      for (const hit of hits) {
        const objects = objectsOf(hit);
        mapped++;
        const start = input.after && hit.id === input.after.hitId ? input.after.index : 0;
        for (let index = start; index < objects.length; index++) {
          const object = objects[index]!;
          const version = versionOf(object, hit.addedAt);
          if (!passes(object, version, filters)) continue;
          const position = { addedAt: hit.addedAt, matchId: hit.incidentId, hitId: hit.id, index };
          // The page is full: this object is where the next one starts.
          if (items.length === limit) return { items, next: position };
          // An SCO (no modified, no created) is one object whichever incident added it.
          const key = `${object.id}|${String(object.modified ?? object.created ?? '')}`;
          if (seen.has(key)) continue;
          seen.add(key);
          items.push({ object, dateAdded: hit.addedAt, version });
        }
      }
      if (hits.length < batch) return { items, next: null };
      const last = hits[hits.length - 1]!;
      from = { addedAt: last.addedAt, matchId: last.incidentId, hitId: last.id };
      inclusive = false;
    }
  };
}

export type ObjectPager = ReturnType<typeof createObjectPager>;
