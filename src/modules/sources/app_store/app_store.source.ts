import { sourceWithoutData } from '../source.ts';

/**
 * App stores (id 13): apps in official and third-party stores that use the watched brand
 * (rogue, cloned or fake apps). Apps of the listed official developers are not reported.
 *
 * Hit data: app_id (package name / bundle id), name, developer, platform, store, version, url,
 * installs, rating, released_at, updated_at.
 */
export const appStoreSource = sourceWithoutData({
  id: 13,
  name: 'app_store',
  alias: 'App stores',
  description: 'Apps in official and third-party app stores that impersonate or reuse the watched brand.',
  serviceType: 'sync',
  frequency: 'weekly',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Brand or app name looked for in app names, package ids and descriptions', example: 'Acme Bank' },
    { name: 'platforms', type: 'Array[String]', required: false, hint: 'Only these platforms (both when omitted)', example: ['android'], valid_values: ['android', 'ios'] },
    { name: 'official_developers', type: 'Array[String]', required: false, hint: 'Developer names or ids of your own apps; their apps are not reported', example: ['Acme Bank plc'] },
  ],
  excludableFields: ['app_id', 'developer', 'store'],
  filterableFields: ['platform', 'store', 'developer'],
  sortableFields: ['updated_at', 'released_at', 'installs', 'rating', 'name'],
});
