import type { ArgError } from '../kit/args-validation.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { cloudBucketIngester } from './bucket-ingest.ts';
import { PROVIDERS } from './bucket-listing.ts';
import { matchBucketObjects } from './bucket-match.ts';
import { cloudBucketMigrations } from './bucket-store.ts';
import { loadDemoBuckets } from './demo-buckets.ts';

interface CloudBucketArgs {
  keyword: string;
  providers?: string[];
  file_extensions?: string[];
}

// A shorter keyword ("ab") is in too many object keys to mean anything.
const MIN_KEYWORD = 3;
const EXTENSION = /^\.?[a-z0-9]{1,10}$/i;

/** "SQL", ".sql" -> "sql": extensions are kept lowercase and without the dot. */
const extensionOf = (value: string) => value.trim().replace(/^\./, '').toLowerCase();

function checkCloudBucketArgs(args: Record<string, unknown>): ArgError[] {
  const { keyword, file_extensions: extensions = [] } = args as unknown as CloudBucketArgs;
  const errors: ArgError[] = [];
  if (keyword.trim().length < MIN_KEYWORD) errors.push({ field: 'args.keyword', message: `must be at least ${MIN_KEYWORD} characters`, rule: 3 });
  extensions.forEach((extension, index) => {
    if (!EXTENSION.test(extension.trim())) errors.push({ field: `args.file_extensions[${index}]`, message: 'must be 1 to 10 letters or digits, with or without a leading dot', rule: 3 });
  });
  return errors;
}

/**
 * Cloud storage buckets (id 14): objects in publicly listable buckets (S3, GCS, Azure Blob,
 * DigitalOcean Spaces, other S3-compatible stores) whose bucket name or key contains the
 * watched keyword, one hit per object; docs/sources.md lists the hit fields.
 */
export const cloudBucketSource: SourceDefinition = {
  id: 14,
  name: 'cloud_bucket',
  alias: 'Cloud storage buckets',
  description: 'Objects in publicly listable cloud storage buckets whose bucket name or key contains the watched keyword.',
  serviceType: 'sync',
  frequency: 'weekly',
  params: [
    { name: 'keyword', type: 'String', required: true, hint: 'Company, brand or domain looked for in bucket names and object keys, any case', example: 'acmebank' },
    { name: 'providers', type: 'Array[String]', required: false, hint: 'Only objects of these providers (all when omitted)', example: ['aws', 'azure'], valid_values: [...PROVIDERS] },
    { name: 'file_extensions', type: 'Array[String]', required: false, hint: 'Only objects with these file extensions (any case, with or without the dot)', example: ['sql', 'bak', 'csv'] },
  ],
  excludableFields: ['bucket', 'key', 'provider', 'extension'],
  filterableFields: ['provider', 'region', 'bucket', 'extension', 'matched_on'],
  sortableFields: ['discovered_at', 'last_modified', 'size', 'bucket', 'key'],
  hasData: true,
  checkArgs: checkCloudBucketArgs,
  match(context, rawArgs, window, limit) {
    const args = rawArgs as unknown as CloudBucketArgs;
    return matchBucketObjects(context, { keyword: args.keyword.trim(), providers: args.providers, extensions: args.file_extensions?.map(extensionOf) }, window, limit);
  },
  migrations: cloudBucketMigrations,
  ingesters: [cloudBucketIngester],
  async demo(context, now) {
    const added = await loadDemoBuckets(context, now);
    return `Demo buckets: ${added} synthetic objects in open bucket listings added (try cloud_bucket with keyword "acmebank")`;
  },
};
