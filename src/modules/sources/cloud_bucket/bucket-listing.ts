import type { ReadRecord } from '../common/ingest/ingest-kit.ts';
import type { XmlEvent } from './listing-xml.ts';

/**
 * Open bucket listings to the objects Dragnet keeps (docs/ingest.md "Bucket listings"): S3
 * ListBucketResult XML (also what DigitalOcean Spaces, MinIO, Wasabi and other S3-compatible
 * stores answer, and Google Cloud Storage's XML API, told apart by its namespace and object
 * generations), Azure Blob EnumerationResults XML, and the Google Cloud Storage JSON API's
 * objects list.
 */
export const PROVIDERS = ['aws', 'gcp', 'azure', 'digitalocean', 's3_compatible'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface BucketObject {
  provider: Provider;
  /** The bucket's name; for Azure `<account>/<container>`. */
  bucket: string;
  key: string;
  size: number;
  lastModified: number | null;
  etag: string | null;
  storageClass: string | null;
  region: string | null;
  url: string;
  /** Lowercase, without the dot; null when the name has none. */
  extension: string | null;
}

/** An object of the listing, or the reason its entry is rejected, and where it is. */
export type ReadObject = ReadRecord<BucketObject>;

/** The listing as a whole is unusable (an error document, no bucket name): the input fails. */
export class ListingError extends Error {}

/** Where a bucket is served from: every object's URL is `base` plus its key. */
interface Bucket {
  provider: Provider;
  name: string;
  region: string | null;
  base: string;
}

// S3, GCS and Azure cap object names at 1,024 bytes or characters.
const MAX_KEY = 1024;

/** What the listing's URL says, when the side channel (a `.url` file) gives it. */
export function originOf(url: URL): { provider: Provider; region: string | null } {
  const host = url.hostname.toLowerCase();
  if (/(^|\.)amazonaws\.com(\.cn)?$/.test(host)) {
    // s3.eu-west-1.amazonaws.com, s3-eu-west-1…, s3.dualstack.eu-west-1…, bucket.s3.eu-west-1…
    const region = /(?:^|\.)s3[.-](?:dualstack\.)?([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com/.exec(host);
    return { provider: 'aws', region: region?.[1] ?? null };
  }
  const spaces = /(?:^|\.)([a-z]+\d)\.(?:cdn\.)?digitaloceanspaces\.com$/.exec(host);
  if (spaces) return { provider: 'digitalocean', region: spaces[1]! };
  // Wasabi: s3.wasabisys.com, s3.eu-central-1.wasabisys.com, bucket.s3.us-east-2.wasabisys.com.
  const wasabi = /(?:^|\.)s3\.(?:([a-z]{2}-[a-z]+-\d)\.)?wasabisys\.com$/.exec(host);
  if (wasabi) return { provider: 's3_compatible', region: wasabi[1] ?? null };
  if (/(^|\.)(storage\.)?googleapis\.com$/.test(host)) return { provider: 'gcp', region: null };
  if (/\.blob\.core\.windows\.net$/.test(host)) return { provider: 'azure', region: null };
  return { provider: 's3_compatible', region: null };
}

const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/');

/** "backups/db.SQL" -> "sql"; ".env" -> "env"; no dot, or more than 10 letters and digits: null. */
export function extensionOf(key: string): string | null {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot === -1) return null;
  const extension = name.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,10}$/.test(extension) ? extension : null;
}

/** An S3 bucket: AWS unless the listing's URL names another S3-compatible host. */
export function s3Bucket(name: string, origin: URL | null): Bucket {
  if (!origin) {
    // Virtual-hosted URLs need a bucket name without dots for TLS; others go path-style.
    const base = name.includes('.')
      ? `https://s3.amazonaws.com/${encodeURIComponent(name)}/`
      : `https://${name}.s3.amazonaws.com/`;
    return { provider: 'aws', name, region: null, base };
  }
  const { provider, region } = originOf(origin);
  const virtualHosted = origin.hostname.toLowerCase().startsWith(`${name.toLowerCase()}.`);
  const base = virtualHosted
    ? `${origin.protocol}//${origin.host}/`
    : `${origin.protocol}//${origin.host}/${encodeURIComponent(name)}/`;
  return { provider: provider === 'azure' ? 's3_compatible' : provider, name, region, base };
}

/**
 * An Azure container from the listing's root attributes: ServiceEndpoint and ContainerName
 * (since API version 2013-08-15), or ContainerName as the container's URL (before it).
 */
export function azureBucket(attributes: Record<string, string>): Bucket {
  const endpoint = attributes.ServiceEndpoint?.trim();
  const container = attributes.ContainerName?.trim();
  if (!container) throw new ListingError('an Azure listing without ContainerName: the container is unknown');
  let url: URL;
  try {
    url = endpoint ? new URL(`${endpoint.replace(/\/*$/, '/')}${container}`) : new URL(container);
  } catch {
    throw new ListingError('an Azure listing whose ServiceEndpoint (or ContainerName) is not a URL');
  }
  const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const account = /^([a-z0-9]+)\.blob\.core\.windows\.net$/.exec(url.hostname.toLowerCase())?.[1] ?? segments.shift();
  const name = segments.at(-1);
  if (!account || !name)
    throw new ListingError(
      'an Azure listing whose account or container cannot be told from ServiceEndpoint and ContainerName',
    );
  return { provider: 'azure', name: `${account}/${name}`, region: null, base: `${url.href.replace(/\/*$/, '')}/` };
}

export const gcsBucket = (name: string): Bucket => ({
  provider: 'gcp',
  name,
  region: null,
  base: `https://storage.googleapis.com/${encodeURIComponent(name)}/`,
});

/** One entry's fields as text, read into an object or the reason it is not one. */
function objectOf(
  bucket: Bucket,
  fields: { key?: string; size?: string; lastModified?: string; etag?: string; storageClass?: string },
): BucketObject | string {
  const { key } = fields;
  if (!key) return 'the entry has no object name';
  if (key.length > MAX_KEY) return `the object name is longer than ${MAX_KEY} characters`;
  if (!fields.size || !/^\d{1,16}$/.test(fields.size) || !Number.isSafeInteger(Number(fields.size)))
    return 'the size is missing or not a whole number of bytes';
  let lastModified: number | null = null;
  if (fields.lastModified) {
    lastModified = Date.parse(fields.lastModified);
    if (Number.isNaN(lastModified)) return `the last-modified time "${fields.lastModified.slice(0, 40)}" is not a date`;
  }
  return {
    provider: bucket.provider,
    bucket: bucket.name,
    key,
    size: Number(fields.size),
    lastModified,
    etag: fields.etag?.replace(/^"|"$/g, '') || null,
    storageClass: fields.storageClass || null,
    region: bucket.region,
    url: bucket.base + encodeKey(key),
    extension: extensionOf(key),
  };
}

type XmlKind = 's3' | 'azure';

/** The namespace of Google Cloud Storage's XML listings (S3's is http://s3.amazonaws.com/doc/2006-03-01/). */
const GCS_XML_NAMESPACE = 'http://doc.s3.amazonaws.com/2006-03-01';

// A Map: the root element's name comes from the listing, and <constructor> must not find Object's.
const ROOTS = new Map<string, XmlKind>([
  ['ListBucketResult', 's3'],
  ['EnumerationResults', 'azure'],
]);
const NAMES: Record<XmlKind, string> = { s3: 'an S3 ListBucketResult', azure: 'an Azure EnumerationResults' };

/**
 * Reads an XML listing's events into objects. `format` `auto` takes the kind from the root
 * element; `s3` or `azure` insists on it. Throws ListingError for a document that is no usable
 * listing (another root, an error response, entries before the bucket's name).
 */
export function createXmlListingReader(options: { format: 'auto' | XmlKind; origin: URL | null }) {
  let kind: XmlKind | 'error' | null = null;
  let bucket: Bucket | null = null;
  // Google Cloud Storage's XML API answers an S3 ListBucketResult in its own namespace.
  let gcsDocument = false;
  const error: Record<string, string> = {};
  const bucketNamed = (name: string): Bucket =>
    gcsDocument && options.origin === null ? gcsBucket(name) : s3Bucket(name, options.origin);

  const onRoot = (name: string, attributes: Record<string, string>) => {
    if (name === 'Error') {
      kind = 'error';
      return;
    }
    const found = ROOTS.get(name);
    if (!found || (options.format !== 'auto' && found !== options.format)) {
      throw new ListingError(
        `not ${options.format === 'auto' ? 'an S3 or Azure bucket listing' : NAMES[options.format]} (root element ${name})`,
      );
    }
    kind = found;
    if (kind === 'azure') bucket = azureBucket(attributes);
    gcsDocument = kind === 's3' && attributes.xmlns?.trim().replace(/\/$/, '') === GCS_XML_NAMESPACE;
  };

  /**
   * An S3-shaped entry with GCS's own fields (object generations) is GCS's, whatever the
   * namespace said: a listing saved without it, or one an S3 client rewrote.
   */
  const providerOf = (current: Bucket, fields: Map<string, string>): Bucket => {
    if (
      current.provider !== 'aws' ||
      options.origin !== null ||
      !(fields.has('Generation') || fields.has('MetaGeneration'))
    )
      return current;
    gcsDocument = true;
    return bucketNamed(current.name);
  };

  return {
    read(event: XmlEvent): ReadObject | null {
      if (event.kind === 'root') onRoot(event.name, event.attributes);
      else if (event.kind === 'field' && kind === 'error') error[event.name] = event.value;
      else if (event.kind === 'field' && kind === 's3' && event.name === 'Name' && bucket === null) {
        if (!event.value) throw new ListingError('the listing has an empty Name: the bucket is unknown');
        bucket = bucketNamed(event.value);
      } else if (event.kind === 'record') {
        if (bucket === null)
          throw new ListingError('objects before the bucket Name: not a ListBucketResult as S3 writes it');
        const { fields } = event;
        if (kind === 's3') bucket = providerOf(bucket, fields);
        const object =
          kind === 's3'
            ? objectOf(bucket, {
                key: fields.get('Key'),
                size: fields.get('Size'),
                lastModified: fields.get('LastModified'),
                etag: fields.get('ETag'),
                storageClass: fields.get('StorageClass'),
              })
            : objectOf(bucket, {
                key: fields.get('Name'),
                size: fields.get('Properties/Content-Length'),
                lastModified: fields.get('Properties/Last-Modified'),
                etag: fields.get('Properties/Etag'),
                storageClass: fields.get('Properties/AccessTier'),
              });
        return { location: `object ${event.number}`, record: object };
      }
      return null;
    },
    /** The document ended: an error response or a listing without a bucket fails here. */
    end(): void {
      if (kind === 'error')
        throw new ListingError(
          `the listing is an error response: ${error.Code ?? 'no code'}: ${error.Message ?? 'no message'}`,
        );
      if (kind === null) throw new ListingError('no root element');
      if (bucket === null) throw new ListingError('the listing has no bucket Name');
    },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const textOf = (value: unknown) =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** A Google Cloud Storage JSON API objects list: `{"kind": "storage#objects", "items": [...]}`. */
export function gcsObjects(document: unknown): ReadObject[] {
  if (!isObject(document) || (document.kind !== 'storage#objects' && !Array.isArray(document.items))) {
    throw new ListingError('not a Google Cloud Storage objects list (kind "storage#objects")');
  }
  const items = Array.isArray(document.items) ? document.items : [];
  return items.map((item, i) => {
    const location = `item ${i + 1}`;
    if (!isObject(item)) return { location, record: 'expected an object resource' };
    const name = textOf(item.bucket);
    if (!name) return { location, record: 'the item has no bucket' };
    return {
      location,
      record: objectOf(gcsBucket(name), {
        key: textOf(item.name),
        size: textOf(item.size),
        lastModified: textOf(item.updated),
        etag: textOf(item.etag),
        storageClass: textOf(item.storageClass),
      }),
    };
  });
}
