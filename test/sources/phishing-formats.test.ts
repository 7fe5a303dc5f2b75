import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.ts';
import { HOUR, sourceRule, type HitView } from '../support/rules-api.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Every layout the phishing ingester reads, from test/fixtures/phishing (written here in the
 * tools' published shapes, see its README): dnstwist JSON and CSV of today and of before 2020,
 * NRD lists plain, adblock and wildcard; each detected per input, and what they say of a
 * lookalike of globex-pay.com reaches the rule's hits.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const PHISHING = 8;
const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'phishing');
const fixture = (name: string) => path.join(FIXTURES, name);

describe(`sources: phishing input formats (${testEngine})`, () => {
  const s = sourceSuite('phishing-formats');
  let hits: Map<string, HitView>;

  it('reads every fixture of the folder in its own format; originals and unregistered permutations are skipped', async () => {
    await s.moveTo(T0);
    const report = await s.ingest('phishing', [FIXTURES]);
    expect(report.summary).toMatchObject({
      inputs: 7,
      failed: 0,
      records: 20,
      added: 20,
      rejected: 0,
      unregistered_skipped: 4,
      warnings: [],
    });
    const results = report.summary.results as { input: string; records: number }[];
    expect(results.map((result) => [path.basename(result.input), result.records])).toEqual([
      ['globex-pay.com.dnstwist-2019.csv', 3],
      ['globex-pay.com.dnstwist-2019.json', 3],
      ['globex-pay.com.dnstwist.csv', 3],
      ['globex-pay.com.dnstwist.json', 4],
      ['nrd-14day-adblock.txt', 2],
      ['nrd-14day-wildcard.txt', 2],
      ['nrd-14day.txt', 3],
    ]);
  });

  it("a rule's hits carry what each layout says: addresses, name servers, MX, country, registrar and registration date", async () => {
    const kit = await s.newKit();
    const created = await s.alice.created(
      sourceRule(kit, 'globex-pay.com lookalikes', PHISHING, { domain: 'globex-pay.com' }),
    );
    const match = await s.onlyMatch(created.id);
    hits = new Map((await s.hitsOf(match.id)).map((hit) => [hit.domain as string, hit]));
    expect([...hits.keys()].sort()).toEqual(
      [
        'glabex-pay.com',
        'glbex-pay.com',
        'glboex-pay.com',
        'globe-pay.com',
        'globex-oay.com',
        'globex-pax.com',
        'globex-pay-login.com',
        'globex-pay-support.com',
        'globex-pay-verify.com',
        'globex-pay.online',
        'globex-pay.shop',
        'globex-pays.com',
        'globexpay.com',
        'secure-globexpay.net',
        'wwwglobex-pay.com',
        'xn--glbex-pay-hrk.com',
        'xn--globx-pay-j0h.com',
      ].sort(),
    );
    // Today's JSON: lists, the first address kept, the WHOIS date and registrar.
    expect(hits.get('glboex-pay.com')).toMatchObject({
      ip: '198.51.100.23',
      mx: ['mail.glboex-pay.com'],
      name_servers: ['dns1.registrar-servers.com', 'dns2.registrar-servers.com'],
      country: 'Netherlands',
      registrar: 'NameCheap, Inc.',
      registered_at: '2025-09-14T00:00:00.000Z',
      origin: 'dnstwist',
    });
    // A `!ServFail` answer makes a permutation registered, but is no name server.
    expect(hits.get('glbex-pay.com')).toMatchObject({ name_servers: [], ip: null, origin: 'dnstwist' });
    // The pre-2020 JSON: scalar answers, `geoip-country`, `whois-created`; "None" is no date.
    expect(hits.get('globexpay.com')).toMatchObject({
      ip: '198.51.100.81',
      mx: [],
      name_servers: ['ns1.bodis.com'],
      country: 'Virgin Islands',
      registered_at: '2017-03-02T00:00:00.000Z',
    });
    expect(hits.get('globex-pax.com')).toMatchObject({ ip: '192.0.2.91', mx: ['mx.zoho.com'], registered_at: null });
    // Its Unicode homoglyph is stored as punycode.
    expect(hits.get('xn--glbex-pay-hrk.com')).toMatchObject({
      name_servers: ['ns1.googledomains.com'],
      fuzzer: 'homoglyph',
    });
    // Today's CSV: `;`-joined lists, a quoted registrar with a comma.
    expect(hits.get('globex-pays.com')).toMatchObject({
      ip: '198.51.100.31',
      name_servers: ['ns1.dnsowl.com', 'ns2.dnsowl.com'],
      mx: ['mx.globex-pays.com'],
      country: 'Singapore',
      registrar: 'Tucows Domains, Inc.',
      registered_at: '2025-08-21T00:00:00.000Z',
    });
    expect(hits.get('globex-pay-login.com')).toMatchObject({
      ipv6: '2001:db8:45::1',
      country: 'Russia',
      registrar: 'REG.RU LLC',
    });
    // The pre-2020 CSV.
    expect(hits.get('globex-oay.com')).toMatchObject({
      ip: '198.51.100.61',
      mx: ['mailstore1.secureserver.net'],
      registered_at: '2016-11-08T00:00:00.000Z',
      origin: 'dnstwist',
    });
    // NRD lists: the header's compile time is first_seen, in every rendering.
    expect(hits.get('globex-pay-support.com')).toMatchObject({ origin: 'nrd', first_seen: '2025-11-03T06:29:14.000Z' });
    expect(hits.get('globex-pay.online')).toMatchObject({ origin: 'nrd', first_seen: '2025-11-04T06:00:00.000Z' });
    expect(hits.get('globex-pay-verify.com')).toMatchObject({ origin: 'nrd', first_seen: '2025-11-05T06:00:00.000Z' });
  });

  it('a date that cannot be one is stored as null with a warning, and the domain kept', async () => {
    await s.moveTo(T0 + HOUR);
    const scan = s.file(
      'future.csv',
      [
        'fuzzer,domain,dns_a,whois_created',
        'addition,globex-payx.com,192.0.2.7,2999-01-01',
        'addition,globex-payq.com,192.0.2.8,01/02/2024',
        'addition,globex-payw.com,192.0.2.9,1970-01-01',
      ].join('\n'),
    );
    const list = s.file(
      'nrd-future.txt',
      ['# Time of Compilation: 2999-01-01 00:00:00 UTC', 'globex-payk.com', 'globex-payj.com', ''].join('\n'),
    );
    const report = await s.ingest('phishing', [scan, list]);
    expect(report.summary).toMatchObject({ records: 5, added: 5, rejected: 0 });
    expect(report.tally.warnings).toEqual([
      { reason: 'list date in the future', count: 1, examples: [`${list} line 2`] },
      { reason: 'whois_created before 1990', count: 1, examples: [`${scan} line 4`] },
      { reason: 'whois_created in the future', count: 1, examples: [`${scan} line 2`] },
      { reason: 'whois_created is not a date', count: 1, examples: [`${scan} line 3`] },
    ]);
    expect(report.lines).toContain(`  warning: whois_created in the future: 1 (stored as null; e.g. ${scan} line 2)`);
  });

  it('hosts, dnsmasq and unbound renderings of a list are read; a file in no format is refused naming every format', async () => {
    const list = s.file(
      'blocklist.txt',
      [
        '# hosts',
        '0.0.0.0 globex-pay-help.com',
        'address=/globex-pay-desk.com/0.0.0.0',
        'local-zone: "globex-pay-team.com." always_nxdomain',
        '',
      ].join('\n'),
    );
    expect((await s.ingest('phishing', [list])).summary).toMatchObject({ records: 3, added: 3, rejected: 0 });
    const other = s.file('other.json', '{"results": [{"name": "globex-pay.com"}]}');
    const refused = await s.ingest('phishing', [other]);
    expect(refused.failed).toBe(true);
    expect(refused.lines).toContain(
      `  error: ${other}: format: is in none of the formats phishing reads: dnstwist (dnstwist --format json, or --json of versions before 2020), dnstwist_csv (dnstwist --format csv, or --csv of versions before 2020), nrd (newly registered domain lists (xRuffKez/NRD and alike: plain, adblock, wildcard, hosts, dnsmasq, unbound) or dnstwist --format list)`,
    );
    // --format still forces one: a CSV given as an NRD list is read line by line, and refused so.
    const forced = await s.ingest('phishing', [fixture('globex-pay.com.dnstwist.csv')], 'nrd');
    expect(forced.summary).toMatchObject({ records: 0, rejected: 6 });
  });

  it('POST /ingest/phishing/ detects the format of the body too', async () => {
    await s.t.createUser({ org: 'Operators', email: 'ops@phishing-formats.test', role: 'system' });
    const { access } = await s.t.login('ops@phishing-formats.test');
    const body = [
      'fuzzer,domain-name,dns-a,dns-aaaa,dns-mx,dns-ns,geoip-country,whois-created,whois-updated,ssdeep-score',
      'Addition,globex-paye.com,192.0.2.201,,,ns1.above.com,Australia,2024-02-29,,0',
      '',
    ].join('\n');
    const answer = await s.t.app.inject({
      method: 'POST',
      url: '/ingest/phishing/?name=scan.csv',
      payload: body,
      headers: { authorization: `Bearer ${access}`, 'content-type': 'text/csv' },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ ingester: 'phishing', format: 'auto', records: 1, accepted: 1, rejected: 0 });
  });
});
