import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceRule, type HitView } from '../support/rules-api.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Pastes as paste monitors save them, read as published (test/fixtures/paste_site: a pastepwn
 * paste object, PasteHunter documents one a line, a raw paste file), each detected by `auto`.
 */

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/paste_site');
const T0 = Date.parse('2026-03-10T09:00:00Z');

describe(`sources: paste monitors' saved pastes (${testEngine})`, () => {
  const s = sourceSuite('paste-formats');

  it('a folder of saved pastes and raw paste files is detected file by file; unreadable dates are null with a warning', async () => {
    await s.moveTo(T0);
    const report = await s.ingest('paste_site', [FIXTURES]);
    // The folder also holds a Pastebin scraping list without its pastes' bodies: its entries are
    // rejected, each naming the body it lacks.
    expect(report.summary).toMatchObject({ inputs: 4, failed: 0, records: 4, added: 4, rejected: 2 });
    expect(report.tally.errors.map((error) => error.reason)).toEqual([
      'no content: neither a content field nor Wq7tLm2R.txt beside the list',
      'no content: neither a content field nor c3Pz9KfA.txt beside the list',
    ]);
    expect(report.tally.warnings.map(({ reason, count }) => [reason, count])).toEqual([
      ['paste date is ambiguous (day-first or month-first)', 1],
      ['paste date unknown (a raw paste file; its file time is when it was saved)', 1],
    ]);
  });

  it('every field name variant lands in the stored paste', async () => {
    const kit = await s.newKit();
    const rule = await s.alice.created(sourceRule(kit, 'initech and globex', 12, { query: 'initech OR globex' }));
    const hits = (await s.hitsOf((await s.onlyMatch(rule.id)).id, { sort: 'posted_at' })) as HitView[];
    const byKey = Object.fromEntries(hits.map((hit) => [hit.paste_key, hit]));
    expect(Object.keys(byKey).sort()).toEqual(['Hq3vX8bL', 'Kd93hT2a', 'Zt7mQ2wP', 'a8Bq1']);
    expect(byKey.Hq3vX8bL).toMatchObject({
      site: 'pastebin',
      title: 'initech vpn',
      syntax: 'text',
      user: null,
      size: 96,
      url: 'https://pastebin.com/Hq3vX8bL',
      expire: null,
      posted_at: '2025-11-04T09:53:20.000Z',
    });
    expect(byKey.Zt7mQ2wP).toMatchObject({
      site: 'pastebin',
      title: 'globex smtp',
      syntax: 'ini',
      user: 'd4rkpaste',
      size: 58,
      posted_at: '2025-11-03T10:00:00.000Z',
    });
    expect(byKey.a8Bq1).toMatchObject({
      site: 'paste_ee',
      title: null,
      syntax: 'text',
      url: 'https://paste.ee/p/a8Bq1',
      posted_at: null,
    });
    expect(byKey.Kd93hT2a).toMatchObject({ site: null, url: null, posted_at: null, syntax: 'text' });
    expect(byKey.Kd93hT2a!.snippet).toContain('db01.initech.example');
  });

  it('--format forces one; a file in none is refused naming every format', async () => {
    const forced = await s.ingest('paste_site', [path.join(FIXTURES, 'raw')], 'raw');
    expect(forced.summary).toMatchObject({ records: 1, duplicates_skipped: 1 });
    const other = s.file('other.json', '{"hello": "world"}');
    const report = await s.ingest('paste_site', [other]);
    expect(report.lines.at(-1)).toMatch(
      /error: .*other\.json: format: is in none of the formats paste_site reads: jsonl \(.*\), pastebin \(.*\), saved \(.*\), raw \(/,
    );
  });
});
