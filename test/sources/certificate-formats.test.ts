import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.ts';
import { HOUR, iso, sourceRule, type HitView } from '../support/rules-api.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Every layout the certificate ingester reads, from test/fixtures/certificate (real certificates
 * of a test CA in the published frame and response shapes, see its README): certstream frames
 * one a line, pretty-printed, in an array and concatenated; a CT get-entries response; PEM.
 * Each is detected per input, and a frame that leaves fields out gets them from its DER.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const CERTIFICATE = 9;
const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'certificate');
const fixture = (name: string) => path.join(FIXTURES, name);
const ISSUER = { issuer: 'Globex Test Trust', issuer_cn: 'Globex Test Trust ECC CA 1' };
const VALIDITY = { not_before: '2025-10-01T00:00:00.000Z', not_after: '2026-09-30T23:59:59.000Z' };

describe(`sources: certificate input formats (${testEngine})`, () => {
  const s = sourceSuite('certificate-formats');
  let hits: Map<string, HitView>;

  it('reads every fixture of the folder in its own layout: heartbeats and dns_entries frames skipped, a certificate seen twice stored once', async () => {
    await s.moveTo(T0);
    const report = await s.ingest('certificate', [FIXTURES]);
    expect(report.summary).toMatchObject({
      inputs: 6,
      failed: 0,
      records: 10,
      added: 8,
      duplicates_skipped: 2,
      rejected: 0,
      dns_entries_skipped: 1,
      warnings: [],
    });
    const results = report.summary.results as { input: string; records: number; duplicates: number }[];
    expect(results.map((result) => [path.basename(result.input), result.records, result.duplicates])).toEqual([
      ['certstream-array.json', 2, 0],
      ['certstream-concatenated.json', 1, 0],
      ['certstream-lines.jsonl', 2, 0],
      ['certstream-pretty.json', 2, 0],
      // Its x509 entry is certstream-lines.jsonl's first certificate.
      ['get-entries.json', 2, 1],
      // The certificate of certstream-concatenated.json.
      ['globex-pay-online.pem', 1, 1],
    ]);
    expect(report.lines).toContain('  1 dns_entries frames skipped (names without a certificate)');
  });

  it("a rule's hits carry issuer, names and validity, from the DER where a frame leaves them out", async () => {
    const created = await s.alice.created(
      sourceRule(await s.newKit(), 'globex-pay.com certificates', CERTIFICATE, { domain: 'globex-pay.com' }),
    );
    const match = await s.onlyMatch(created.id);
    hits = new Map((await s.hitsOf(match.id)).map((hit) => [hit.common_name as string, hit]));
    expect([...hits.keys()].sort()).toEqual(
      [
        'api.globex-pay.com',
        'checkout.globex-pay.com',
        'globex-pay-secure.com',
        'globex-pay.online',
        'globexpay-verify.net',
        'login.globex-pay.com',
        'mail.globex-pay.com',
        'pay.globex-pay.com',
      ].sort(),
    );
    // One frame a line with the chain: the issuer is the chain's first certificate.
    expect(hits.get('login.globex-pay.com')).toMatchObject({
      ...ISSUER,
      ...VALIDITY,
      all_domains: ['login.globex-pay.com', 'www.login.globex-pay.com'],
      log_name: "Google 'Argon2025h2' log",
      cert_index: 812_400_001,
    });
    // A lite frame without chain or issuer: nothing to take the issuer from.
    expect(hits.get('globex-pay-secure.com')).toMatchObject({
      issuer: null,
      subject_org: 'Globex Pay Secure Ltd',
      match_type: 'lookalike',
    });
    // Pretty-printed, with as_der but no issuer or chain: the DER's issuer, and its SHA-256.
    const mail = new X509Certificate(
      Buffer.from(/"as_der": "([^"]+)"/.exec(readFileSync(fixture('certstream-pretty.json'), 'utf8'))![1]!, 'base64'),
    );
    expect(hits.get('mail.globex-pay.com')).toMatchObject({
      ...ISSUER,
      ...VALIDITY,
      fingerprint: mail.fingerprint256,
      sha1_fingerprint: mail.fingerprint,
      seen: iso(1_759_320_183_123),
    });
    // An array of frames: a precertificate with leaf_cert.issuer.
    expect(hits.get('pay.globex-pay.com')).toMatchObject({ ...ISSUER, update_type: 'PrecertLogEntry' });
    // Concatenated frames, and the same certificate as PEM: one hit.
    expect(hits.get('globex-pay.online')).toMatchObject({
      ...ISSUER,
      ...VALIDITY,
      match_type: 'lookalike',
      cert_index: 812_400_007,
    });
    // A get-entries precert entry: names from the TBS, seen from the log's timestamp, no log known.
    expect(hits.get('checkout.globex-pay.com')).toMatchObject({
      ...ISSUER,
      ...VALIDITY,
      update_type: 'PrecertLogEntry',
      seen: '2025-10-01T12:00:01.000Z',
      log_name: null,
    });
  });

  it('a frame whose leaf_cert is only its DER is read whole from it', async () => {
    const created = await s.alice.created(
      sourceRule(await s.newKit(), 'globexpay certificates', CERTIFICATE, { domain: 'globexpay-verify.net' }),
    );
    const [hit] = await s.hitsOf((await s.onlyMatch(created.id)).id);
    expect(hit).toMatchObject({
      ...ISSUER,
      ...VALIDITY,
      common_name: 'globexpay-verify.net',
      all_domains: ['globexpay-verify.net'],
      serial_number: '51A2B6',
      update_type: 'X509LogEntry',
      match_type: 'exact',
    });
  });

  it('a not_before that cannot be true is stored as null with a warning; a file in no format is refused naming every format', async () => {
    await s.moveTo(T0 + HOUR);
    const frame = JSON.parse(readFileSync(fixture('certstream-lines.jsonl'), 'utf8').split('\n')[2]!);
    frame.data.leaf_cert.fingerprint = frame.data.leaf_cert.fingerprint.replace(/^../, '00');
    frame.data.leaf_cert.not_before = 32_503_680_000;
    // Another certificate in another log entry: not the stored one again.
    frame.data.cert_index += 1000;
    const future = s.file('future.json', JSON.stringify(frame, null, 2));
    const report = await s.ingest('certificate', [future]);
    expect(report.summary).toMatchObject({ records: 1, added: 1 });
    expect(report.tally.warnings).toEqual([
      { reason: 'not_before in the future', count: 1, examples: [`${future} line 1`] },
    ]);

    const other = s.file('other.json', '{"results": []}');
    const refused = await s.ingest('certificate', [other]);
    expect(refused.failed).toBe(true);
    expect(refused.lines.at(-1)).toMatch(
      new RegExp(
        `^  error: ${other}: format: is in none of the formats certificate reads: certstream \\(.+\\), ct \\(.+\\), pem \\(.+\\)$`,
      ),
    );
  });

  it('a cut-off or stray piece of a concatenated stream is rejected by line, the frames around it kept', async () => {
    const lines = readFileSync(fixture('certstream-lines.jsonl'), 'utf8').split('\n');
    const broken = s.file(
      'broken.json',
      `${lines[1]}${lines[2]}\ngarbage here\n{"message_type":"certificate_update","data":{"leaf_cert":`,
    );
    const report = await s.ingest('certificate', [broken]);
    expect(report.summary).toMatchObject({ records: 2, rejected: 2 });
    expect(report.summary.results).toMatchObject([
      {
        rejections: [
          { location: 'line 2', reason: 'not JSON' },
          { location: 'line 3', reason: 'cut off: the input ends inside this object' },
        ],
      },
    ]);
  });

  it('POST /ingest/certificate/ detects the format of the body too', async () => {
    await s.t.createUser({ org: 'Operators', email: 'ops@certificate-formats.test', role: 'system' });
    const { access } = await s.t.login('ops@certificate-formats.test');
    const frames = JSON.parse(readFileSync(fixture('certstream-array.json'), 'utf8')) as {
      data: { cert_index: number };
    }[];
    for (const frame of frames) frame.data.cert_index += 5000;
    const body = JSON.stringify(frames, null, 2);
    const answer = await s.t.app.inject({
      method: 'POST',
      url: '/ingest/certificate/',
      payload: body,
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    // The same certificates from other log entries: read, and stored once already.
    expect(answer.json()).toMatchObject({
      ingester: 'certificate',
      format: 'auto',
      records: 2,
      duplicates: 2,
      rejected: 0,
    });
  });
});
