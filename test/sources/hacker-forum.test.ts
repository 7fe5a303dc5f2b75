import { describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { expectError } from '../support/http.ts';
import {
  deliverPending,
  HOUR,
  iso,
  payloadOf,
  requestsTo,
  rulePaths,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
} from '../support/rules-api.ts';
import { checkDemo, sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The hacker-forum source end to end: forum posts as JSON Lines ingested by the real ingester on
 * the test app's store and manual clock, rules over HTTP, hits filtered, sorted and excluded,
 * email and signed webhook delivered, the next tick's window, re-ingesting. Threads, authors and
 * posts are made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

const thread = {
  forum: 'XSS',
  section: 'Access',
  thread_id: 91742,
  thread_title: 'Acme Bank (US) corporate network access',
};
const post = (postId: number, fields: Record<string, unknown>) => ({
  ...thread,
  post_id: postId,
  author: 'k3rnel',
  date: '2026-03-09T10:00:00Z',
  url: `https://xss.is/threads/91742/post-${postId}`,
  content_type: 'post',
  ...fields,
});
const lines = (records: unknown[]) =>
  records.map((record) => (typeof record === 'string' ? record : JSON.stringify(record))).join('\n') + '\n';

const opening = post(640118, {
  author: 'initaccess',
  title: thread.thread_title,
  body: 'Selling RDP to 3 hosts, domain user. Start 15k.',
  content_type: 'thread',
  language: 'en',
  date: '2026-03-09T08:00:00+03:00',
});
const forumsA = lines([
  opening,
  post(640119, { body: 'pm sent' }),
  post(640120, { body: 'is the ACME BANK access still valid?', date: '2026-03-09T12:00:00Z' }),
  {
    forum: 'exploit',
    section: 'Marketplace',
    thread_id: '238551',
    thread_title: 'Acme Bank customers database 2026',
    post_id: '1770402',
    author: 'dbseller',
    date: '2026-03-09T16:30:00Z',
    body: '[SELL] 410k rows: name, email, phone. Sample on request.',
    url: 'https://exploit.in/topic/238551/?do=findComment&comment=1770402',
    content_type: 'marketplace',
    language: 'ru',
  },
  {
    forum: 'breachforums',
    section: 'Databases',
    thread_id: 5120,
    thread_title: 'Globex Corp database',
    post_id: 88001,
    author: 'n0name',
    date: '2026-03-09T18:00:00Z',
    body: 'full database, 2M rows',
    url: 'https://breachforums.st/Thread-Globex-Corp-database',
    content_type: 'thread',
  },
  post(640121, { body: 'acme bank access', content_type: 'reply' }),
  '{"forum": "xss", "post_id": ',
  opening,
  {
    forum: 'breachforums',
    section: 'Leaks',
    thread_id: 5133,
    thread_title: 'Acme Bank leak',
    post_id: 88050,
    author: 'n0name',
    date: '2026-03-09T20:00:00Z',
    body: 'Full database of acme bank, free download',
    url: 'https://breachforums.st/Thread-Acme-Bank-leak',
    content_type: 'thread',
  },
]);
const late = lines([post(640200, { body: 'got the acme bank RDP, works', date: '2026-03-10T10:00:00Z' })]);

const QUERY = '"acme bank" AND (access OR database OR rdp)';
const KEY = { opening: '640118', reply: '640120', offer: '1770402', leak: '88050', late: '640200' };

describe(`sources: hacker forums end to end (${testEngine})`, () => {
  const s = sourceSuite('forum');
  const postIds = (hits: HitView[]) => hits.map((hit) => hit.post_id);
  const files: Record<string, string> = {};
  let rule: number;
  let kit: DeliveryKit;
  let matchId: number;

  it('ingests JSON Lines, reporting each bad line by number; a post seen again is a duplicate', async () => {
    files.a = s.file('forums-a.jsonl', forumsA);
    files.late = s.file('late.ndjson', late);
    await s.moveTo(T0 - HOUR);
    const report = await s.ingest('hacker_forum', [files.a]);
    expect(report.summary).toMatchObject({
      inputs: 1,
      failed: 0,
      records: 7,
      added: 6,
      duplicates_skipped: 1,
      rejected: 2,
    });
    expect(report.lines).toEqual([
      '1 inputs (0 failed): 7 posts read, 6 added, 1 duplicates skipped, 2 rejected',
      `  rejected ${files.a} line 6: content_type must be one of: thread, post, marketplace`,
      `  rejected ${files.a} line 7: not valid JSON`,
    ]);
  });

  it('a rule reports the matching threads, replies and offers at creation, newest first; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    kit = await s.newKit();
    const created = await s.alice.created(sourceRule(kit, 'Acme Bank on forums', 11, { query: QUERY }));
    rule = created.id;
    expect(created).toMatchObject({ service: 11, total_matches_count: 4, total_alerts_count: 1 });
    const match = await s.onlyMatch(rule);
    matchId = match.id;
    expect(match).toMatchObject({ total_hits: 4, window_start: null, window_end: iso(T0) });
    const hits = await s.hitsOf(match.id);
    // One ingest, one discovery time: the later line first. The reply "pm sent" is not found by its thread's title.
    expect(postIds(hits)).toEqual([KEY.leak, KEY.offer, KEY.reply, KEY.opening]);
    expect(hits[3]).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      post_id: KEY.opening,
      thread_id: '91742',
      forum: 'xss',
      section: 'Access',
      content_type: 'thread',
      thread_title: 'Acme Bank (US) corporate network access',
      title: 'Acme Bank (US) corporate network access',
      author: 'initaccess',
      language: 'en',
      url: 'https://xss.is/threads/91742/post-640118',
      posted_at: '2026-03-09T05:00:00.000Z',
      content: 'Acme Bank (US) corporate network access\nSelling RDP to 3 hosts, domain user. Start 15k.',
      discovered_at: iso(T0 - HOUR),
    });
    expect(hits[2]).toMatchObject({
      content_type: 'post',
      title: null,
      language: null,
      content: 'is the ACME BANK access still valid?',
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme Bank on forums',
      service: 'Hacker forums',
      total_matches: 4,
    });
    expect(s.smtp.messages.filter((m) => m.to.includes(kit.recipient.email)).map((m) => m.parsed.html)).toEqual([
      expect.stringContaining('Acme Bank on forums: 4 hits in Hacker forums'),
    ]);
  });

  it('a hit opens in context: the posts of its thread around it, other threads left out', async () => {
    const reply = (await s.hitsOf(matchId)).find((hit) => hit.post_id === KEY.reply)!;
    const url = `/service/alert_system_match_hit_context/${reply.id}/?after=3`;
    const around = await s.alice.getJson<{ title: string; posts: Record<string, unknown>[] }>(url);
    expect(around.title).toBe('xss › Acme Bank (US) corporate network access');
    expect(around.posts.map((entry) => [entry.id, entry.author, entry.is_hit])).toEqual([
      [KEY.opening, 'initaccess', false],
      ['640119', 'k3rnel', false],
      [KEY.reply, 'k3rnel', true],
    ]);
    expect(around.posts[1]).toMatchObject({ text: expect.stringContaining('pm sent') });
    await s.mallory.relogin();
    expectError(await s.mallory.get(url), 404, 'not_found');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(postIds(await s.hitsOf(matchId, { filter: 'content_type:post' }))).toEqual([KEY.reply]);
    expect(postIds(await s.hitsOf(matchId, { filter: ['forum:XSS', 'author:initaccess'] }))).toEqual([KEY.opening]);
    expect(postIds(await s.hitsOf(matchId, { filter: 'language:ru' }))).toEqual([KEY.offer]);
    expect(postIds(await s.hitsOf(matchId, { sort: 'posted_at' }))).toEqual([
      KEY.opening,
      KEY.reply,
      KEY.offer,
      KEY.leak,
    ]);
    expect(postIds(await s.hitsOf(matchId, { sort: 'forum' }))).toEqual([KEY.leak, KEY.offer, KEY.reply, KEY.opening]);
    expectError(await s.alice.get(`${rulePaths.hits(matchId)}?filter=thread_title:x`), 400, 'validation_failed');

    expect((await s.alice.createExclusion(rule, { field: 'forum', value: 'breachforums' })).statusCode).toBe(201);
    expect((await s.alice.createExclusion(rule, { field: 'thread_id', value: '91742' })).statusCode).toBe(201);
    expect(postIds(await s.hitsOf(matchId, { include_excluded: false }))).toEqual([KEY.offer]);
    expect(await s.alice.getJson(rulePaths.match(matchId))).toMatchObject({ excluded_hits: 3, new_hits: 1 });
    for (const { id } of await s.alice.exclusions(rule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
  });

  it('narrows by forums (any case) and content types; the catalog example finds the xss thread and the exploit offer', async () => {
    const narrowed = await s.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const created = await s.alice.created(sourceRule(narrowed, name, 11, { query: QUERY, ...args }));
      return created.total_matches_count === 0 ? [] : postIds(await s.hitsOf((await s.onlyMatch(created.id)).id));
    };
    expect(await run('two forums', { forums: ['XSS', 'exploit'] })).toEqual([KEY.offer, KEY.reply, KEY.opening]);
    expect(await run('openings and offers', { content_types: ['thread', 'marketplace'] })).toEqual([
      KEY.leak,
      KEY.offer,
      KEY.opening,
    ]);
    expect(await run('the example', { forums: ['xss', 'exploit'], content_types: ['thread', 'marketplace'] })).toEqual([
      KEY.offer,
      KEY.opening,
    ]);
    expect(await run('no such forum', { forums: ['dread'] })).toEqual([]);
    expect(await run('NOT', { query: '"acme bank" -rdp -database' })).toEqual([KEY.reply]);
  });

  it('match counts every hit of the window and returns at most the limit', async () => {
    const result = await findSource(11)!.match(
      s.t.container.sourceContext,
      { query: QUERY, forums: ['xss'] },
      { since: null, until: T0 },
      1,
    );
    expect(result).toMatchObject({ total: 2, hits: [{ key: `xss:${KEY.reply}`, date: T0 - HOUR }] });
  });

  it('args are checked: the query syntax and the content types', async () => {
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit, 'bad args', 11, args)), 400, 'validation_failed').fields;
    expect(await fields({ query: 'acme OR' })).toEqual([
      { field: 'args.query', message: expect.stringContaining('dangling operator OR'), rule: 3 },
    ]);
    expect(await fields({ query: 'acme', content_types: ['thread', 'reply'] })).toEqual([
      { field: 'args.content_types[1]', message: 'must be one of: thread, post, marketplace (rule 3)', rule: 3 },
    ]);
  });

  it('the next tick reports only posts learned of after the last run; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    expect((await s.ingest('hacker_forum', [s.dir])).summary).toMatchObject({
      inputs: 2,
      records: 8,
      added: 1,
      duplicates_skipped: 7,
      rejected: 2,
    });
    await s.moveTo(T0 + DAY);
    await tickAndDeliver(s.t);
    const { results } = await s.alice.matches(rule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    expect(postIds(await s.hitsOf(results[0]!.id))).toEqual([KEY.late]);
    expect(payloadOf(requestsTo(s.receiver, kit)[1]!)).toMatchObject({ total_matches: 1 });
  });

  it("another organization's rule and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.hits(matchId)), 404, 'not_found');
    expectError(await s.mallory.createExclusion(rule, { field: 'forum', value: 'xss' }), 404, 'not_found');
  });
});

describe(`sources: the hacker-forum demo (${testEngine})`, () => {
  it('loads once, and the catalog example finds the xss access thread and the exploit offer', async () => {
    const { line, again, hits } = await checkDemo(11);
    expect(line).toMatch(/^Demo hacker forums: \d+ forum posts added/);
    expect(again).toContain(': 0 forum posts added');
    expect(hits.map((hit) => [hit.data.forum, hit.data.content_type])).toEqual(
      expect.arrayContaining([
        ['xss', 'thread'],
        ['exploit', 'marketplace'],
      ]),
    );
  });
});
