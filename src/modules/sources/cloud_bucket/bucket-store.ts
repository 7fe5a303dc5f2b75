import { slices, writeRows } from '../../../db/bulk-insert.ts';
import { createHash } from 'node:crypto';
import type { Generated } from 'kysely';
import type { SourceContext } from '../kit/source.ts';
import type { BucketObject } from './bucket-listing.ts';
import * as m0001 from './migrations/0001_bucket_objects.ts';

/** The table of migration cloud_bucket/0001_bucket_objects. */
export interface BucketObjectTable {
  id: Generated<number>;
  object_hash: string;
  provider: string;
  bucket: string;
  object_key: string;
  size: number;
  last_modified: number | null;
  etag: string | null;
  storage_class: string | null;
  region: string | null;
  url: string;
  extension: string | null;
  source_name: string;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type CloudBucketTables = { bucket_objects: BucketObjectTable };

export const cloudBucketMigrations = { 'cloud_bucket/0001_bucket_objects': m0001 };

export const bucketDb = (context: SourceContext) => context.db.withTables<CloudBucketTables>();

// Rows per INSERT: 13 columns × 1000 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 1000;

export interface WriteCounts {
  added: number;
  duplicates: number;
}

const objectHash = (object: BucketObject) =>
  createHash('sha256').update(`${object.provider}\n${object.bucket}\n${object.key}`).digest('hex');

/** Stores objects in one transaction per call; an object already stored is a duplicate, left as first listed. */
export async function writeObjects(
  context: SourceContext,
  objects: BucketObject[],
  source: { name: string; discoveredAt: number },
): Promise<WriteCounts> {
  if (objects.length === 0) return { added: 0, duplicates: 0 };
  const added = await writeRows(bucketDb(context), context.engine, {
    table: 'bucket_objects',
    rows: objects.map((object) => ({
      object_hash: objectHash(object),
      provider: object.provider,
      bucket: object.bucket,
      object_key: object.key,
      size: object.size,
      last_modified: object.lastModified,
      etag: object.etag,
      storage_class: object.storageClass,
      region: object.region,
      url: object.url,
      extension: object.extension,
      source_name: source.name,
      discovered_at: source.discoveredAt,
    })),
    conflict: ['object_hash'],
    statements: slices(ROWS_PER_STATEMENT),
  });
  return { added, duplicates: objects.length - added };
}
