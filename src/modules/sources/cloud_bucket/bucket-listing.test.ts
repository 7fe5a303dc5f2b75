import { describe, expect, it } from 'vitest';
import {
  azureBucket,
  createXmlListingReader,
  extensionOf,
  gcsObjects,
  ListingError,
  originOf,
  s3Bucket,
  type ReadObject,
} from './bucket-listing.ts';
import { createXmlEventReader, XmlSyntaxError } from './listing-xml.ts';

/**
 * Listings in the documented shapes (no fixture of these formats is shipped in
 * /work/shared/fixtures, so they are written here from the providers' API references: S3
 * ListObjectsV2, Azure List Blobs, GCS objects.list). Buckets and keys are made up.
 */
const S3_LISTING = `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>acme-backups</Name>
  <Prefix></Prefix>
  <KeyCount>3</KeyCount>
  <MaxKeys>1000</MaxKeys>
  <IsTruncated>false</IsTruncated>
  <Contents>
    <Key>db/core banking.sql</Key>
    <LastModified>2026-02-11T08:12:45.000Z</LastModified>
    <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>
    <Size>434234</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents>
    <Key>exports/</Key>
    <LastModified>2026-02-10T00:00:00.000Z</LastModified>
    <ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag>
    <Size>0</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents>
    <Key>exports/customers.csv</Key>
    <LastModified>yesterday</LastModified>
    <Size>1204551</Size>
  </Contents>
  <Contents>
    <Key>exports/big.csv</Key>
    <Size>-1</Size>
  </Contents>
  <CommonPrefixes><Prefix>logs/</Prefix></CommonPrefixes>
</ListBucketResult>
`;

const AZURE_LISTING = `\uFEFF<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="https://acmestore.blob.core.windows.net/" ContainerName="exports">
  <MaxResults>5000</MaxResults>
  <Blobs>
    <Blob>
      <Name>hr/payroll-2025.bak</Name>
      <Properties>
        <Creation-Time>Tue, 03 Feb 2026 10:00:00 GMT</Creation-Time>
        <Last-Modified>Tue, 03 Feb 2026 10:00:00 GMT</Last-Modified>
        <Etag>0x8DC2A1B2C3D4E5F</Etag>
        <Content-Length>7340032</Content-Length>
        <Content-Type>application/octet-stream</Content-Type>
        <BlobType>BlockBlob</BlobType>
        <AccessTier>Hot</AccessTier>
        <LeaseStatus>unlocked</LeaseStatus>
      </Properties>
      <OrMetadata />
    </Blob>
    <BlobPrefix><Name>logs/</Name></BlobPrefix>
    <Blob>
      <Name><![CDATA[reports/q1 <draft>.pdf]]></Name>
      <Properties><Content-Length>120</Content-Length></Properties>
    </Blob>
  </Blobs>
  <NextMarker />
</EnumerationResults>
`;

/** Feeds the text in pieces of `size` characters, as a stream would. */
function readXml(text: string, options: Parameters<typeof createXmlListingReader>[0], size = 7): ReadObject[] {
  const xml = createXmlEventReader();
  const listing = createXmlListingReader(options);
  const objects: ReadObject[] = [];
  for (let i = 0; i < text.length; i += size) {
    for (const event of xml.write(text.slice(i, i + size))) {
      const object = listing.read(event);
      if (object) objects.push(object);
    }
  }
  xml.close();
  listing.end();
  return objects;
}

