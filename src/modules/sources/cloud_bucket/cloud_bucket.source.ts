import { sourceWithoutData } from '../source.ts';

/**
 * Cloud storage bucket (id 14): publicly listable storage buckets (S3, GCS, Azure Blob,
 * DigitalOcean Spaces) whose name or files match the watched keyword.
 *
 * Hit data: bucket, provider, region, url, is_public, file_count, total_size (bytes),
 * sample_files, discovered_at.
 */
export const cloudBucketSource = sourceWithoutData({
  id: 14,
  name: 'cloud_bucket',
  alias: 'Cloud storage buckets',
  description: 'Publicly accessible cloud storage buckets whose name or file names contain the watched keyword.',
  serviceType: 'sync',
  frequency: 'weekly',
  params: [
    { name: 'keyword', type: 'String', required: true, hint: 'Company, brand or domain looked for in bucket and file names', example: 'acmebank' },
    { name: 'providers', type: 'Array[String]', required: false, hint: 'Only buckets of these providers (all when omitted)', example: ['aws', 'azure'], valid_values: ['aws', 'gcp', 'azure', 'digitalocean'] },
    { name: 'file_extensions', type: 'Array[String]', required: false, hint: 'Only buckets holding files with these extensions (without the dot)', example: ['sql', 'bak', 'csv'] },
  ],
  excludableFields: ['bucket', 'provider'],
  filterableFields: ['provider', 'region', 'is_public'],
  sortableFields: ['discovered_at', 'file_count', 'total_size', 'bucket'],
});
