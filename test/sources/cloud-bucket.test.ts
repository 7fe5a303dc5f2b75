import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findIngester, findSource } from '../../src/modules/sources/index.ts';
import { repoRoot } from '../support/cli.ts';
import { expectError } from '../support/http.ts';
import {
  createRulesApp,
  deliverPending,
  HOUR,
  iso,
  payloadOf,
  requestsTo,
  rulePaths,
  runsOf,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The cloud-bucket source end to end: S3, Azure and GCS listings ingested through the real
 * ingester on the test app's store and manual clock, rules over HTTP, hits filtered, sorted and
 * excluded, email and signed webhook delivered. No fixture of these formats exists in
 * /work/shared/fixtures: the listings are written here in the shapes the providers' API
 * references give (S3 ListObjectsV2, Azure List Blobs, GCS objects.list). Every bucket, account
 * and key is made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const WEEK = 7 * 24 * HOUR;

interface S3Entry {
  key: string;
  size?: number;
  modified?: string;
  etag?: string;
}

const s3Listing = (bucket: string, entries: S3Entry[]) =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
    `  <Name>${bucket}</Name>`,
    '  <Prefix></Prefix>',
    `  <KeyCount>${entries.length}</KeyCount>`,
    '  <MaxKeys>1000</MaxKeys>',
    '  <IsTruncated>false</IsTruncated>',
    ...entries.map((entry) =>
      [
        '  <Contents>',
        `    <Key>${entry.key}</Key>`,
        `    <LastModified>${entry.modified ?? '2026-02-11T08:12:45.000Z'}</LastModified>`,
        `    <ETag>&quot;${entry.etag ?? 'fba9dede5f27731c9771645a39863328'}&quot;</ETag>`,
        entry.size === undefined ? '' : `    <Size>${entry.size}</Size>`,
        '    <StorageClass>STANDARD</StorageClass>',
        '  </Contents>',
      ].join('\n'),
    ),
    '</ListBucketResult>',
  ].join('\n');

const BACKUPS: S3Entry[] = [
  { key: 'db/core-2026-03-01.sql', size: 48_213_004, modified: '2026-03-01T02:00:00.000Z' },
  { key: 'exports/customers.csv', size: 1_204_551 },
  { key: 'exports/broken.csv' },
  { key: 'logs/app.log', size: 20_331 },
];

const azureListing = `\uFEFF<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="https://sharedfiles01.blob.core.windows.net/" ContainerName="public">
  <Blobs>
    ${[
      ['clients/AcmeBank/contracts.pdf', 310_220],
      ['clients/northwind/contracts.pdf', 290_004],
      ['backups/acmebank-hr.bak', 7_340_032],
    ]
      .map(
        ([name, size]) => `<Blob>
      <Name>${name}</Name>
      <Properties>
        <Last-Modified>Tue, 03 Feb 2026 10:00:00 GMT</Last-Modified>
        <Etag>0x8DC2A1B2C3D4E5F</Etag>
        <Content-Length>${size}</Content-Length>
        <BlobType>BlockBlob</BlobType>
        <AccessTier>Hot</AccessTier>
      </Properties>
    </Blob>`,
      )
      .join('\n    ')}
    <BlobPrefix><Name>archive/</Name></BlobPrefix>
  </Blobs>
  <NextMarker />
</EnumerationResults>`;

const gcsListing = JSON.stringify({
  kind: 'storage#objects',
  items: [
    ['clients/acmebank/invoice-0042.pdf', '88120'],
    ['clients/other/invoice-0001.pdf', '70001'],
  ].map(([name, size]) => ({
    kind: 'storage#object',
    name,
    bucket: 'printshop-orders',
    size,
    storageClass: 'STANDARD',
    etag: 'CIDo5aOYtYsDEAE=',
    updated: '2026-01-01T00:00:00.000Z',
  })),
});

const deniedListing =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>';

