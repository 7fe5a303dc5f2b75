import type { ArgError } from '../kit/args-validation.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { loadDemoPosts } from './demo-posts.ts';
import { ransomwareIngester } from './post-ingest.ts';
import { matchPosts, postQueryOf } from './post-match.ts';
import { wordsOf } from './post-names.ts';
import { ransomwareMigrations } from './post-store.ts';
import { ransomwareLiveCollector } from './ransomware-live.collector.ts';

interface RansomwareArgs {
  query: string;
  groups?: string[];
  countries?: string[];
}

function checkRansomwareArgs(args: Record<string, unknown>): ArgError[] {
  const { query, countries = [] } = args as unknown as RansomwareArgs;
  const errors: ArgError[] = [];
  if (wordsOf(query).length === 0) errors.push({ field: 'args.query', message: 'must hold a letter or a digit', rule: 3 });
  countries.forEach((country, index) => {
    if (!/^[a-z]{2}$/i.test(country.trim())) errors.push({ field: `args.countries[${index}]`, message: 'must be an ISO 3166-1 alpha-2 code (two letters)', rule: 3 });
  });
  return errors;
}

/**
 * Ransomware (id 10): victim posts on ransomware groups' leak sites (ransomware.live and
 * ransomwatch posts, the v2 API), matched on the victim name as whole words, and on the
 * website and description when the query is a domain; docs/sources.md lists the hit fields.
 */
export const ransomwareSource: SourceDefinition = {
  id: 10,
  name: 'ransomware',
  alias: 'Ransomware leak sites',
  description: "Victim posts on ransomware groups' leak sites that name the watched organization or domain.",
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    {
      name: 'query',
      type: 'String',
      required: true,
      hint: 'Organization name, found as whole words of the victim name (any case or punctuation); or a domain, also found in the website and description',
      example: 'Acme Bank',
    },
    { name: 'groups', type: 'Array[String]', required: false, hint: 'Only posts of these groups (ransomware.live group names)', example: ['lockbit3', 'alphv'] },
    { name: 'countries', type: 'Array[String]', required: false, hint: 'Only victims in these countries (ISO 3166-1 alpha-2 codes)', example: ['US', 'DE'] },
  ],
  excludableFields: ['group', 'victim', 'website'],
  filterableFields: ['group', 'country', 'activity', 'matched_on'],
  sortableFields: ['discovered_at', 'published_at', 'group', 'victim'],
  hasData: true,
  checkArgs: checkRansomwareArgs,
  match: (context, args, window, limit) => matchPosts(context, postQueryOf(args as unknown as RansomwareArgs), window, limit),
  migrations: ransomwareMigrations,
  ingesters: [ransomwareIngester],
  collectors: [ransomwareLiveCollector],
  async demo(context, now) {
    const added = await loadDemoPosts(context, now);
    return `Demo ransomware posts: ${added} synthetic leak-site posts added (try ransomware with query "Acme Bank" or "acme-bank.com")`;
  },
};
