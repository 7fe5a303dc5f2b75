import { Type } from '@sinclair/typebox';
import type { ArgError } from '../kit/source.ts';
import { oneOf } from '../kit/arg-params.ts';
import { defineSource, preparedOrErrors } from '../kit/source.ts';
import { appStoreIngester } from './app-ingest.ts';
import { matchApps } from './app-match.ts';
import { appStoreMigrations } from './app-store.ts';
import { brandOf, wordsOf } from './brand-match.ts';
import { loadDemoApps } from './demo-apps.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { appStoreStix } from './app-store-stix.ts';

// A shorter brand ("ab") is in too many app names and ids to mean anything.
const MIN_BRAND = 3;

/**
 * App stores (id 13): apps in Google Play, the App Store and third-party stores whose name, app
 * id, developer or description uses the watched brand, or a near miss of it, and that are not
 * by one of the brand's own developers. Each app is reported once per rule; docs/sources.md
 * lists the hit fields.
 */
export const appStoreSource = defineSource({
  stix: appStoreStix,
  id: 13,
  name: 'app_store',
  alias: 'App stores',
  description: 'Apps in official and third-party app stores that impersonate or reuse the watched brand.',
  serviceType: 'sync',
  frequency: 'weekly',
  args: Type.Object({
    query: Type.String({
      description:
        'Brand looked for in app names, app ids, developer names and descriptions; near misses of it in names, ids and developers',
      examples: ['Acme Bank'],
    }),
    platforms: Type.Optional(
      Type.Array(oneOf(['android', 'ios']), {
        description: 'Only these platforms (both when omitted)',
        examples: [['android']],
      }),
    ),
    official_developers: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Developer names or ids of your own apps (any case); their apps are not reported',
        examples: [['Acme Bank plc']],
      }),
    ),
  }),
  excludableFields: ['app_id', 'developer', 'developer_id', 'store'],
  filterableFields: ['platform', 'store', 'developer', 'matched_on', 'lookalike', 'genre'],
  sortableFields: ['discovered_at', 'updated_at', 'released_at', 'installs', 'rating', 'name'],
  hasData: true,
  newestRecordAt: newestRecord('app_listings', 'discovered_at'),
  prepare(args) {
    const brand = brandOf(args.query);
    const errors: ArgError[] = [];
    if ((brand?.glued.length ?? 0) < MIN_BRAND)
      errors.push({ field: 'args.query', message: `must have at least ${MIN_BRAND} letters or digits`, rule: 3 });
    (args.official_developers ?? []).forEach((official, index) => {
      if (wordsOf(official).length === 0)
        errors.push({ field: `args.official_developers[${index}]`, message: 'must have a letter or digit', rule: 3 });
    });
    return preparedOrErrors(errors, () => ({
      brand: brand!,
      platforms: args.platforms,
      officialDevelopers: args.official_developers,
    }));
  },
  match: matchApps,
  migrations: appStoreMigrations,
  ingesters: [appStoreIngester],
  async demo(context, now) {
    const added = await loadDemoApps(context, now);
    return `Demo apps: ${added} synthetic store listings added (try app_store with query "Acme Bank")`;
  },
});