describe('S3 ListBucketResult', () => {
  it('reads each Contents entry, rejecting bad ones by line', () => {
    const objects = readXml(S3_LISTING, { format: 'auto', origin: null });
    expect(objects).toEqual([
      {
        location: 'object 1',
        record: {
          provider: 'aws',
          bucket: 'acme-backups',
          key: 'db/core banking.sql',
          size: 434234,
          lastModified: Date.parse('2026-02-11T08:12:45.000Z'),
          etag: 'fba9dede5f27731c9771645a39863328',
          storageClass: 'STANDARD',
          region: null,
          url: 'https://acme-backups.s3.amazonaws.com/db/core%20banking.sql',
          extension: 'sql',
        },
      },
      { location: 'object 2', record: expect.objectContaining({ key: 'exports/', size: 0, extension: null }) },
      { location: 'object 3', record: 'the last-modified time "yesterday" is not a date' },
      { location: 'object 4', record: 'the size is missing or not a whole number of bytes' },
    ]);
  });

  it('takes provider, region and URL form from where the listing was fetched', () => {
    const first = (origin: string) =>
      readXml(S3_LISTING, { format: 's3', origin: new URL(origin) })[0]!.record as {
        provider: string;
        region: string | null;
        url: string;
      };
    expect(first('https://acme-backups.s3.eu-west-1.amazonaws.com/?list-type=2')).toMatchObject({
      provider: 'aws',
      region: 'eu-west-1',
      url: 'https://acme-backups.s3.eu-west-1.amazonaws.com/db/core%20banking.sql',
    });
    expect(first('https://s3.us-gov-west-1.amazonaws.com/acme-backups?prefix=db/')).toMatchObject({
      region: 'us-gov-west-1',
      url: 'https://s3.us-gov-west-1.amazonaws.com/acme-backups/db/core%20banking.sql',
    });
    expect(first('https://acme-backups.fra1.digitaloceanspaces.com/')).toMatchObject({
      provider: 'digitalocean',
      region: 'fra1',
    });
    // Google Cloud Storage's XML API answers with a ListBucketResult too.
    expect(first('https://storage.googleapis.com/acme-backups')).toMatchObject({
      provider: 'gcp',
      region: null,
      url: 'https://storage.googleapis.com/acme-backups/db/core%20banking.sql',
    });
    expect(first('http://minio.internal.example:9000/acme-backups')).toMatchObject({
      provider: 's3_compatible',
      url: 'http://minio.internal.example:9000/acme-backups/db/core%20banking.sql',
    });
  });

  it('puts a bucket with dots path-style', () => {
    expect(s3Bucket('backups.acme.example', null).base).toBe('https://s3.amazonaws.com/backups.acme.example/');
  });
});

describe('Azure EnumerationResults', () => {
  it('reads each Blob with its properties; the bucket is account/container', () => {
    expect(readXml(AZURE_LISTING, { format: 'auto', origin: null }, 11)).toEqual([
      {
        location: 'object 1',
        record: {
          provider: 'azure',
          bucket: 'acmestore/exports',
          key: 'hr/payroll-2025.bak',
          size: 7340032,
          lastModified: Date.parse('2026-02-03T10:00:00Z'),
          etag: '0x8DC2A1B2C3D4E5F',
          storageClass: 'Hot',
          region: null,
          url: 'https://acmestore.blob.core.windows.net/exports/hr/payroll-2025.bak',
          extension: 'bak',
        },
      },
      {
        location: 'object 2',
        record: expect.objectContaining({
          key: 'reports/q1 <draft>.pdf',
          size: 120,
          lastModified: null,
          url: 'https://acmestore.blob.core.windows.net/exports/reports/q1%20%3Cdraft%3E.pdf',
        }),
      },
    ]);
  });

  it('reads the container URL of listings before API version 2013-08-15, and a path-style emulator endpoint', () => {
    expect(azureBucket({ ContainerName: 'https://acmestore.blob.core.windows.net/exports' })).toEqual({
      provider: 'azure',
      name: 'acmestore/exports',
      region: null,
      base: 'https://acmestore.blob.core.windows.net/exports/',
    });
    expect(
      azureBucket({ ServiceEndpoint: 'http://127.0.0.1:10000/devstoreaccount1/', ContainerName: 'exports' }),
    ).toMatchObject({ name: 'devstoreaccount1/exports', base: 'http://127.0.0.1:10000/devstoreaccount1/exports/' });
    expect(() => azureBucket({ ServiceEndpoint: 'https://acmestore.blob.core.windows.net/' })).toThrow(ListingError);
  });
});

describe('listings that are not usable', () => {
  const fails = (text: string, format: 'auto' | 's3' | 'azure' = 'auto') => {
    try {
      readXml(text, { format, origin: null });
    } catch (error) {
      return error instanceof ListingError || error instanceof XmlSyntaxError
        ? error.message
        : `unexpected ${String(error)}`;
    }
    return 'no error';
  };

  it('an error document, another root, the other provider, a missing Name', () => {
    expect(
      fails(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>X</RequestId></Error>',
      ),
    ).toBe('the listing is an error response: AccessDenied: Access Denied');
    expect(fails('<ListAllMyBucketsResult><Buckets/></ListAllMyBucketsResult>')).toBe(
      'not an S3 or Azure bucket listing (root element ListAllMyBucketsResult)',
    );
    expect(fails(AZURE_LISTING.replace('\uFEFF', ''), 's3')).toBe(
      'not an S3 ListBucketResult (root element EnumerationResults)',
    );
    expect(
      fails('<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents><Name>b</Name></ListBucketResult>'),
    ).toBe('objects before the bucket Name: not a ListBucketResult as S3 writes it');
    expect(fails('<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>')).toBe(
      'the listing has no bucket Name',
    );
  });

  it('malformed XML, with the last whole object before it', () => {
    expect(
      fails(
        '<ListBucketResult>\n  <Name>b</Name>\n  <Contents><Key>a</Key><Size>1</Size></Contents>\n  <Contents><Key>a</Contents>\n</ListBucketResult>',
      ),
    ).toBe('after object 1: malformed XML: unexpected close tag.');
    expect(fails('<ListBucketResult><Name>b</Name>')).toBe(
      'before the first object: malformed XML: unclosed tag: ListBucketResult',
    );
  });
});