describe(`sources: cloud buckets end to end (${testEngine})`, () => {
  const s = sourceSuite('buckets');
  const files: Record<string, string> = {};

  beforeAll(() => {
    const write = (name: string, text: string) => {
      files[name] = path.join(s.dir, name);
      writeFileSync(files[name], text);
    };
    write('acmebank-backups.xml', s3Listing('acmebank-backups', BACKUPS));
    // The side channel: where each listing was fetched from.
    write('acmebank-backups.xml.url', 'https://acmebank-backups.s3.eu-west-1.amazonaws.com/?list-type=2\n');
    write('spaces.xml', s3Listing('static-assets', [{ key: 'acmebank.com/logo.png', size: 5_120 }]));
    write('spaces.xml.url', 'https://static-assets.nyc3.digitaloceanspaces.com/');
    write('sharedfiles.xml', azureListing);
    write('printshop.json', gcsListing);
    write('denied.xml', deniedListing);
  });
  const ingest = (inputs: string[], format?: string) => s.ingest('cloud_bucket', inputs, format);
  const matchesOf = async (ruleId: number) => (await s.alice.matches(ruleId, { page_size: 100 })).results;
  const keys = (hits: HitView[]) => hits.map((hit) => hit.key);

  let rule: number;
  let kit: DeliveryKit;
  let firstMatch: number;

  it('ingests S3, Spaces, Azure and GCS listings; a bad entry is rejected by its number, an error document fails alone', async () => {
    await s.moveTo(T0 - 2 * HOUR);
    const s3 = await ingest([files['acmebank-backups.xml']!, files['denied.xml']!]);
    expect(s3.failed).toBe(true);
    expect(s3.summary).toMatchObject({ inputs: 2, failed: 1, records: 3, added: 3, rejected: 1 });
    expect(s3.lines.slice(1)).toEqual([
      `  rejected ${files['acmebank-backups.xml']} object 3: the size is missing or not a whole number of bytes`,
      `  error: ${files['denied.xml']}: listing: the listing is an error response: AccessDenied: Access Denied`,
    ]);

    await s.moveTo(T0 - HOUR);
    // A folder: the .url files beside the listings are read as their side channel, not as inputs.
    const rest = await ingest([s.dir]);

    expect(rest.summary).toMatchObject({ inputs: 5, failed: 1, records: 9, added: 6, duplicates_skipped: 3 });
  });

  it('a rule reports each object whose bucket or key holds the keyword, newest first; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    kit = await s.newKit();
    const created = await s.alice.created(sourceRule(kit, 'Acme Bank buckets', 14, { keyword: 'AcmeBank' }));
    rule = created.id;
    expect(created).toMatchObject({
      service: 14,
      frequency: 'weekly',
      last_run: iso(T0),
      total_matches_count: 7,
      total_alerts_count: 1,
    });
    const [match] = await matchesOf(rule);
    firstMatch = match!.id;
    expect(match).toMatchObject({ total_hits: 7, stored_hits: 7, window_start: null, window_end: iso(T0) });

    const hits = await s.hitsOf(firstMatch);
    // Newest first; one listing's objects in reverse order of the listing.
    expect(hits.map((hit) => [hit.provider, hit.bucket, hit.key, hit.matched_on])).toEqual([
      ['digitalocean', 'static-assets', 'acmebank.com/logo.png', 'key'],
      ['azure', 'sharedfiles01/public', 'backups/acmebank-hr.bak', 'key'],
      ['azure', 'sharedfiles01/public', 'clients/AcmeBank/contracts.pdf', 'key'],
      ['gcp', 'printshop-orders', 'clients/acmebank/invoice-0042.pdf', 'key'],
      ['aws', 'acmebank-backups', 'logs/app.log', 'bucket'],
      ['aws', 'acmebank-backups', 'exports/customers.csv', 'bucket'],
      ['aws', 'acmebank-backups', 'db/core-2026-03-01.sql', 'bucket'],
    ]);
    expect(hits.find((hit) => hit.extension === 'sql')).toEqual({
      id: expect.any(Number),
      hit_key: expect.stringMatching(/^object:\d+$/),
      is_excluded: false,
      bucket: 'acmebank-backups',
      key: 'db/core-2026-03-01.sql',
      size: 48_213_004,
      last_modified: '2026-03-01T02:00:00.000Z',
      provider: 'aws',
      region: 'eu-west-1',
      url: 'https://acmebank-backups.s3.eu-west-1.amazonaws.com/db/core-2026-03-01.sql',
      extension: 'sql',
      matched_on: 'bucket',
      discovered_at: iso(T0 - 2 * HOUR),
    });
    expect(hits.find((hit) => hit.provider === 'digitalocean')).toMatchObject({
      region: 'nyc3',
      url: 'https://static-assets.nyc3.digitaloceanspaces.com/acmebank.com/logo.png',
      extension: 'png',
    });
    expect(hits.find((hit) => hit.extension === 'bak')).toMatchObject({
      region: null,
      url: 'https://sharedfiles01.blob.core.windows.net/public/backups/acmebank-hr.bak',
      last_modified: '2026-02-03T10:00:00.000Z',
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme Bank buckets',
      service: 'Cloud storage buckets',
      total_matches: 7,
      excluded_matches: 0,
    });
    const mails = s.smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Acme Bank buckets: 7 hits in Cloud storage buckets');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(keys(await s.hitsOf(firstMatch, { filter: 'provider:AZURE', sort: 'key' }))).toEqual([
      'backups/acmebank-hr.bak',
      'clients/AcmeBank/contracts.pdf',
    ]);
    expect(keys(await s.hitsOf(firstMatch, { filter: ['region:eu-west-1', 'extension:csv'] }))).toEqual([
      'exports/customers.csv',
    ]);
    expect(await s.hitsOf(firstMatch, { filter: 'matched_on:bucket' })).toHaveLength(3);
    expect((await s.hitsOf(firstMatch, { sort: '-size' })).map((hit) => hit.size)).toEqual([
      48_213_004, 7_340_032, 1_204_551, 310_220, 88_120, 20_331, 5_120,
    ]);
    expect((await s.hitsOf(firstMatch, { sort: 'last_modified' }))[0]).toMatchObject({ provider: 'gcp' });
    expectError(await s.alice.get(`${rulePaths.hits(firstMatch)}?filter=url:x`), 400, 'validation_failed');

    const exclusion = await s.alice.createExclusion(rule, { field: 'bucket', value: 'ACMEBANK-BACKUPS' });
    expect(exclusion.statusCode, exclusion.body).toBe(201);
    expect(await s.hitsOf(firstMatch, { include_excluded: false })).toHaveLength(4);
    expect(await s.alice.getJson(rulePaths.match(firstMatch))).toMatchObject({ excluded_hits: 3, new_hits: 4 });
    for (const { id } of await s.alice.exclusions(rule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
    expectError(await s.alice.createExclusion(rule, { field: 'size', value: '1' }), 400, 'validation_failed');
  });

  it('narrows by provider and file extension', async () => {
    const kit2 = await s.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const created = await s.alice.created(sourceRule(kit2, name, 14, args));
      if (created.total_matches_count === 0) return [];
      const [match] = await matchesOf(created.id);
      return keys(await s.hitsOf(match!.id, { sort: 'key' }));
    };
    expect(
      await run('dumps on aws and azure', {
        keyword: 'acmebank',
        providers: ['aws', 'azure'],
        file_extensions: ['sql', 'BAK', '.csv'],
      }),
    ).toEqual(['backups/acmebank-hr.bak', 'db/core-2026-03-01.sql', 'exports/customers.csv']);
    expect(await run('a domain in keys', { keyword: 'acmebank.com' })).toEqual(['acmebank.com/logo.png']);
    expect(await run('gcp pdfs', { keyword: 'invoice', providers: ['gcp'], file_extensions: ['pdf'] })).toEqual([
      'clients/acmebank/invoice-0042.pdf',
      'clients/other/invoice-0001.pdf',
    ]);
    expect(await run('nobody', { keyword: 'northwind', providers: ['aws'] })).toEqual([]);
  });

  it('args are checked: a keyword of 3 characters, extensions of letters and digits', async () => {
    const kit3 = await s.newKit();
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit3, 'bad args', 14, args)), 400, 'validation_failed').fields;
    expect(await fields({ keyword: ' ab ' })).toEqual([
      { field: 'args.keyword', message: 'must be at least 3 characters (rule 3)', rule: 3 },
    ]);
    expect(await fields({ keyword: 'acmebank', file_extensions: ['sql', 'tar.gz', '*'] })).toEqual([
      {
        field: 'args.file_extensions[1]',
        message: 'must be 1 to 10 letters or digits, with or without a leading dot (rule 3)',
        rule: 3,
      },
      {
        field: 'args.file_extensions[2]',
        message: 'must be 1 to 10 letters or digits, with or without a leading dot (rule 3)',
        rule: 3,
      },
    ]);
    expect(await fields({ keyword: 'acmebank', providers: ['ibm'] })).toEqual([
      {
        field: 'args.providers[0]',
        message: 'must be one of: aws, gcp, azure, digitalocean, s3_compatible (rule 3)',
        rule: 3,
      },
    ]);
  });

  it('a week later reports only objects first listed since; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    // The bucket listed again: one new object, one rewritten under its old key.
    const relisted = path.join(s.dir, 'relisted', 'acmebank-backups.xml');
    mkdirSync(path.dirname(relisted));
    writeFileSync(
      relisted,
      s3Listing('acmebank-backups', [
        ...BACKUPS.filter((entry) => entry.size !== undefined),
        { key: 'db/core-2026-03-12.sql', size: 48_990_112 },
        { key: 'logs/app.log', size: 99_999, etag: '0f0f' },
      ]),
    );
    writeFileSync(`${relisted}.url`, 'https://acmebank-backups.s3.eu-west-1.amazonaws.com/');
    expect((await ingest([relisted])).summary).toMatchObject({ records: 5, added: 1, duplicates_skipped: 4 });

    await s.moveTo(T0 + WEEK);
    await tickAndDeliver(s.t);
    const matches = await matchesOf(rule);
    expect(matches).toHaveLength(2);
    expect(matches[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + WEEK) });
    expect(await s.hitsOf(matches[0]!.id)).toEqual([
      expect.objectContaining({ key: 'db/core-2026-03-12.sql', size: 48_990_112, discovered_at: iso(T0 + 2 * HOUR) }),
    ]);
    expect(payloadOf(requestsTo(s.receiver, kit)[1]!)).toMatchObject({ total_matches: 1 });

    await s.moveTo(T0 + WEEK + HOUR);
    const again = await ingest([s.dir]);
    expect(again.summary).toMatchObject({ added: 0, duplicates_skipped: again.summary.records });
    await s.moveTo(T0 + 2 * WEEK);
    await tickAndDeliver(s.t);
    expect(await matchesOf(rule)).toHaveLength(2);
    expect((await runsOf(s.t, rule)).at(-1)).toMatchObject({ status: 'empty', window_end: T0 + 2 * WEEK });
  });

  it("a format given by hand must be the listing's; a bad side channel fails the input", async () => {
    const wrong = await ingest([files['acmebank-backups.xml']!], 'azure');
    expect(wrong.lines).toContain(
      `  error: ${files['acmebank-backups.xml']}: listing: not an Azure EnumerationResults (root element ListBucketResult)`,
    );
    const text = path.join(s.dir, 'notes.json');
    writeFileSync(text, 'hello');
    expect((await ingest([text])).lines).toContain(
      `  error: ${text}: listing: neither XML (an S3 or Azure listing) nor JSON (a GCS objects list)`,
    );
    writeFileSync(`${files['printshop.json']}.url`, 'storage.googleapis.com/printshop-orders');
    expect((await ingest([files['printshop.json']!])).lines).toContain(
      `  error: ${files['printshop.json']}: printshop.json.url: the first line is not an http(s) URL`,
    );
    rmSync(`${files['printshop.json']}.url`);
    const truncated = path.join(s.dir, 'truncated.xml');
    writeFileSync(
      truncated,
      s3Listing('truncated-bucket', [
        { key: 'a.txt', size: 1 },
        { key: 'b.txt', size: 2 },
      ]).slice(0, -30),
    );
    const report = await ingest([truncated]);
    // The objects before the break are whole, and kept.
    expect(report.summary).toMatchObject({ failed: 1, records: 1, added: 1 });
    expect(report.lines.at(-1)).toBe(`  error: ${truncated}: after object 1: malformed XML: unclosed tag: Contents`);
  });

  it("another organization's rule, match and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.matches(rule)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.hits(firstMatch)), 404, 'not_found');
  });
});

