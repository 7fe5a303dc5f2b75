import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sourceRule, type HitView } from '../support/rules-api.ts';
import { readRawStore, sourcesContaining } from '../support/raw-store.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Card files in the shapes real tools and shops write them (test/fixtures/credit_card: CSV with
 * `,` `;` tab or `|` and many header spellings, header-less dumps, track 1/2 dumps), ingested as
 * a folder with the format detected per file, then read back through a rule's hits. Every card
 * is synthetic: Luhn-valid numbers on binlist BINs, Verve's and the Visa test number.
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/credit_card/', import.meta.url));
const T0 = Date.parse('2026-03-10T09:00:00Z');
const ALL_BINS = ['414720', '510560', '371241', '506146', '424242', '650002'];

describe(`credit_card: card files as real tools write them (${testEngine})`, () => {
  const s = sourceSuite('card-files');
  let hits: HitView[];
  const hitOf = (pan: string) => hits.find((hit) => hit.bin === pan.slice(0, 6) && hit.last4 === pan.slice(-4));

  it('reads every fixture in its own format; an expiry that can be read two ways is null with a warning, the card kept', async () => {
    await s.moveTo(T0);
    const report = await s.ingest('credit_card', [FIXTURES]);
    expect(report.failed).toBe(false);
    expect(report.summary).toMatchObject({
      inputs: readdirSync(FIXTURES).filter((name) => name !== 'README.md').length,
      failed: 0,
      records: 20,
      added: 20,
      rejected: 0,
    });
    expect(report.summary.warnings).toEqual([
      {
        reason: 'expiry is ambiguous (day-first or month-first)',
        count: 1,
        examples: [`${path.join(FIXTURES, 'cards-semicolon.csv')} line 4`],
      },
    ]);

    const kit = await s.newKit();
    const rule = await s.alice.created(sourceRule(kit, 'every fixture BIN', 6, { bins: ALL_BINS }));
    hits = await s.hitsOf((await s.onlyMatch(rule.id)).id);
    expect(hits).toHaveLength(20);
    for (const hit of hits) expect(Date.parse(String(hit.discovered_at))).toBeLessThanOrEqual(Date.now());
  });

  it('maps header spellings, split and named months, and keeps unknown columns as extra fields', () => {
    expect(hitOf('4147200000010019')).toMatchObject({
      expires: '2028-03',
      has_cvv: true,
      holder: 'H. S.',
      billing_country: 'US',
      extra: { order_id: '1001', status: 'declined' },
    });
    expect(hitOf('5105600000020016')).toMatchObject({
      expires: '2027-09',
      has_cvv: false,
      extra: { order_id: '1004', status: 'approved, manual review' },
    });
    expect(hitOf('4147200000010027')).toMatchObject({
      expires: '2029-05',
      has_cvv: true,
      holder: 'J. R.',
      issuer: 'CHASE',
      extra: { Comment: 'checked 2025-01-04' },
    });
    expect(hitOf('5105600000020024')).toMatchObject({ expires: '2027-12' });
    expect(hitOf('4147200000010035')).toMatchObject({ expires: null, expiry: null, has_cvv: true, holder: 'O. F.' });
    expect(hitOf('371241000030016')).toMatchObject({ expires: '2030-01', brand: 'amex' });
    expect(hitOf('4147200000010043')).toMatchObject({ expires: '2030-08', has_cvv: true, extra: { Source: 'form-7' } });
    expect(hitOf('4147200000010050')).toMatchObject({ expires: '2030-08' });
    expect(hitOf('5105600000020057')).toMatchObject({ expires: '2029-11', holder: 'I. S.' });
    expect(hitOf('4147200000010068')).toMatchObject({
      expires: '2028-09',
      source_type: 'shop',
      price: 15,
      base: 'BASE_X',
      level: 'PLATINUM',
      billing_state: 'NY',
    });
    expect(hitOf('4147200000010076')).toMatchObject({
      expires: '2029-04',
      has_cvv: true,
      holder: 'N. Q.',
      card_type: 'credit',
    });
  });

  it('reads header-less dumps whatever their delimiter, and tracks 1 and 2 wherever they stand', () => {
    expect(hitOf('4147200000010084')).toMatchObject({
      expires: '2030-02',
      has_cvv: true,
      holder: 'M. M.',
      source_type: 'dump',
      billing_state: null,
    });
    expect(hitOf('5105600000020032')).toMatchObject({ expires: '2029-04', has_cvv: true, holder: 'D. J.' });
    // Track 1 writes the surname first and the expiry as YYMM.
    expect(hitOf('4147200000010092')).toMatchObject({
      expires: '2028-11',
      holder: 'M. M.',
      has_cvv: false,
      extra: { tracks: '1+2', service_code: '101' },
    });
    expect(hitOf('5105600000020040')).toMatchObject({
      expires: '2029-06',
      holder: null,
      extra: { tracks: '2', service_code: '201' },
    });
    expect(hitOf('4147200000010100')).toMatchObject({ expires: '2030-01' });
    expect(hitOf('371241000030024')).toMatchObject({ expires: '2030-04', holder: 'A. M.', brand: 'amex' });
  });

  it("brands a card by the longest scheme range when the BIN table has no entry: Verve inside Maestro's and Discover's", () => {
    expect(hitOf('5061460000000040014')).toMatchObject({ brand: 'verve', masked_pan: '506146*********0014' });
    expect(hitOf('6500020000060012')).toMatchObject({ brand: 'verve' });
    expect(hitOf('4242424242424242')).toMatchObject({ brand: 'visa' });
  });

  it('stores no card number, track, name, address, phone or email of the fixtures', async () => {
    const chunks = await readRawStore(s.t.location);
    const text = readdirSync(FIXTURES)
      .map((name) => readFileSync(path.join(FIXTURES, name), 'utf8'))
      .join('\n');
    const pans = new Set([...text.matchAll(/\d{15,19}/g)].map(([pan]) => pan));
    expect(pans.size).toBeGreaterThanOrEqual(20);
    for (const secret of [
      ...pans,
      'MAJOR/MARY',
      'Holt, Samuel',
      'Example Road',
      '555 0100',
      's.holt@example.test',
      'Chidi',
    ]) {
      expect(sourcesContaining(chunks, secret), secret).toEqual([]);
    }
  });

  it('refuses a file in none of the formats, naming each; --format still forces one; a banner does not hide a dump', async () => {
    const notCards = s.file('notes.txt', 'meeting notes\nnothing to see\n');
    const refused = await s.ingest('credit_card', [notCards]);
    expect(refused.failed).toBe(true);
    expect(refused.lines.join('\n')).toMatch(
      /is in none of the formats credit_card reads: csv \(.*\), pipe \(.*\), track \(.*\)/,
    );
    const forced = await s.ingest('credit_card', [notCards], 'pipe');
    expect(forced.summary).toMatchObject({ failed: 0, records: 0, rejected: 2 });

    // A dump that opens with a banner is still a dump: the banner line is rejected, the cards read.
    const banner = await s.ingest('credit_card', [
      s.file('banner.txt', '=== FRESH BASE 2026 ===\n4147200000010118|01|31|321|Ed Stone\n'),
    ]);
    expect(banner.summary).toMatchObject({ failed: 0, records: 1, added: 1, rejected: 1 });
  });
});
