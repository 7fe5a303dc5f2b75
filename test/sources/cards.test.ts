import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { luhnCheckDigit } from '../../src/modules/sources/common/cards/card-number.ts';
import { findSource } from '../../src/modules/sources/index.ts';
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
import { readRawStore, sourcesContaining } from '../support/raw-store.ts';
import type { TestApp } from '../support/test-app.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The card sources end to end: generated dump and shop files ingested through the real
 * ingester on the test app's store and manual clock, rules over HTTP, hits filtered, sorted and
 * excluded, email and signed webhook delivered, and the PCI rule checked on the raw store.
 * Every card is synthetic: Luhn-valid numbers on BINs of the shipped binlist table.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

/** A Luhn-valid synthetic PAN: the BIN, a serial number, the check digit. */
const panOf = (bin: string, serial: number, length = 16) => {
  const partial = bin + String(serial).padStart(length - 1 - bin.length, '0');
  return partial + luhnCheckDigit(partial);
};

// Chase (414720, Visa credit, US), Lansing Automakers FCU (510560, Mastercard debit, US) and
// American Express (371241) in the shipped table.
const DUMP = {
  chase1: { pan: panOf('414720', 1), cvv: '958' },
  chase2: { pan: panOf('414720', 2), cvv: '8642' },
  chase3: { pan: panOf('41472012', 3), cvv: null },
  lansing: { pan: panOf('510560', 4), cvv: '375' },
  amex: { pan: panOf('371241', 5, 15), cvv: '4821' },
};
const SHOP = {
  cheap: { pan: panOf('414720', 11), cvv: '946' },
  dear: { pan: panOf('414720', 12), cvv: '5706' },
  expired: { pan: panOf('414720', 13), cvv: '286' },
  noCvv: { pan: panOf('414720', 14), cvv: null },
};
const LATE = { chase4: { pan: panOf('414720', 21), cvv: '619' } };
const badLuhn = DUMP.chase1.pan.slice(0, -1) + String((Number(DUMP.chase1.pan.at(-1)) + 1) % 10);

const dumpText = [
  `${DUMP.chase1.pan}|03|30|${DUMP.chase1.cvv}|Tess Holder|1 Synthetic Way|Testville|IL|00000|US|5550100|tess@example.test`,
  `${badLuhn}|03|30|123|Luhn Failure`,
  `${DUMP.chase2.pan}|11/2031|${DUMP.chase2.cvv}|Uma Vector`,
  `${panOf('999990', 6)}|13|30|123|Bad Month`,
  `${DUMP.chase3.pan}|07|29||Nova Quill`,
  'not a card line at all',
  `${DUMP.lansing.pan}|01|28|${DUMP.lansing.cvv}|Lars Pike`,
  '41472000|03|30|123|Too Short',
  `${DUMP.amex.pan}|09|2030|${DUMP.amex.cvv}|Ada Moss`,
].join('\n');

const shopText = [
  'Card Number,Exp,CVV,Name,Address,City,State,Zip,Country,Price,Base,Shop,Level',
  `${SHOP.cheap.pan},04/29,${SHOP.cheap.cvv},Sam Holt,1 Test St,Testville,NY,00000,US,$12.50,BASE_A,acme-shop,PLATINUM`,
  `${SHOP.dear.pan},05/30,${SHOP.dear.cvv},Rae Dunn,2 Test St,Testville,CA,00000,US,30,BASE_B,other-shop,CLASSIC`,
  `${SHOP.expired.pan},01/26,${SHOP.expired.cvv},Ola Finch,3 Test St,Testville,TX,00000,US,9,BASE_A,acme-shop,GOLD`,
  `${SHOP.noCvv.pan},06/30,,Kit Vale,4 Test St,Testville,FL,00000,US,15,BASE_A,acme-shop,CLASSIC`,
  `${panOf('999990', 15)},never,111,Bad Expiry,,,,,,,,,`,
].join('\n');

const lateText = [
  `${LATE.chase4.pan}|02|31|${LATE.chase4.cvv}|Ivy Stone`,
  `${DUMP.chase1.pan}|03|30|${DUMP.chase1.cvv}|Tess Holder`,
].join('\n');

const ALL_CARDS = [...Object.values(DUMP), ...Object.values(SHOP), ...Object.values(LATE)];