describe(`sources: bucket listings as the providers serve them (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("each provider is read from the document (or its .url), and object URLs take that provider's form", async () => {
    const folder = path.join(repoRoot, 'test', 'fixtures', 'cloud_bucket');
    const report = await findIngester('cloud_bucket')!.run(t.container.sourceContext, [folder], { format: 'auto' });
    expect(report.summary).toMatchObject({ inputs: 6, failed: 0, records: 8, added: 8, rejected: 0 });
    const { hits } = await findSource(14)!.match(
      t.container.sourceContext,
      { keyword: 'northwind' },
      { since: null, until: t.clock.now().getTime() },
      20,
    );
    const byKey = Object.fromEntries(
      hits.map((hit) => [hit.data.key, [hit.data.provider, hit.data.bucket, hit.data.region, hit.data.url]]),
    );
    expect(byKey).toEqual({
      '2025/northwind-orders.csv': [
        'aws',
        'northwind-exports',
        null,
        'https://northwind-exports.s3.amazonaws.com/2025/northwind-orders.csv',
      ],
      'db/northwind.sql.gz': [
        'aws',
        'northwind-exports',
        null,
        'https://northwind-exports.s3.amazonaws.com/db/northwind.sql.gz',
      ],
      // GCS's XML API answers a ListBucketResult in its own namespace, with object generations.
      'press/northwind-logo.png': [
        'gcp',
        'northwind-media',
        null,
        'https://storage.googleapis.com/northwind-media/press/northwind-logo.png',
      ],
      'staff/northwind badge list.xlsx': [
        'gcp',
        'northwind-media',
        null,
        'https://storage.googleapis.com/northwind-media/staff/northwind%20badge%20list.xlsx',
      ],
      'contracts/northwind-2025.pdf': [
        'azure',
        'northwindfiles/shared',
        null,
        'https://northwindfiles.blob.core.windows.net/shared/contracts/northwind-2025.pdf',
      ],
      'hr/northwind-payroll.csv': [
        'gcp',
        'northwind-archive',
        null,
        'https://storage.googleapis.com/northwind-archive/hr/northwind-payroll.csv',
      ],
      'northwind-nas.tar': [
        's3_compatible',
        'northwind-backups',
        null,
        'http://files.northwind-traders.test:9000/northwind-backups/northwind-nas.tar',
      ],
      'cam1/northwind-lobby.mp4': [
        's3_compatible',
        'northwind-cctv',
        'eu-central-1',
        'https://s3.eu-central-1.wasabisys.com/northwind-cctv/cam1/northwind-lobby.mp4',
      ],
    });
  });

  it('a GCS listing saved without its namespace is still told by its object generations', async () => {
    const file = path.join(repoRoot, 'test', 'fixtures', 'cloud_bucket', 'gcs-xml-listing.xml');
    const bare = path.join(t.container.sourceContext.dataDir, 'gcs-bare.xml');
    writeFileSync(
      bare,
      readFileSync(file, 'utf8')
        .replace(" xmlns='http://doc.s3.amazonaws.com/2006-03-01'", '')
        .replaceAll('northwind-media', 'northwind-media-copy'),
    );
    expect(
      (await findIngester('cloud_bucket')!.run(t.container.sourceContext, [bare], { format: 's3' })).summary,
    ).toMatchObject({ added: 2 });
    const { hits } = await findSource(14)!.match(
      t.container.sourceContext,
      { keyword: 'northwind-media-copy' },
      { since: null, until: t.clock.now().getTime() },
      20,
    );
    expect(hits.map((hit) => [hit.data.provider, hit.data.url])).toEqual([
      ['gcp', 'https://storage.googleapis.com/northwind-media-copy/staff/northwind%20badge%20list.xlsx'],
      ['gcp', 'https://storage.googleapis.com/northwind-media-copy/press/northwind-logo.png'],
    ]);
  });
});

describe(`sources: the cloud-bucket demo data (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  // test/sources/demo-examples.test.ts checks that the catalog examples find these objects.
  it('is dated before now, and a second demo adds nothing', async () => {
    const now = t.clock.now().getTime();
    const demo = () => findSource(14)!.demo!(t.container.sourceContext, now);
    expect(await demo()).toMatch(/: 7 synthetic objects/);
    expect(await demo()).toMatch(/: 0 synthetic objects/);
    const found = await findSource(14)!.match(
      t.container.sourceContext,
      { keyword: 'acmebank', providers: ['aws', 'azure'], file_extensions: ['sql', 'bak', 'csv'] },
      { since: null, until: now },
      100,
    );
    expect(found.hits.map((hit) => hit.data.key)).toEqual([
      'db/core-banking-2026-03-01.sql',
      'exports/customers.csv',
      'hr/payroll-2025.bak',
    ]);
    expect(found.hits.every((hit) => hit.date < now)).toBe(true);
  });
});
