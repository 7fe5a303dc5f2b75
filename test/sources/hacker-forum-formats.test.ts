import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceRule, type HitView } from '../support/rules-api.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * The forum scrapers' shapes read as published (test/fixtures/hacker_forum: a XenForo-style thread
 * document, vBulletin-style threads one a line, a Discourse /t/<id>.json topic, our JSON Lines),
 * each detected by `auto`; HTML bodies searched as text and kept as HTML.
 */

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/hacker_forum');
const T0 = Date.parse('2026-03-10T09:00:00Z');

describe(`sources: hacker-forum scraper formats (${testEngine})`, () => {
  const s = sourceSuite('forum-formats');

  it('a folder of every format is detected file by file; an ambiguous date is stored as null with a warning', async () => {
    await s.moveTo(T0);
    const report = await s.ingest('hacker_forum', [FIXTURES]);
    expect(report.summary).toMatchObject({ inputs: 4, failed: 0, records: 9, added: 9, rejected: 0 });
    expect(report.summary.warnings).toEqual([
      {
        reason: 'post date is ambiguous (day-first or month-first)',
        count: 1,
        examples: [`${path.join(FIXTURES, 'xenforo-thread.json')} document posts[2]`],
      },
    ]);
    expect(report.lines[1]).toContain('warning: post date is ambiguous (day-first or month-first): 1 (stored as null');
  });

  it('posts of a thread document: the first opens the thread, HTML is searched as text and kept for display', async () => {
    const kit = await s.newKit();
    const rule = await s.alice.created(
      sourceRule(kit, 'Initech on forums', 11, { query: 'initech OR valid OR "pm sent"' }),
    );
    const hits = (await s.hitsOf((await s.onlyMatch(rule.id)).id, { sort: 'posted_at' })) as HitView[];
    const byId = Object.fromEntries(hits.map((hit) => [hit.post_id, hit]));
    expect(Object.keys(byId).sort()).toEqual(['650021', '650034', '650040', '7001']);
    expect(byId['650021']).toMatchObject({
      forum: 'example market',
      section: 'Access',
      thread_id: '91801',
      content_type: 'thread',
      thread_title: 'Initech Corp VPN access (US, 2k employees)',
      author: 'initaccess',
      posted_at: '2025-11-04T06:12:44.000Z',
      url: 'https://forum.example.net/threads/initech-corp-vpn-access.91801/post-650021',
      content:
        'Initech Corp VPN access (US, 2k employees)\nSelling Initech Corp VPN access.\nDomain admin & 2 DCs.\nRevenue: $40M\nPrice: 12k',
      body_html: expect.stringContaining('<b>Initech Corp</b>'),
    });
    expect(byId['650034']).toMatchObject({
      content_type: 'post',
      author: 'k3rnel',
      posted_at: '2025-11-04T11:00:00.000Z',
      url: 'https://forum.example.net/threads/initech-corp-vpn-access.91801/',
    });
    expect(byId['650040']).toMatchObject({ posted_at: null, author: 'broker77' });
    expect(byId['650040']).not.toHaveProperty('body_html');
  });

  it('vBulletin-style field names and named-month dates; Discourse topics keyed by topic and post', async () => {
    const kit = await s.newKit();
    const globex = await s.alice.created(sourceRule(kit, 'Globex', 11, { query: 'globex OR umbrella' }));
    const hits = (await s.hitsOf((await s.onlyMatch(globex.id)).id, { sort: 'posted_at' })) as HitView[];
    expect(
      hits.map((hit) => [hit.post_id, hit.forum, hit.section, hit.author, hit.posted_at, hit.content_type]),
    ).toEqual([
      ['410221', 'exampleboard', 'Databases', 'dbseller', '2025-10-28T22:15:00.000Z', 'thread'],
      ['410240', 'exampleboard', 'Databases', 'n0name', '2025-10-29T07:02:00.000Z', 'post'],
      ['410577', 'exampleboard', 'Logs', 'logz', '2025-11-02T18:40:00.000Z', 'thread'],
    ]);
    expect(hits[2]).toMatchObject({
      content: 'Umbrella Corp webmail logs\nFresh Umbrella Corp webmail logs – 300 accounts',
      body_html: '<p>Fresh Umbrella Corp webmail logs &ndash; 300 accounts</p>',
    });

    const contoso = await s.alice.created(sourceRule(kit, 'Contoso', 11, { query: 'contoso' }));
    const topic = (await s.hitsOf((await s.onlyMatch(contoso.id)).id, { sort: 'posted_at' })) as HitView[];
    expect(
      topic.map((hit) => [hit.post_id, hit.thread_id, hit.forum, hit.author, hit.content_type, hit.posted_at]),
    ).toEqual([
      ['30117', '4821', 'discourse', 'samd', 'thread', '2025-10-12T14:03:51.512Z'],
      ['30125', '4821', 'discourse', 'r00t', 'post', '2025-10-12T16:40:02.101Z'],
    ]);
    expect(topic[0]!.content).toBe(
      'Contoso SSO bypass\nAnyone has a working Contoso SSO bypass? Paying well.\nContact on <tox>.',
    );
  });

  it('a JSON file in none of the formats is refused naming every format; --format still forces one', async () => {
    const other = s.file('other.json', '{"messages": []}');
    const report = await s.ingest('hacker_forum', [other]);
    expect(report.summary).toMatchObject({ inputs: 1, failed: 1 });
    expect(report.lines.at(-1)).toMatch(
      /error: .*other\.json: format: is in none of the formats hacker_forum reads: jsonl \(.*\), thread \(.*\), discourse \(Discourse/,
    );
    const forced = await s.ingest('hacker_forum', [path.join(FIXTURES, 'discourse-topic-4821.json')], 'thread');
    expect(forced.summary).toMatchObject({ records: 0, rejected: 1 });
  });
});
