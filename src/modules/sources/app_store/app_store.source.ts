import type { ArgError } from '../kit/args-validation.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { appStoreIngester } from './app-ingest.ts';
import { matchApps } from './app-match.ts';
import { appStoreMigrations } from './app-store.ts';
import { brandOf, wordsOf } from './brand-match.ts';
import { loadDemoApps } from './demo-apps.ts';

interface AppStoreArgs {
  query: string;
  platforms?: string[];
  official_developers?: string[];
}

// A shorter brand ("ab") is in too many app names and ids to mean anything.
const MIN_BRAND = 3;

function checkAppStoreArgs(args: Record<string, unknown>): ArgError[] {
  const { query, official_developers: officials = [] } = args as unknown as AppStoreArgs;
  const errors: ArgError[] = [];
  if (wordsOf(query).join('').length < MIN_BRAND) errors.push({ field: 'args.query', message: `must have at least ${MIN_BRAND} letters or digits`, rule: 3 });
  officials.forEach((official, index) => {
    if (wordsOf(official).length === 0) errors.push({ field: `args.official_developers[${index}]`, message: 'must have a letter or digit', rule: 3 });
  });
  return errors;
}

/**
 * App stores (id 13): apps in Google Play, the App Store and third-party stores whose name, app
 * id, developer or description uses the watched brand, or a near miss of it, and that are not
 * by one of the brand's own developers. Each app is reported once per rule; docs/sources.md
 * lists the hit fields.
 */
export const appStoreSource: SourceDefinition = {
  id: 13,
  name: 'app_store',
  alias: 'App stores',
  description: 'Apps in official and third-party app stores that impersonate or reuse the watched brand.',
  serviceType: 'sync',
  frequency: 'weekly',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Brand looked for in app names, app ids, developer names and descriptions; near misses of it in names, ids and developers', example: 'Acme Bank' },
    { name: 'platforms', type: 'Array[String]', required: false, hint: 'Only these platforms (both when omitted)', example: ['android'], valid_values: ['android', 'ios'] },
    { name: 'official_developers', type: 'Array[String]', required: false, hint: 'Developer names or ids of your own apps (any case); their apps are not reported', example: ['Acme Bank plc'] },
  ],
  excludableFields: ['app_id', 'developer', 'developer_id', 'store'],
  filterableFields: ['platform', 'store', 'developer', 'matched_on', 'lookalike', 'genre'],
  sortableFields: ['discovered_at', 'updated_at', 'released_at', 'installs', 'rating', 'name'],
  hasData: true,
  checkArgs: checkAppStoreArgs,
  match(context, rawArgs, window, limit) {
    const args = rawArgs as unknown as AppStoreArgs;
    const brand = brandOf(args.query);
    // A rule stored before checkArgs held the query to letters or digits finds nothing.
    if (!brand) return Promise.resolve({ hits: [], total: 0 });
    return matchApps(context, { brand, platforms: args.platforms, officialDevelopers: args.official_developers }, window, limit);
  },
  migrations: appStoreMigrations,
  ingesters: [appStoreIngester],
  async demo(context, now) {
    const added = await loadDemoApps(context, now);
    return `Demo apps: ${added} synthetic store listings added (try app_store with query "Acme Bank")`;
  },
};
