import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { createExportedHitReader } from './exported-hits.ts';
import { incidentExportRoutes } from './incident-export.routes.ts';
import { createMispFeed } from './misp/misp-feed.ts';
import { mispRoutes } from './misp/misp.routes.ts';
import { createStixMapper } from './stix/stix-mapper.ts';
import { createTaxiiCollections } from './taxii/taxii-collections.ts';
import { createObjectPager } from './taxii/taxii-objects.ts';
import { TAXII_PREFIX, taxiiRoutes } from './taxii/taxii.routes.ts';

/**
 * Dragnet in the security team's toolchain (docs/stix.md): hits as STIX 2.1, served over TAXII
 * 2.1 and as MISP events and feeds.
 */
export function createCtiModule(deps: { db: Kysely<Database>; clock: Clock; instanceName: string }) {
  const hits = createExportedHitReader(deps.db);
  const stix = createStixMapper({ instanceName: deps.instanceName });
  const taxiiCollections = createTaxiiCollections(deps.db);
  const taxiiPager = createObjectPager({
    collections: taxiiCollections,
    objectsOfHit: (hit) => stix.objectsOfHit(hit),
    sharedObjects: () => stix.sharedObjects(),
  });
  const misp = createMispFeed({ db: deps.db, objectsOfHit: (hit) => stix.objectsOfHit(hit) });
  return {
    hits,
    stix,
    routes: (async (app) => {
      await app.register(incidentExportRoutes({ hits, stix }));
      await app.register(taxiiRoutes({ collections: taxiiCollections, pager: taxiiPager }), { prefix: TAXII_PREFIX });
      await app.register(mispRoutes(misp));
    }) satisfies FastifyPluginAsyncTypebox,
  };
}
