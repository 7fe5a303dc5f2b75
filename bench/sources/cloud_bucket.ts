import { createWriteStream, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/**
 * Synthetic open-bucket listings for `npm run bench -- sources`: S3 ListObjectsV2 pages of 1,000
 * objects (the most S3 returns in one), one XML file a page with its `.url` side channel, ten
 * pages a bucket, as a bucket scanner saves them.
 */
const KEYS_PER_PAGE = 1000;
const PAGES_PER_BUCKET = 10;
const REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2'];
const WORDS = ['acme', 'globex', 'initech', 'umbrella', 'northwind', 'contoso'];
const FOLDERS = ['backups', 'exports', 'uploads', 'logs', 'static/img'];
const EXTENSIONS = ['sql', 'csv', 'json', 'jpg', 'pdf', 'log', 'bak', 'zip'];

function contents(n: number): string {
  const key = `${FOLDERS[n % FOLDERS.length]}/${(n >> 4).toString(36)}/file-${n}.${EXTENSIONS[n % EXTENSIONS.length]}`;
  const modified = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  return `  <Contents>\n    <Key>${key}</Key>\n    <LastModified>${modified}</LastModified>\n    <ETag>&quot;${n.toString(16).padStart(32, '0')}&quot;</ETag>\n    <Size>${(n * 7919) % 50_000_000}</Size>\n    <StorageClass>STANDARD</StorageClass>\n  </Contents>\n`;
}

export const benchSource = {
  source: 'cloud_bucket',
  ingester: 'cloud_bucket',
  format: 'auto',
  unit: 'objects',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    for (let page = 0, written = 0; written < count; page++) {
      const bucketIndex = Math.floor(page / PAGES_PER_BUCKET);
      const bucket = `${WORDS[bucketIndex % WORDS.length]}-data-${bucketIndex}`;
      const region = REGIONS[bucketIndex % REGIONS.length]!;
      const keys = Math.min(KEYS_PER_PAGE, count - written);
      const file = path.join(dir, `${bucket}-page-${String(page % PAGES_PER_BUCKET).padStart(2, '0')}.xml`);
      const out = createWriteStream(file);
      out.write(
        `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\n  <Name>${bucket}</Name>\n  <Prefix></Prefix>\n  <KeyCount>${keys}</KeyCount>\n  <MaxKeys>1000</MaxKeys>\n  <IsTruncated>${written + keys < count}</IsTruncated>\n`,
      );
      for (let i = 0; i < keys; i++, written++) {
        if (!out.write(contents(written))) await once(out, 'drain');
      }
      out.end('</ListBucketResult>\n');
      await once(out, 'finish');
      writeFileSync(`${file}.url`, `https://${bucket}.s3.${region}.amazonaws.com/?list-type=2\n`);
      files.push(file);
    }
    return files;
  },
};
