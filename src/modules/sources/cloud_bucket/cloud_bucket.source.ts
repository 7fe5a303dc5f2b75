import { Type } from '@sinclair/typebox';
import type { ArgError } from '../kit/source.ts';
import { oneOf } from '../kit/arg-params.ts';
import { defineSource, preparedOrErrors } from '../kit/source.ts';
import { cloudBucketIngester } from './bucket-ingest.ts';
import { PROVIDERS } from './bucket-listing.ts';
import { matchBucketObjects } from './bucket-match.ts';
import { cloudBucketMigrations } from './bucket-store.ts';
import { loadDemoBuckets } from './demo-buckets.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { cloudBucketStix } from './cloud-bucket-stix.ts';

// A shorter keyword ("ab") is in too many object keys to mean anything.
const MIN_KEYWORD = 3;
const EXTENSION = /^\.?[a-z0-9]{1,10}$/i;

/** "SQL", ".sql" -> "sql": extensions are kept lowercase and without the dot. */
const extensionOf = (value: string) => value.trim().replace(/^\./, '').toLowerCase();

/**
 * Cloud storage buckets (id 14): objects in publicly listable buckets (S3, GCS, Azure Blob,
 * DigitalOcean Spaces, other S3-compatible stores) whose bucket name or key contains the
 * watched keyword, one hit per object; docs/sources.md lists the hit fields.
 */
export const cloudBucketSource = defineSource({
  stix: cloudBucketStix,
  id: 14,
  name: 'cloud_bucket',
  alias: 'Cloud storage buckets',
  description:
    'Objects in publicly listable cloud storage buckets whose bucket name or key contains the watched keyword.',
  serviceType: 'sync',
  frequency: 'weekly',
  args: Type.Object({
    keyword: Type.String({
      description: 'Company, brand or domain looked for in bucket names and object keys, any case',
      examples: ['acmebank'],
    }),
    providers: Type.Optional(
      Type.Array(oneOf(PROVIDERS), {
        description: 'Only objects of these providers (all when omitted)',
        examples: [['aws', 'azure']],
      }),
    ),
    file_extensions: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Only objects with these file extensions (any case, with or without the dot)',
        examples: [['sql', 'bak', 'csv']],
      }),
    ),
  }),
  excludableFields: ['bucket', 'key', 'provider', 'extension'],
  filterableFields: ['provider', 'region', 'bucket', 'extension', 'matched_on'],
  sortableFields: ['discovered_at', 'last_modified', 'size', 'bucket', 'key'],
  hasData: true,
  newestRecordAt: newestRecord('bucket_objects', 'discovered_at'),
  prepare(args) {
    const keyword = args.keyword.trim();
    const errors: ArgError[] = [];
    if (keyword.length < MIN_KEYWORD)
      errors.push({ field: 'args.keyword', message: `must be at least ${MIN_KEYWORD} characters`, rule: 3 });
    (args.file_extensions ?? []).forEach((extension, index) => {
      if (!EXTENSION.test(extension.trim()))
        errors.push({
          field: `args.file_extensions[${index}]`,
          message: 'must be 1 to 10 letters or digits, with or without a leading dot',
          rule: 3,
        });
    });
    return preparedOrErrors(errors, () => ({
      keyword,
      providers: args.providers,
      extensions: args.file_extensions?.map(extensionOf),
    }));
  },
  match: matchBucketObjects,
  migrations: cloudBucketMigrations,
  ingesters: [cloudBucketIngester],
  async demo(context, now) {
    const added = await loadDemoBuckets(context, now);
    return `Demo buckets: ${added} synthetic objects in open bucket listings added (try cloud_bucket with keyword "acmebank")`;
  },
});