describe(`sources: credit cards and BIN-CVV end to end (${testEngine})`, () => {
  const s = sourceSuite('cards');
  const files: Record<string, string> = {};

  beforeAll(() => {
    for (const [name, text] of [
      ['acme-dump.txt', dumpText],
      ['shop-export.csv', shopText],
      ['late-dump.txt', lateText],
    ]) {
      files[name!] = path.join(s.dir, name!);
      writeFileSync(files[name!]!, text!);
    }
  });
  const ingest = (target: string, file: string) => s.ingest(target, [file]);
  const last4s = (hits: HitView[]) => hits.map((hit) => hit.last4);
  const last4 = (card: { pan: string }) => card.pan.slice(-4);

  let creditRule: number;
  let creditKit: DeliveryKit;
  let creditMatch: number;

  it('ingests a dump and a shop export, reporting each bad line by number without the card number', async () => {
    await s.moveTo(T0 - 2 * HOUR);
    const dump = await ingest('credit_card', files['acme-dump.txt']!);
    expect(dump.failed).toBe(false);
    // A card whose expiry cannot be read is kept, its expiry null and the reason a warning.
    expect(dump.summary).toMatchObject({
      inputs: 1,
      failed: 0,
      records: 6,
      added: 6,
      duplicates_skipped: 0,
      rejected: 3,
    });
    expect(dump.lines.slice(1)).toEqual([
      `  warning: expiry not understood: 1 (stored as null; e.g. ${files['acme-dump.txt']} line 4)`,
      `  rejected ${files['acme-dump.txt']} line 2: card number fails the Luhn check`,
      `  rejected ${files['acme-dump.txt']} line 6: expected PAN|MM|YY|CVV|name|… or PAN|MM/YY|CVV|name|…`,
      `  rejected ${files['acme-dump.txt']} line 8: card number must be 12 to 19 digits`,
    ]);

    await s.moveTo(T0 - HOUR);
    // bin_cvv is the same ingester under the name that reads well for shop exports.
    const shop = await ingest('bin_cvv', files['shop-export.csv']!);
    expect(shop.summary).toMatchObject({ records: 5, added: 5, rejected: 0 });
    expect(shop.lines.slice(1)).toEqual([
      `  warning: expiry not understood: 1 (stored as null; e.g. ${files['shop-export.csv']} line 6)`,
    ]);
    const reported = JSON.stringify([dump, shop]);
    for (const card of ALL_CARDS) expect(reported).not.toContain(card.pan);
    expect(reported).not.toContain(badLuhn);
  });

  it("a credit_card rule reports the BIN's cards at creation, masked, newest first; email and signed webhook are delivered", async () => {
    await s.moveTo(T0);
    creditKit = await s.newKit();
    const rule = await s.alice.created(sourceRule(creditKit, 'Chase BIN watch', 6, { bins: ['414720'] }));
    creditRule = rule.id;
    expect(rule).toMatchObject({
      service: 6,
      args: { bins: ['414720'] },
      last_run: iso(T0),
      total_matches_count: 7,
      total_alerts_count: 1,
    });
    const match = await s.onlyMatch(rule.id);
    creditMatch = match.id;
    expect(match).toMatchObject({
      total_hits: 7,
      stored_hits: 7,
      excluded_hits: 0,
      window_start: null,
      window_end: iso(T0),
    });

    const hits = await s.hitsOf(match.id);
    // Newest first: the shop listings (learned of an hour later), then the dump.
    expect(hits.slice(0, 4).every((hit) => hit.source_name === 'shop-export.csv')).toBe(true);
    expect(new Set(last4s(hits))).toEqual(
      new Set([DUMP.chase1, DUMP.chase2, DUMP.chase3, ...Object.values(SHOP)].map(last4)),
    );
    expect(hits.find((hit) => hit.last4 === last4(SHOP.cheap))).toEqual({
      id: expect.any(Number),
      hit_key: expect.stringMatching(/^card:\d+$/),
      is_excluded: false,
      bin: '414720',
      last4: last4(SHOP.cheap),
      masked_pan: `414720******${last4(SHOP.cheap)}`,
      brand: 'visa',
      card_type: 'credit',
      level: 'PLATINUM',
      issuer: 'CHASE',
      country: 'US',
      expiry: '04/29',
      expires: '2029-04',
      has_cvv: true,
      holder: 'S. H.',
      billing_state: 'NY',
      billing_country: 'US',
      source_name: 'shop-export.csv',
      source_type: 'shop',
      shop: 'acme-shop',
      base: 'BASE_A',
      price: 12.5,
      discovered_at: iso(T0 - HOUR),
      extra: null,
    });
    expect(hits.find((hit) => hit.last4 === last4(DUMP.chase3))).toMatchObject({
      masked_pan: `414720******${last4(DUMP.chase3)}`,
      expiry: '07/29',
      has_cvv: false,
      holder: 'N. Q.',
      source_name: 'acme-dump.txt',
      source_type: 'dump',
      shop: null,
      base: null,
      price: null,
      level: null,
      discovered_at: iso(T0 - 2 * HOUR),
    });
    const served = JSON.stringify(hits);
    for (const card of ALL_CARDS) expect(served).not.toContain(card.pan);
    expect(served).not.toMatch(/Tess|Holder|Synthetic Way|example\.test/);

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, creditKit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(
        creditKit.webhook!.secret,
        hooks[0]!.body,
        hooks[0]!.headers['x-alertsystem-signature'],
      ),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Chase BIN watch',
      service: 'Credit cards',
      total_matches: 7,
      excluded_matches: 0,
    });
    const mails = s.smtp.messages.filter((m) => m.to.includes(creditKit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Chase BIN watch: 7 hits in Credit cards');
    for (const card of ALL_CARDS) expect(mails[0]!.raw.toString('utf8')).not.toContain(card.pan);
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(last4s(await s.hitsOf(creditMatch, { filter: 'has_cvv:false' })).sort()).toEqual(
      [last4(DUMP.chase3), last4(SHOP.noCvv)].sort(),
    );
    expect(await s.hitsOf(creditMatch, { filter: ['source_type:SHOP', 'level:platinum'] })).toHaveLength(1);
    expect(await s.hitsOf(creditMatch, { filter: 'issuer:chase' })).toHaveLength(7);
    expect(await s.hitsOf(creditMatch, { filter: 'source_name:acme-dump.txt' })).toHaveLength(3);

    const byExpiry = (await s.hitsOf(creditMatch, { sort: 'expires' })).map((hit) => hit.expires);
    expect(byExpiry).toEqual(['2026-01', '2029-04', '2029-07', '2030-03', '2030-05', '2030-06', '2031-11']);
    expect((await s.hitsOf(creditMatch, { sort: '-expires' })).map((hit) => hit.expires)).toEqual(
      [...byExpiry].reverse(),
    );
    expect((await s.hitsOf(creditMatch, { sort: 'discovered_at' }))[0]!.source_name).toBe('acme-dump.txt');

    expectError(await s.alice.get(`${rulePaths.hits(creditMatch)}?filter=holder:S.%20H.`), 400, 'validation_failed');
    expectError(await s.alice.get(`${rulePaths.hits(creditMatch)}?sort=expiry`), 400, 'validation_failed');

    const masked = `414720******${last4(DUMP.chase1)}`;
    const exclusion = await s.alice.createExclusion(creditRule, { field: 'masked_pan', value: masked });
    expect(exclusion.statusCode, exclusion.body).toBe(201);
    // Excluded hits stay listed, flagged, unless include_excluded=false.
    expect(await s.hitsOf(creditMatch, { include_excluded: false })).toHaveLength(6);
    expect((await s.hitsOf(creditMatch)).find((hit) => hit.masked_pan === masked)).toMatchObject({ is_excluded: true });
    expect(await s.alice.getJson(rulePaths.match(creditMatch))).toMatchObject({ excluded_hits: 1, new_hits: 6 });
    const byShop = await s.alice.createExclusion(creditRule, { field: 'source_name', value: 'SHOP-EXPORT.CSV' });
    expect(byShop.statusCode, byShop.body).toBe(201);
    expect(last4s(await s.hitsOf(creditMatch, { include_excluded: false })).sort()).toEqual(
      [last4(DUMP.chase2), last4(DUMP.chase3)].sort(),
    );
    for (const { id } of await s.alice.exclusions(creditRule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
    expect(await s.hitsOf(creditMatch, { include_excluded: false })).toHaveLength(7);
    expectError(
      await s.alice.createExclusion(creditRule, { field: 'holder', value: 'T. H.' }),
      400,
      'validation_failed',
    );
  });

  it('narrows by an 8-digit BIN, an issuer name, brands and card types', async () => {
    const kit = await s.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const rule = await s.alice.created(sourceRule(kit, name, 6, args));
      return rule.total_matches_count === 0 ? [] : last4s(await s.hitsOf((await s.onlyMatch(rule.id)).id)).sort();
    };
    expect(await run('eight-digit BIN', { bins: ['41472012'] })).toEqual([last4(DUMP.chase3)]);
    expect(await run('by issuer', { issuer: 'Lansing Automakers' })).toEqual([last4(DUMP.lansing)]);
    // bins and issuer: a card matching either is reported.
    expect(await run('bins or issuer', { bins: ['371241'], issuer: 'lansing' })).toEqual(
      [last4(DUMP.amex), last4(DUMP.lansing)].sort(),
    );
    expect(await run('debit only', { bins: ['414720', '510560', '371241'], card_types: ['debit'] })).toEqual([
      last4(DUMP.lansing),
    ]);
    expect(await run('amex only', { bins: ['414720', '510560', '371241'], brands: ['amex'] })).toEqual([
      last4(DUMP.amex),
    ]);
    expect(await run('nobody', { bins: ['999999'] })).toEqual([]);
  });

  it('a bin_cvv rule reports only cards with a CVV, unexpired unless asked, within the price', async () => {
    const kit = await s.newKit();
    const rule = await s.alice.created(sourceRule(kit, 'Chase CVV listings', 7, { bins: ['414720'], brand: 'visa' }));
    const hits = await s.hitsOf((await s.onlyMatch(rule.id)).id);
    expect(last4s(hits).sort()).toEqual([DUMP.chase1, DUMP.chase2, SHOP.cheap, SHOP.dear].map(last4).sort());
    expect(hits.every((hit) => hit.has_cvv === true)).toBe(true);
    const matchId = (await s.onlyMatch(rule.id)).id;
    expect((await s.hitsOf(matchId, { sort: '-price', filter: 'shop:acme-shop' })).map((hit) => hit.price)).toEqual([
      12.5,
    ]);
    expect((await s.hitsOf(matchId, { sort: '-price' })).map((hit) => hit.price)).toEqual([30, 12.5, null, null]);
    expect(await s.hitsOf(matchId, { filter: 'billing_state:ca' })).toHaveLength(1);

    const cheap = await s.alice.created(
      sourceRule(kit, 'Cheap Chase CVVs, expired too', 7, { bins: ['414720'], max_price: 20, include_expired: true }),
    );
    expect(last4s(await s.hitsOf((await s.onlyMatch(cheap.id)).id)).sort()).toEqual(
      [SHOP.cheap, SHOP.expired].map(last4).sort(),
    );
  });

  it('args are checked: BINs of 6 to 8 digits, bins or an issuer', async () => {
    const kit = await s.newKit();
    const fields = async (service: number, args: Record<string, unknown>) => {
      const error = expectError(
        await s.alice.create(sourceRule(kit, 'bad args', service, args)),
        400,
        'validation_failed',
      );
      return error.fields;
    };
    expect(await fields(6, {})).toEqual([
      { field: 'args.bins', message: 'is required when args.issuer is not given (rule 3)', rule: 3 },
    ]);
    expect(await fields(6, { bins: [] })).toEqual([
      { field: 'args.bins', message: 'is required when args.issuer is not given (rule 3)', rule: 3 },
    ]);
    expect(await fields(6, { bins: ['414720', '4147', '41472O'] })).toEqual([
      { field: 'args.bins[1]', message: 'must be 6 to 8 digits (rule 3)', rule: 3 },
      { field: 'args.bins[2]', message: 'must be 6 to 8 digits (rule 3)', rule: 3 },
    ]);
    expect(await fields(6, { issuer: ' ch ' })).toEqual([
      { field: 'args.issuer', message: 'must be at least 3 characters (rule 3)', rule: 3 },
    ]);
    expect(await fields(6, { bin: '414720' })).toEqual([
      { field: 'args.bin', message: 'is not a parameter of Credit cards (rule 1)', rule: 1 },
    ]);
    expect(await fields(7, { brand: 'visa' })).toEqual([
      { field: 'args.bins', message: 'is required (rule 2)', rule: 2 },
    ]);
    expect(await fields(7, { bins: ['123456789'], max_price: -1 })).toEqual([
      { field: 'args.bins[0]', message: 'must be 6 to 8 digits (rule 3)', rule: 3 },
      { field: 'args.max_price', message: 'must not be negative (rule 3)', rule: 3 },
    ]);
  });

  it('the next tick reports only cards learned of after the last run; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    // chase1 again, in another file: a new sighting of a known card.
    expect((await ingest('credit_card', files['late-dump.txt']!)).summary).toMatchObject({
      added: 2,
      duplicates_skipped: 0,
    });

    await s.moveTo(T0 + DAY);
    await tickAndDeliver(s.t);
    const { results } = await s.alice.matches(creditRule, { page_size: 100 });
    expect(results).toHaveLength(2);
    const second = results[0]!;
    expect(second).toMatchObject({ total_hits: 2, window_start: iso(T0), window_end: iso(T0 + DAY) });
    expect((await s.hitsOf(second.id)).map((hit) => [hit.last4, hit.source_name]).sort()).toEqual(
      [
        [last4(DUMP.chase1), 'late-dump.txt'],
        [last4(LATE.chase4), 'late-dump.txt'],
      ].sort(),
    );
    expect(payloadOf(requestsTo(s.receiver, creditKit)[1]!)).toMatchObject({ total_matches: 2 });

    await s.moveTo(T0 + DAY + HOUR);
    for (const name of ['acme-dump.txt', 'shop-export.csv', 'late-dump.txt']) {
      const again = await ingest('credit_card', files[name]!);
      expect(again.summary, name).toMatchObject({ added: 0, duplicates_skipped: again.summary.records });
    }
    await s.moveTo(T0 + 2 * DAY);
    await tickAndDeliver(s.t);
    expect((await s.alice.matches(creditRule)).results).toHaveLength(2);
    expect((await runsOf(s.t, creditRule)).at(-1)).toMatchObject({ status: 'empty', window_end: T0 + 2 * DAY });
  });

  it("another organization's rule, match and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.matches(creditRule)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.match(creditMatch)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.hits(creditMatch)), 404, 'not_found');
    expectError(await s.mallory.createExclusion(creditRule, { field: 'bin', value: '414720' }), 404, 'not_found');
  });

  it('no full card number, CVV or holder name is anywhere in the store', async () => {
    const chunks = await readRawStore(s.t.location);
    expect(chunks.length).toBeGreaterThan(0);
    for (const card of [...ALL_CARDS, { pan: badLuhn }])
      expect(sourcesContaining(chunks, card.pan), card.pan).toEqual([]);
    for (const name of ['Tess Holder', 'Synthetic Way', 'tess@example.test', 'Sam Holt'])
      expect(sourcesContaining(chunks, name), name).toEqual([]);

    // CVVs are short digit runs that digests and timestamps may hold by chance: look in the
    // card rows' text fields instead.
    const { rows } = await sql<Record<string, unknown>>`select * from cards`.execute(s.t.container.store.db);
    expect(rows).toHaveLength(13);
    const text = rows
      .map(({ sighting_key: _key, pan_hash: _hash, iin8_hash: _iin8, ...row }) =>
        Object.values(row)
          .filter((value) => typeof value === 'string')
          .join('|'),
      )
      .join('\n');
    for (const { cvv } of ALL_CARDS) if (cvv) expect(text).not.toContain(cvv);
    expect(rows.filter((row) => Number(row.has_cvv) === 1)).toHaveLength(11);
  });
});

describe(`sources: the card demo data (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  // test/sources/demo-examples.test.ts checks that the catalog examples find these cards.
  it('is dated before now, and a second demo adds nothing', async () => {
    const now = t.clock.now().getTime();
    const load = () => Promise.all([6, 7].map((id) => findSource(id)!.demo!(t.container.sourceContext, now)));
    expect(await load()).toEqual([
      expect.stringContaining(': 60 synthetic dump cards added'),
      expect.stringContaining(': 30 synthetic shop listings'),
    ]);
    expect(await load()).toEqual([expect.stringContaining(': 0 synthetic'), expect.stringContaining(': 0 synthetic')]);
    const { rows } = await sql<{ source_name: string; n: number; newest: number; with_cvv: number }>`
      select source_name, count(*) as n, max(discovered_at) as newest, sum(has_cvv) as with_cvv from cards group by source_name order by source_name`.execute(
      t.container.store.db,
    );
    expect(rows.map((row) => [row.source_name, Number(row.n), Number(row.newest) < now, Number(row.with_cvv)])).toEqual(
      [
        ['demo-dump.txt', 60, true, 40],
        ['demo-shop.csv', 30, true, 30],
      ],
    );
  });
});
