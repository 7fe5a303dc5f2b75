import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import { createTestCa, issueCertificate } from '../support/ct-log.ts';
import {
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
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The certificate source end to end: certstream frames (the real example frame from
 * /work/shared/fixtures when present, and made-up frames of the same shape) and PEM/DER files of
 * real certificates made by a test CA, ingested through the real ingester on the test app's store
 * and manual clock; rules over HTTP finding exact, subdomain and lookalike names; hits filtered,
 * sorted and excluded; email and signed webhook delivered. Every name here is made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const CERTIFICATE = 9;
const FIXTURE = '/work/shared/fixtures/certstream/example.json';

const ARGON = { name: "Google 'Argon2026h1' log", url: 'ct.googleapis.com/logs/us1/argon2026h1/' };
const XENON = { name: "Google 'Xenon2026h1' log", url: 'ct.googleapis.com/logs/eu1/xenon2026h1/' };
const issuer = (O: string, CN: string) => ({ C: 'US', CN, O, aggregated: `/C=US/CN=${CN}/O=${O}` });
const LETS_ENCRYPT = issuer("Let's Encrypt", 'R11');
const DIGICERT = issuer('DigiCert Inc', 'DigiCert Global G2 TLS RSA SHA256 2020 CA1');
const ZEROSSL = issuer('ZeroSSL', 'ZeroSSL ECC Domain Secure Site CA');

const sha1 = (n: number) =>
  Array.from({ length: 20 }, (_, i) => ((n * 37 + i * 11) % 256).toString(16).padStart(2, '0').toUpperCase()).join(':');

/** A certstream certificate_update frame, one line. */
function frame(spec: {
  n: number;
  names: string[];
  issuer: ReturnType<typeof issuer>;
  precert?: boolean;
  log?: typeof ARGON;
  index?: number;
  org?: string;
  seen?: number;
}) {
  const log = spec.log ?? ARGON;
  const index = spec.index ?? 900_000 + spec.n;
  return JSON.stringify({
    message_type: 'certificate_update',
    data: {
      update_type: spec.precert ? 'PrecertLogEntry' : 'X509LogEntry',
      leaf_cert: {
        subject: {
          C: null,
          CN: spec.names[0],
          L: null,
          O: spec.org ?? null,
          OU: null,
          ST: null,
          aggregated: `/CN=${spec.names[0]}`,
        },
        issuer: spec.issuer,
        extensions: { subjectAltName: spec.names.map((name) => `DNS:${name}`).join(', ') },
        not_before: 1_772_700_000 + spec.n,
        not_after: 1_780_476_000 + spec.n * 86_400,
        serial_number: `4A3B${spec.n.toString(16).toUpperCase()}`,
        fingerprint: sha1(spec.n),
        all_domains: spec.names,
      },
      chain: [],
      cert_index: index,
      cert_link: `https://${log.url}ct/v1/get-entries?start=${index}&end=${index}`,
      seen: spec.seen ?? 1_773_100_000.25 + spec.n,
      source: log,
    },
  });
}

const fixtureLine = existsSync(FIXTURE) ? readFileSync(FIXTURE, 'utf8').trim() : null;
const frames = [
  '{"message_type":"heartbeat","timestamp":1773100000.0}',
  frame({ n: 1, names: ['acme-bank.com', 'www.acme-bank.com'], issuer: LETS_ENCRYPT }),
  frame({ n: 2, names: ['login.acme-bank.com'], issuer: DIGICERT, precert: true, org: 'Acme Bank N.A.' }),
  '{"message_type":"certificate_update","data":',
  frame({ n: 3, names: ['acme-bank-secure-login.com', 'www.acme-bank-secure-login.com'], issuer: ZEROSSL, log: XENON }),
  frame({ n: 4, names: ['mail.northwind-traders.com'], issuer: LETS_ENCRYPT }),
  '{"message_type":"dns_entries","data":{}}',
  // The first certificate again, from another log: the same certificate, one hit.
  frame({ n: 1, names: ['acme-bank.com', 'www.acme-bank.com'], issuer: LETS_ENCRYPT, log: XENON, index: 77 }),
  frame({ n: 5, names: ['*.acme-bank.com.account-verify.net'], issuer: LETS_ENCRYPT, log: XENON }).replace(
    sha1(5),
    'not-a-fingerprint',
  ),
  ...(fixtureLine ? [fixtureLine] : []),
].join('\n');
// Learned of after the first run, though logged long before.
const lateFrames = frame({ n: 6, names: ['acmebank-support.net'], issuer: ZEROSSL, seen: 1_770_000_000 });

describe(`sources: certificates from CT end to end (${testEngine})`, () => {
  const suite = sourceSuite('certificate');
  const testCa = createTestCa('Acme Test Trust', 'Acme Test Trust ECC CA 1');
  const vpn = issueCertificate(testCa, {
    names: ['vpn.acme-bank.com', 'vpn2.acme-bank.com'],
    subjectOrg: 'Acme Bank N.A.',
    serial: 0xa1b2c3,
    notBefore: new Date('2026-03-01T00:00:00Z'),
    notAfter: new Date('2026-06-01T00:00:00Z'),
  });
  const unrelated = issueCertificate(testCa, {
    names: ['intranet.northwind-traders.com'],
    serial: 0x42,
    notBefore: new Date('2026-03-01T00:00:00Z'),
    notAfter: new Date('2026-06-01T00:00:00Z'),
  });
  const pem = (der: Buffer) => new X509Certificate(der).toString();
  const names = (hits: HitView[]) => hits.map((hit) => hit.common_name);

  let rule: number;
  let kit: DeliveryKit;
  let match: number;
  const files: Record<string, string> = {};

  it('ingests certstream frames: heartbeats skipped, bad frames rejected by line, the same certificate from two logs stored once', async () => {
    files.stream = suite.file('certstream.jsonl', frames);
    files.bundle = suite.file(
      'bundle.pem',
      `${pem(vpn)}\n-----BEGIN CERTIFICATE-----\nMIIBnotacertificate\n-----END CERTIFICATE-----\n${pem(unrelated)}`,
    );
    files.der = suite.file('vpn.der', vpn);
    files.late = suite.file('late.json', lateFrames);

    await suite.moveTo(T0 - 2 * HOUR);
    const report = await suite.ingest('certificate', [files.stream]);
    const extra = fixtureLine ? 1 : 0;
    expect(report.summary).toMatchObject({
      inputs: 1,
      failed: 0,
      records: 5 + extra,
      added: 4 + extra,
      duplicates_skipped: 1,
      rejected: 2,
      dns_entries_skipped: 1,
    });
    expect(report.lines.slice(1)).toEqual([
      `  rejected ${files.stream} line 4: not a JSON frame`,
      `  rejected ${files.stream} line 9: data.leaf_cert.fingerprint is not a SHA-1 fingerprint (20 colon-separated hex bytes)`,
      '  1 dns_entries frames skipped (names without a certificate)',
    ]);

    const again = await suite.ingest('certificate', [files.stream]);
    expect(again.summary).toMatchObject({ records: 5 + extra, added: 0, duplicates_skipped: 5 + extra, rejected: 2 });
  });

  it('ingests PEM bundles and DER files of real certificates, rejecting a bad PEM block by number', async () => {
    await suite.moveTo(T0 - HOUR);
    const report = await suite.ingest('certificate', [files.bundle!, files.der!], 'pem');
    // vpn.der is the bundle's first certificate again.
    expect(report.summary).toMatchObject({ inputs: 2, records: 3, added: 2, duplicates_skipped: 1, rejected: 1 });
    expect(report.lines[1]).toMatch(
      new RegExp(`^  rejected ${files.bundle} certificate 2 \\(line \\d+\\): not an X.509 certificate`),
    );
  });

  it('a domain rule reports exact, subdomain and lookalike certificates newest first; email and signed webhook are delivered', async () => {
    await suite.moveTo(T0);
    kit = await suite.newKit();
    const created = await suite.alice.created(
      sourceRule(kit, 'Acme certificates', CERTIFICATE, { domain: 'acme-bank.com' }),
    );
    rule = created.id;
    expect(created).toMatchObject({
      service: CERTIFICATE,
      last_run: iso(T0),
      total_matches_count: 4,
      total_alerts_count: 1,
    });
    const only = await suite.onlyMatch(rule);
    match = only.id;
    expect(only).toMatchObject({ total_hits: 4, stored_hits: 4, window_start: null, window_end: iso(T0) });

    const hits = await suite.hitsOf(match);
    // The PEM certificate was stored an hour after the certstream frames; then by id, newest first.
    expect(names(hits)).toEqual([
      'vpn.acme-bank.com',
      'acme-bank-secure-login.com',
      'login.acme-bank.com',
      'acme-bank.com',
    ]);
    const openssl = new X509Certificate(vpn);
    expect(hits[0]).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      common_name: 'vpn.acme-bank.com',
      all_domains: ['vpn.acme-bank.com', 'vpn2.acme-bank.com'],
      matched_names: ['vpn.acme-bank.com', 'vpn2.acme-bank.com'],
      match_type: 'subdomain',
      issuer: 'Acme Test Trust',
      issuer_cn: 'Acme Test Trust ECC CA 1',
      subject_org: 'Acme Bank N.A.',
      not_before: '2026-03-01T00:00:00.000Z',
      not_after: '2026-06-01T00:00:00.000Z',
      fingerprint: openssl.fingerprint256,
      sha1_fingerprint: openssl.fingerprint,
      serial_number: 'A1B2C3',
      update_type: 'X509LogEntry',
      log_name: null,
      log_url: null,
      cert_index: null,
      cert_link: null,
      seen: null,
      discovered_at: iso(T0 - HOUR),
    });
    expect(hits[2]).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      common_name: 'login.acme-bank.com',
      all_domains: ['login.acme-bank.com'],
      matched_names: ['login.acme-bank.com'],
      match_type: 'subdomain',
      issuer: 'DigiCert Inc',
      issuer_cn: 'DigiCert Global G2 TLS RSA SHA256 2020 CA1',
      subject_org: 'Acme Bank N.A.',
      not_before: iso(1_772_700_002_000),
      not_after: iso((1_780_476_000 + 2 * 86_400) * 1000),
      fingerprint: null,
      sha1_fingerprint: sha1(2),
      serial_number: '4A3B2',
      update_type: 'PrecertLogEntry',
      log_name: ARGON.name,
      log_url: ARGON.url,
      cert_index: 900_002,
      cert_link: `https://${ARGON.url}ct/v1/get-entries?start=900002&end=900002`,
      seen: iso(1_773_100_002_250),
      discovered_at: iso(T0 - 2 * HOUR),
    });
    expect(hits[1]).toMatchObject({
      match_type: 'lookalike',
      matched_names: ['acme-bank-secure-login.com', 'www.acme-bank-secure-login.com'],
      log_name: XENON.name,
    });
    // Stored from Argon first; the Xenon copy was a duplicate.
    expect(hits[3]).toMatchObject({
      match_type: 'exact',
      log_name: ARGON.name,
      cert_index: 900_001,
      issuer: "Let's Encrypt",
    });

    expect(await deliverPending(suite.t)).toBe(2);
    const hooks = requestsTo(suite.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme certificates',
      service: 'Certificates (CT logs)',
      total_matches: 4,
      excluded_matches: 0,
    });
    const mails = suite.smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Acme certificates: 4 hits in Certificates (CT logs)');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(names(await suite.hitsOf(match, { filter: 'match_type:lookalike' }))).toEqual([
      'acme-bank-secure-login.com',
    ]);
    expect(names(await suite.hitsOf(match, { filter: 'update_type:precertlogentry' }))).toEqual([
      'login.acme-bank.com',
    ]);
    expect(names(await suite.hitsOf(match, { filter: ['issuer:digicert inc', 'subject_org:acme bank n.a.'] }))).toEqual(
      ['login.acme-bank.com'],
    );
    expect(names(await suite.hitsOf(match, { filter: `log_name:${XENON.name}` }))).toEqual([
      'acme-bank-secure-login.com',
    ]);

    expect(names(await suite.hitsOf(match, { sort: 'not_after' }))).toEqual([
      'vpn.acme-bank.com',
      'acme-bank.com',
      'login.acme-bank.com',
      'acme-bank-secure-login.com',
    ]);
    expect(names(await suite.hitsOf(match, { sort: 'common_name' }))).toEqual([
      'acme-bank-secure-login.com',
      'acme-bank.com',
      'login.acme-bank.com',
      'vpn.acme-bank.com',
    ]);
    expect(names(await suite.hitsOf(match, { sort: '-seen' })).slice(0, 3)).toEqual([
      'acme-bank-secure-login.com',
      'login.acme-bank.com',
      'acme-bank.com',
    ]);

    expectError(
      await suite.alice.get(`${rulePaths.hits(match)}?filter=all_domains:acme-bank.com`),
      400,
      'validation_failed',
    );
    expectError(await suite.alice.get(`${rulePaths.hits(match)}?sort=serial_number`), 400, 'validation_failed');

    const byIssuer = await suite.alice.createExclusion(rule, { field: 'issuer', value: "let's encrypt" });
    expect(byIssuer.statusCode, byIssuer.body).toBe(201);
    expect(names(await suite.hitsOf(match, { include_excluded: false }))).toEqual([
      'vpn.acme-bank.com',
      'acme-bank-secure-login.com',
      'login.acme-bank.com',
    ]);
    expect((await suite.hitsOf(match)).find((hit) => hit.common_name === 'acme-bank.com')).toMatchObject({
      is_excluded: true,
    });
    const byFingerprint = await suite.alice.createExclusion(rule, {
      field: 'fingerprint',
      value: new X509Certificate(vpn).fingerprint256.toLowerCase(),
    });
    expect(byFingerprint.statusCode, byFingerprint.body).toBe(201);
    expect(await suite.alice.getJson(rulePaths.match(match))).toMatchObject({ excluded_hits: 2, new_hits: 2 });
    for (const { id } of await suite.alice.exclusions(rule))
      expect((await suite.alice.deleteExclusion(id)).statusCode).toBe(204);
    expectError(
      await suite.alice.createExclusion(rule, { field: 'all_domains', value: 'x' }),
      400,
      'validation_failed',
    );
  });

  it('narrows by include_subdomains, include_precertificates and ignore_issuers', async () => {
    const kitN = await suite.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const created = await suite.alice.created(sourceRule(kitN, name, CERTIFICATE, args));
      return created.total_matches_count === 0 ? [] : names(await suite.hitsOf((await suite.onlyMatch(created.id)).id));
    };
    expect(await run('exact only', { domain: 'acme-bank.com', include_subdomains: false })).toEqual([
      'acme-bank-secure-login.com',
      'acme-bank.com',
    ]);
    expect(await run('no precerts', { domain: 'acme-bank.com', include_precertificates: false })).toEqual([
      'vpn.acme-bank.com',
      'acme-bank-secure-login.com',
      'acme-bank.com',
    ]);
    expect(
      await run('not LE or ZeroSSL', { domain: 'ACME-BANK.COM', ignore_issuers: ["Let's Encrypt", 'zerossl'] }),
    ).toEqual(['vpn.acme-bank.com', 'login.acme-bank.com']);
    // Watching one subdomain: the owner's other names are not reported, lookalikes of the brand are.
    expect(await run('one subdomain', { domain: 'login.acme-bank.com' })).toEqual([
      'acme-bank-secure-login.com',
      'login.acme-bank.com',
    ]);
    expect(await run('northwind', { domain: 'northwind-traders.com' })).toEqual([
      'intranet.northwind-traders.com',
      'mail.northwind-traders.com',
    ]);
  });

  it('args are checked: the domain must be a domain', async () => {
    const badKit = await suite.newKit();
    const fields = async (args: Record<string, unknown>) =>
      expectError(await suite.alice.create(sourceRule(badKit, 'bad args', CERTIFICATE, args)), 400, 'validation_failed')
        .fields;
    expect(await fields({})).toEqual([{ field: 'args.domain', message: 'is required (rule 2)', rule: 2 }]);
    expect(await fields({ domain: 'https://acme-bank.com/login' })).toEqual([
      {
        field: 'args.domain',
        message:
          'must be a domain name such as acme-bank.com, without scheme or path (not a valid domain name) (rule 3)',
        rule: 3,
      },
    ]);
    expect(await fields({ domain: 'acme-bank.com', ignore_issuers: ['  '] })).toEqual([
      { field: 'args.ignore_issuers[0]', message: expect.any(String), rule: 3 },
    ]);
  });

  it('the next tick reports only certificates stored since the last run, however old', async () => {
    await suite.moveTo(T0 + 2 * HOUR);
    expect((await suite.ingest('certificate', [files.late!])).summary).toMatchObject({ records: 1, added: 1 });

    await suite.moveTo(T0 + DAY);
    await tickAndDeliver(suite.t);
    const { results } = await suite.alice.matches(rule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    expect(await suite.hitsOf(results[0]!.id)).toEqual([
      expect.objectContaining({
        common_name: 'acmebank-support.net',
        match_type: 'lookalike',
        seen: iso(1_770_000_000_000),
        discovered_at: iso(T0 + 2 * HOUR),
      }),
    ]);
    expect(payloadOf(requestsTo(suite.receiver, kit)[1]!)).toMatchObject({ total_matches: 1 });

    await suite.moveTo(T0 + 2 * DAY);
    await tickAndDeliver(suite.t);
    expect((await suite.alice.matches(rule)).results).toHaveLength(2);
    expect((await runsOf(suite.t, rule)).at(-1)).toMatchObject({ status: 'empty', window_end: T0 + 2 * DAY });
  });

  it("another organization's match is 404", async () => {
    await suite.mallory.relogin();
    expectError(await suite.mallory.get(rulePaths.hits(match)), 404, 'not_found');
  });
});