describe('GCS objects list', () => {
  it('reads each item; size is a string in the API', () => {
    const document = {
      kind: 'storage#objects',
      items: [
        {
          kind: 'storage#object',
          id: 'printshop-orders/clients/acmebank/invoice-0042.pdf/1767225600000000',
          selfLink: 'https://www.googleapis.com/storage/v1/b/printshop-orders/o/clients%2Facmebank%2Finvoice-0042.pdf',
          mediaLink:
            'https://storage.googleapis.com/download/storage/v1/b/printshop-orders/o/clients%2Facmebank%2Finvoice-0042.pdf?generation=1767225600000000&alt=media',
          name: 'clients/acmebank/invoice-0042.pdf',
          bucket: 'printshop-orders',
          generation: '1767225600000000',
          metageneration: '1',
          contentType: 'application/pdf',
          storageClass: 'STANDARD',
          size: '88120',
          md5Hash: 'XrY7u+Ae7tCTyyK7j1rNww==',
          crc32c: 'yZRlqg==',
          etag: 'CIDo5aOYtYsDEAE=',
          timeCreated: '2026-01-01T00:00:00.000Z',
          updated: '2026-01-01T00:00:00.000Z',
        },
        { name: 'x', size: '1' },
        { name: 'clients/acmebank/', bucket: 'printshop-orders', size: 'big' },
      ],
    };
    expect(gcsObjects(document)).toEqual([
      {
        location: 'item 1',
        record: {
          provider: 'gcp',
          bucket: 'printshop-orders',
          key: 'clients/acmebank/invoice-0042.pdf',
          size: 88120,
          lastModified: Date.parse('2026-01-01T00:00:00.000Z'),
          etag: 'CIDo5aOYtYsDEAE=',
          storageClass: 'STANDARD',
          region: null,
          url: 'https://storage.googleapis.com/printshop-orders/clients/acmebank/invoice-0042.pdf',
          extension: 'pdf',
        },
      },
      { location: 'item 2', record: 'the item has no bucket' },
      { location: 'item 3', record: 'the size is missing or not a whole number of bytes' },
    ]);
    expect(gcsObjects({ kind: 'storage#objects' })).toEqual([]);
    expect(() => gcsObjects({ resultCount: 0, results: [] })).toThrow(
      'not a Google Cloud Storage objects list (kind "storage#objects")',
    );
  });
});

describe('originOf and extensionOf', () => {
  it('tell the provider and region by the host', () => {
    expect(originOf(new URL('https://s3-eu-west-2.amazonaws.com/b'))).toEqual({ provider: 'aws', region: 'eu-west-2' });
    expect(originOf(new URL('https://b.s3.dualstack.ap-south-1.amazonaws.com/'))).toEqual({
      provider: 'aws',
      region: 'ap-south-1',
    });
    expect(originOf(new URL('https://b.s3.amazonaws.com/'))).toEqual({ provider: 'aws', region: null });
    expect(originOf(new URL('https://acct.blob.core.windows.net/c'))).toEqual({ provider: 'azure', region: null });
    expect(originOf(new URL('https://b.nyc3.cdn.digitaloceanspaces.com/'))).toEqual({
      provider: 'digitalocean',
      region: 'nyc3',
    });
  });

  it('read the extension of the last name in the key', () => {
    expect(extensionOf('db/Prod.SQL')).toBe('sql');
    expect(extensionOf('backup.sql.gz')).toBe('gz');
    expect(extensionOf('app/.env')).toBe('env');
    expect(extensionOf('v1.2/README')).toBeNull();
    expect(extensionOf('folder/')).toBeNull();
    expect(extensionOf('a.this-is-no-extension')).toBeNull();
  });
});
