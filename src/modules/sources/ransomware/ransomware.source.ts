import { Type } from '@sinclair/typebox';
import type { ArgError } from '../kit/source.ts';
import { defineSource, preparedOrErrors } from '../kit/source.ts';
import { loadDemoPosts } from './demo-posts.ts';
import { ransomwareIngester } from './post-ingest.ts';
import { matchPosts, postQueryOf } from './post-match.ts';
import { ransomwareMigrations } from './post-store.ts';
import { ransomwareLiveCollector } from './ransomware-live.collector.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { ransomwareStix } from './ransomware-stix.ts';

/**
 * Ransomware (id 10): victim posts on ransomware groups' leak sites (ransomware.live and
 * ransomwatch posts, the v2 API), matched on the victim name as whole words, and on the
 * website and description when the query is a domain; docs/sources.md lists the hit fields.
 */
export const ransomwareSource = defineSource({
  stix: ransomwareStix,
  id: 10,
  name: 'ransomware',
  alias: 'Ransomware leak sites',
  description: "Victim posts on ransomware groups' leak sites that name the watched organization or domain.",
  serviceType: 'sync',
  frequency: 'daily',
  args: Type.Object({
    query: Type.String({
      description:
        'Organization name, found as whole words of the victim name (any case or punctuation); or a domain, also found in the website and description',
      examples: ['Acme Bank'],
    }),
    groups: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Only posts of these groups (ransomware.live group names)',
        examples: [['lockbit3', 'alphv']],
      }),
    ),
    countries: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Only victims in these countries (ISO 3166-1 alpha-2 codes)',
        examples: [['US', 'DE']],
      }),
    ),
  }),
  excludableFields: ['group', 'victim', 'website'],
  filterableFields: ['group', 'country', 'activity', 'matched_on'],
  sortableFields: ['discovered_at', 'published_at', 'group', 'victim'],
  hasData: true,
  newestRecordAt: newestRecord('ransomware_posts', 'discovered_at'),
  prepare(args) {
    const query = postQueryOf(args);
    const errors: ArgError[] = [];
    if (query.words.length === 0)
      errors.push({ field: 'args.query', message: 'must hold a letter or a digit', rule: 3 });
    (args.countries ?? []).forEach((country, index) => {
      if (!/^[a-z]{2}$/i.test(country.trim()))
        errors.push({
          field: `args.countries[${index}]`,
          message: 'must be an ISO 3166-1 alpha-2 code (two letters)',
          rule: 3,
        });
    });
    return preparedOrErrors(errors, () => query);
  },
  match: matchPosts,
  migrations: ransomwareMigrations,
  ingesters: [ransomwareIngester],
  collectors: [ransomwareLiveCollector],
  async demo(context, now) {
    const added = await loadDemoPosts(context, now);
    return `Demo ransomware posts: ${added} synthetic leak-site posts added (try ransomware with query "Acme Bank" or "acme-bank.com")`;
  },
});
