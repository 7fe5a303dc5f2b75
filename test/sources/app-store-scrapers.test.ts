import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceRule } from '../support/rules-api.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * The scrapers' own output read as published (test/fixtures/app_store: google-play-scraper apps
 * as a JSON array, an app-store-scraper app as one object, both mixed one a line), detected by
 * `auto`, each app's store told by its shape.
 */

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/app_store');
const T0 = Date.parse('2026-03-10T09:00:00Z');

describe(`sources: app-store scrapers' output (${testEngine})`, () => {
  const s = sourceSuite('app-scrapers');

  it('reads every shape; an app whose store cannot be told is refused, an impossible or future date is null with a warning', async () => {
    await s.moveTo(T0);
    const report = await s.ingest('app_store', [FIXTURES]);
    expect(report.summary).toMatchObject({ inputs: 3, failed: 0, records: 5, added: 5, rejected: 1 });
    expect(report.tally.errors).toEqual([
      {
        location: `${path.join(FIXTURES, 'scrapers-mixed.jsonl')} line 3`,
        reason: expect.stringContaining('cannot tell the store'),
      },
    ]);
    expect(report.tally.warnings).toEqual([
      {
        reason: 'update date in the future',
        count: 1,
        examples: [`${path.join(FIXTURES, 'google-play-scraper-search.json')} record 2`],
      },
    ]);
  });

  it('a rule finds the apps using the brand with the fields each scraper gives', async () => {
    const kit = await s.newKit();
    const rule = await s.alice.created(
      sourceRule(kit, 'Initech apps', 13, { query: 'Initech', official_developers: ['Initech Bank Inc'] }),
    );
    const hits = await s.hitsOf((await s.onlyMatch(rule.id)).id);
    const byApp = Object.fromEntries(hits.map((hit) => [hit.app_id, hit]));
    expect(Object.keys(byApp).sort()).toEqual(['com.fastapps.initechbank', 'com.quickwallet.initech']);
    expect(byApp['com.fastapps.initechbank']).toMatchObject({
      platform: 'android',
      store: 'google_play',
      name: 'Initech Mobile Banking',
      developer: 'Fastapps Studio',
      developer_id: 'Fastapps+Studio',
      installs: 5000,
      rating: 3.9,
      rating_count: 102,
      released_at: '2025-03-03T00:00:00.000Z',
      updated_at: '2025-10-01T10:00:00.000Z',
    });
    expect(byApp['com.quickwallet.initech']).toMatchObject({
      platform: 'ios',
      store: 'app_store',
      name: 'Initech Wallet - Pay & Send',
      developer: 'QuickWallet LLC',
      developer_id: '1619220001',
      url: 'https://apps.apple.com/us/app/initech-wallet-pay-send/id1619220047?uo=4',
      rating: 2.8,
      rating_count: 37,
      genre: 'Finance',
      released_at: '2024-06-11T07:00:00.000Z',
      updated_at: '2025-09-30T16:21:05.000Z',
    });
  });

  it('a JSON file in neither shape is refused naming the formats', async () => {
    const report = await s.ingest('app_store', [s.file('other.json', '{"apps": []}')]);
    expect(report.lines.at(-1)).toMatch(
      /error: .*other\.json: format: is in none of the formats app_store reads: itunes \(iTunes Search.*\), scraper \(google-play-scraper/,
    );
  });
});
