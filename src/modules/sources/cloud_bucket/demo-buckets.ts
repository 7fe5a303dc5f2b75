import { DAY_MS } from '../../../lib/clock.ts';
import type { SourceContext } from '../kit/source.ts';
import { azureBucket, extensionOf, gcsBucket, s3Bucket, type BucketObject } from './bucket-listing.ts';
import { writeObjects } from './bucket-store.ts';

/**
 * Synthetic demo objects in open buckets around the fictional "Acme Bank": a database dump and a
 * customer export in an S3 bucket named after it, an HR backup in an Azure container, an invoice
 * under its name in someone else's GCS bucket, and buckets that have nothing to do with it.
 * Every bucket, account and key is made up.
 */
const buckets = {
  acmeBackups: s3Bucket(
    'acmebank-backups',
    new URL('https://acmebank-backups.s3.eu-west-1.amazonaws.com/?list-type=2'),
  ),
  acmeAzure: azureBucket({
    ServiceEndpoint: 'https://acmebankstorage.blob.core.windows.net/',
    ContainerName: 'exports',
  }),
  printShop: gcsBucket('printshop-orders-7731'),
  photos: s3Bucket('holiday-photos-2025', new URL('https://holiday-photos-2025.s3.us-east-2.amazonaws.com/')),
  spaces: s3Bucket('static-site-assets', new URL('https://static-site-assets.nyc3.digitaloceanspaces.com/')),
};

function demoObjects(now: number): BucketObject[] {
  const object = (
    bucket: (typeof buckets)[keyof typeof buckets],
    key: string,
    size: number,
    daysAgo: number,
  ): BucketObject => ({
    provider: bucket.provider,
    bucket: bucket.name,
    key,
    size,
    lastModified: now - daysAgo * DAY_MS,
    etag: null,
    storageClass: null,
    region: bucket.region,
    url: bucket.base + key.split('/').map(encodeURIComponent).join('/'),
    extension: extensionOf(key),
  });
  return [
    object(buckets.acmeBackups, 'db/core-banking-2026-03-01.sql', 48_213_004, 12),
    object(buckets.acmeBackups, 'exports/customers.csv', 1_204_551, 20),
    object(buckets.acmeBackups, 'logs/app.log', 20_331, 2),
    object(buckets.acmeAzure, 'hr/payroll-2025.bak', 7_340_032, 40),
    object(buckets.printShop, 'clients/acmebank/invoice-0042.pdf', 88_120, 6),
    object(buckets.photos, 'beach/IMG_2231.jpg', 3_311_402, 90),
    object(buckets.spaces, 'css/site.css', 12_004, 3),
  ];
}

/** Stores the demo objects as found one to seven days before `now`; returns how many were new. */
export async function loadDemoBuckets(context: SourceContext, now: number): Promise<number> {
  let added = 0;
  for (const [i, object] of demoObjects(now).entries()) {
    added += (await writeObjects(context, [object], { name: 'demo-listings', discoveredAt: now - (1 + i) * DAY_MS }))
      .added;
  }
  return added;
}
