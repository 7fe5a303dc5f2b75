import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { repoRoot } from '../support/cli.ts';
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
 * The chat-server source end to end: DiscordChatExporter exports ingested by the real ingester on
 * the test app's store and manual clock, rules over HTTP, hits filtered, sorted and excluded,
 * email and signed webhook delivered, the next tick's window, re-ingesting. Servers, people and
 * messages are made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

const MARKET = { id: '1120734651482091580', name: 'Combo Market', iconUrl: null };
const COMBOLISTS = {
  id: '1120736194526576712',
  type: 'GuildTextChat',
  categoryId: '1120736194526575712',
  category: 'Market',
  name: 'combolists',
  topic: null,
};
const CLOUD = { id: '1098241953046089798', name: 'Dark Cloud Logs', iconUrl: null };
const FREE_LOGS = {
  id: '1098242450230509619',
  type: 'GuildTextChat',
  categoryId: '1098242450230508619',
  category: 'Cloud',
  name: 'free-logs',
  topic: null,
};

const person = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
  id,
  name,
  discriminator: '0000',
  color: null,
  isBot: false,
  avatarUrl: 'https://cdn.discordapp.com/embed/avatars/0.png',
  ...extra,
});
const GHOST = person('731249608851456031', 'gh0st_dealer', { nickname: 'ghost' });
const KING = person('902315577164435496', 'combo.king', { nickname: 'ComboKing' });
const RITA = person('1011927350147391558', 'rootkit_rita');
const CRAWLER = person('884019237501628477', 'n1ghtcrawler');
const FEED = person('1121005948317286460', 'LogsFeed', { isBot: true });

const message = (
  id: string,
  timestamp: string,
  content: string,
  author: object,
  extra: Record<string, unknown> = {},
) => ({
  id,
  type: 'Default',
  timestamp,
  timestampEdited: null,
  callEndedTimestamp: null,
  isPinned: false,
  content,
  author,
  attachments: [],
  embeds: [],
  stickers: [],
  reactions: [],
  mentions: [],
  ...extra,
});
const exportOf = (guild: object, channel: object, messages: object[]) =>
  JSON.stringify(
    {
      guild,
      channel,
      dateRange: { after: null, before: null },
      exportedAt: '2026-03-10T07:00:00+00:00',
      messages,
      messageCount: messages.length,
    },
    null,
    2,
  );

const COMBO = 'FRESH acme-bank.com combo 8k mail:pass, checked';
const ID = {
  combo: '1216000000000000001',
  bot: '1216000000000000002',
  other: '1216000000000000003',
  repost: '1216000000000000004',
  checker: '1216000000000000005',
  cloud: '1216000000000000101',
  late: '1216000000000000201',
};

const combolists = exportOf(MARKET, COMBOLISTS, [
  message(ID.combo, '2026-03-09T20:00:00.000+00:00', COMBO, GHOST, {
    attachments: [
      {
        id: '1216000000000009001',
        url: `https://cdn.discordapp.com/attachments/${COMBOLISTS.id}/${ID.combo}/acme_8k.txt`,
        fileName: 'acme_8k.txt',
        fileSizeBytes: 48213,
      },
    ],
  }),
  message(ID.bot, '2026-03-09T20:05:00.000+00:00', 'New upload', FEED, {
    embeds: [{ title: 'acme-bank.com logs (412)', description: 'Cloud updated', images: [], fields: [] }],
  }),
  message(ID.other, '2026-03-09T20:10:00.000+00:00', 'anyone selling globex.com logs?', RITA),
  message(ID.repost, '2026-03-09T21:00:00.000+00:00', COMBO, KING, {
    attachments: [
      {
        id: '1216000000000009004',
        url: `https://cdn.discordapp.com/attachments/${COMBOLISTS.id}/${ID.repost}/acme_8k.txt`,
        fileName: 'acme_8k.txt',
        fileSizeBytes: 48213,
      },
    ],
  }),
  message(ID.combo, '2026-03-09T20:00:00.000+00:00', COMBO, GHOST),
  message('1216000000000000006', 'last tuesday', 'acme-bank.com combo', RITA),
  {
    ...message('1216000000000000007', '2026-03-09T22:00:00.000+00:00', 'Joined the server.', CRAWLER),
    type: 'GuildMemberJoin',
  },
  message(ID.checker, '2026-03-09T22:30:00.000+00:00', 'acme-bank.com combo checker for sale', RITA),
]);
const freeLogs = exportOf(CLOUD, FREE_LOGS, [
  message(ID.cloud, '2026-03-10T07:30:00.000+00:00', 'Stealer LOGS with Acme-Bank.com cookies, 2k fresh', CRAWLER),
  message('1216000000000000102', '2026-03-10T07:31:00.000+00:00', 'gm', CRAWLER),
]);
const late = exportOf(MARKET, COMBOLISTS, [
  message(ID.late, '2026-03-10T10:00:00.000+00:00', 'acme-bank.com logs drop #2', GHOST),
]);

const QUERY = '"acme-bank.com" AND (combo OR logs) -checker';

describe(`sources: chat servers end to end (${testEngine})`, () => {
  const s = sourceSuite('chat');
  const files: Record<string, string> = {};
  const ids = (hits: HitView[]) => hits.map((hit) => hit.message_id);
  let rule: number;
  let kit: DeliveryKit;
  let matchId: number;

  it('ingests exports, reporting each bad message by its index; system notices are skipped, a repeated id is a duplicate', async () => {
    files.combolists = s.file('combolists.json', combolists);
    files.freeLogs = s.file('free-logs.json', freeLogs);
    files.late = s.file('late.json', late);
    await s.moveTo(T0 - 2 * HOUR);
    const first = await s.ingest('chat_server', [files.combolists]);
    expect(first.failed).toBe(false);
    expect(first.summary).toMatchObject({
      inputs: 1,
      failed: 0,
      records: 6,
      added: 5,
      duplicates_skipped: 1,
      rejected: 1,
    });
    expect(first.lines).toEqual([
      '1 inputs (0 failed): 6 messages read, 5 added, 1 duplicates skipped, 1 rejected',
      `  rejected ${files.combolists} messages[5]: timestamp must be an ISO 8601 date`,
    ]);
    await s.moveTo(T0 - HOUR);
    expect((await s.ingest('chat_server', [files.freeLogs])).tally).toEqual({
      records: 2,
      added: 2,
      duplicates: 0,
      rejected: 0,
      errors: [],
      warnings: [],
    });

    const broken = await s.ingest('chat_server', [s.file('broken.json', '{"guild": {"id": "1"}, "messages": [')]);
    expect(broken.failed).toBe(true);
    expect(broken.tally.errors).toEqual([
      {
        location: path.join(s.dir, 'broken.json'),
        reason: `${path.join(s.dir, 'broken.json')}: line 1, column 37: malformed JSON`,
      },
    ]);
  });

  it('a rule reports the matching messages at creation, newest first, bots left out; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    kit = await s.newKit();
    const created = await s.alice.created(sourceRule(kit, 'Acme combos on Discord', 2, { query: QUERY }));
    rule = created.id;
    expect(created).toMatchObject({ service: 2, last_run: iso(T0), total_matches_count: 3, total_alerts_count: 1 });
    const match = await s.onlyMatch(rule);
    matchId = match.id;
    expect(match).toMatchObject({ total_hits: 3, stored_hits: 3, window_start: null, window_end: iso(T0) });
    const hits = await s.hitsOf(match.id);
    // Learned of last first; within one ingest, the later message first.
    expect(ids(hits)).toEqual([ID.cloud, ID.repost, ID.combo]);
    expect(hits[2]).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      message_id: ID.combo,
      server_id: MARKET.id,
      server_name: 'Combo Market',
      channel_id: COMBOLISTS.id,
      channel_name: 'combolists',
      category: 'Market',
      author_id: GHOST.id,
      author_name: 'ghost',
      is_bot: false,
      timestamp: '2026-03-09T20:00:00.000Z',
      content: `${COMBO}\nacme_8k.txt`,
      has_attachments: true,
      attachments: ['acme_8k.txt'],
      url: `https://discord.com/channels/${MARKET.id}/${COMBOLISTS.id}/${ID.combo}`,
      discovered_at: iso(T0 - 2 * HOUR),
    });
    expect(hits[0]).toMatchObject({
      author_name: 'n1ghtcrawler',
      server_name: 'Dark Cloud Logs',
      has_attachments: false,
      attachments: [],
      discovered_at: iso(T0 - HOUR),
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme combos on Discord',
      service: 'Chat servers (Discord)',
      total_matches: 3,
      excluded_matches: 0,
    });
    const mails = s.smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Acme combos on Discord: 3 hits in Chat servers (Discord)');
  });

  it('a hit opens in context: the messages stored around it in its channel, the other server left out', async () => {
    const repost = (await s.hitsOf(matchId)).find((hit) => hit.message_id === ID.repost)!;
    const url = `/service/alert_system_match_hit_context/${repost.id}/?before=2&after=1`;
    const around = await s.alice.getJson<{ title: string; posts: Record<string, unknown>[] }>(url);
    expect(around.title).toBe('Combo Market › #combolists');
    expect(around.posts.map((post) => [post.id, post.author, post.is_hit])).toEqual([
      [ID.bot, 'LogsFeed', false],
      [ID.other, 'rootkit_rita', false],
      [ID.repost, 'ComboKing', true],
      [ID.checker, 'rootkit_rita', false],
    ]);
    expect(around.posts[1]).toMatchObject({
      date: '2026-03-09T20:10:00.000Z',
      text: 'anyone selling globex.com logs?',
    });
    expectError(await s.alice.get(`/service/alert_system_match_hit_context/${repost.id}/?before=51`), 400);
    await s.mallory.relogin();
    expectError(await s.mallory.get(url), 404, 'not_found');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(ids(await s.hitsOf(matchId, { filter: 'server_name:combo market' }))).toEqual([ID.repost, ID.combo]);
    expect(ids(await s.hitsOf(matchId, { filter: 'has_attachments:true' }))).toEqual([ID.repost, ID.combo]);
    expect(ids(await s.hitsOf(matchId, { filter: ['category:market', 'author_name:ComboKing'] }))).toEqual([ID.repost]);
    expect(ids(await s.hitsOf(matchId, { sort: 'timestamp' }))).toEqual([ID.combo, ID.repost, ID.cloud]);
    expect(ids(await s.hitsOf(matchId, { sort: '-author_name' }))).toEqual([ID.cloud, ID.combo, ID.repost]);
    expectError(await s.alice.get(`${rulePaths.hits(matchId)}?sort=message_id`), 400, 'validation_failed');

    const exclusion = await s.alice.createExclusion(rule, { field: 'author_id', value: KING.id });
    expect(exclusion.statusCode, exclusion.body).toBe(201);
    expect(ids(await s.hitsOf(matchId, { include_excluded: false }))).toEqual([ID.cloud, ID.combo]);
    expect(await s.alice.getJson(rulePaths.match(matchId))).toMatchObject({ excluded_hits: 1, new_hits: 2 });
    for (const { id } of await s.alice.exclusions(rule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
    expectError(await s.alice.createExclusion(rule, { field: 'content', value: COMBO }), 400, 'validation_failed');
  });

  it('narrows by server, channel and bots; unique_only counts a repost (same text and file) once; context_chars cuts the preview', async () => {
    const narrowed = await s.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const created = await s.alice.created(sourceRule(narrowed, name, 2, { query: QUERY, ...args }));
      return created.total_matches_count === 0 ? [] : s.hitsOf((await s.onlyMatch(created.id)).id);
    };
    expect(ids(await run('one server', { server_ids: [MARKET.id] }))).toEqual([ID.repost, ID.combo]);
    expect(ids(await run('one channel', { channel_ids: [FREE_LOGS.id] }))).toEqual([ID.cloud]);
    expect(ids(await run('no such channel', { channel_ids: ['1'] }))).toEqual([]);
    const withBots = await run('bots too', { server_ids: [MARKET.id], include_bots: true });
    expect(ids(withBots)).toEqual([ID.repost, ID.bot, ID.combo]);
    expect(withBots[1]).toMatchObject({
      is_bot: true,
      author_name: 'LogsFeed',
      content: 'New upload\nacme-bank.com logs (412)\nCloud updated',
    });
    expect(ids(await run('unique', { unique_only: true }))).toEqual([ID.cloud, ID.repost]);
    const [short] = await run('short preview', { channel_ids: [FREE_LOGS.id], context_chars: 20 });
    expect(short!.content).toBe('Stealer LOGS with Ac…');
  });

  it('match counts every hit of the window and returns at most the limit, newest first', async () => {
    const source = findSource(2)!;
    const result = await source.match(s.t.container.sourceContext, { query: QUERY }, { since: null, until: T0 }, 1);
    expect(result.total).toBe(3);
    expect(result.hits.map((hit) => [hit.key, hit.date])).toEqual([[`${FREE_LOGS.id}:${ID.cloud}`, T0 - HOUR]]);
    const window = await source.match(
      s.t.container.sourceContext,
      { query: QUERY },
      { since: T0 - HOUR, until: T0 },
      10,
    );
    expect(window.total).toBe(0);
  });

  it('args are checked: the query syntax, snowflake ids, context_chars', async () => {
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit, 'bad args', 2, args)), 400, 'validation_failed').fields;
    expect(await fields({ query: 'acme AND (combo' })).toEqual([
      { field: 'args.query', message: expect.stringContaining('unbalanced parenthesis'), rule: 3 },
    ]);
    expect(
      await fields({ query: 'acme', server_ids: ['1120734651482091580', 'Combo Market'], context_chars: 0 }),
    ).toEqual([
      { field: 'args.server_ids[1]', message: 'must be a snowflake id (a string of digits) (rule 3)', rule: 3 },
      { field: 'args.context_chars', message: 'must be between 1 and 10000 (rule 3)', rule: 3 },
    ]);
    expect(await fields({ query: 'acme', channel_ids: [1098242450230509] })).toEqual([
      { field: 'args.channel_ids[0]', message: 'must be a string (rule 3)', rule: 3 },
    ]);
  });

  it('the next tick reports only messages learned of after the last run; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    expect((await s.ingest('chat_server', [files.late!])).summary).toMatchObject({ added: 1 });
    expect((await s.ingest('chat_server', [files.combolists!, files.freeLogs!])).summary).toMatchObject({
      added: 0,
      duplicates_skipped: 8,
    });

    await s.moveTo(T0 + DAY);
    await tickAndDeliver(s.t);
    const { results } = await s.alice.matches(rule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    expect(ids(await s.hitsOf(results[0]!.id))).toEqual([ID.late]);
    expect(payloadOf(requestsTo(s.receiver, kit)[1]!)).toMatchObject({ total_matches: 1 });
  });

  it("another organization's rule, match and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.matches(rule)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.hits(matchId)), 404, 'not_found');
  });

  // Our own exports always; the real ones of ../shared/fixtures/discord as well where they are.
  const sharedExports = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'discord');
  const exportFolders = [
    {
      name: 'test/fixtures/chat_server/discord',
      folder: path.resolve(repoRoot, 'test', 'fixtures', 'chat_server', 'discord'),
      records: 7,
      query: '"rotated yesterday" OR initech_sample.txt',
      authors: ['Corvid', 'kr4ken'],
    },
    ...(existsSync(sharedExports)
      ? [
          {
            name: '../shared/fixtures/discord',
            folder: sharedExports,
            records: 8,
            query: '"nickname" OR unknown.png',
            authors: ['mlomb', 'mlomb', 'theplant'],
          },
        ]
      : []),
  ];
  it.each(exportFolders)(
    'the exports of $name: a folder ingested, the duplicated id stored once',
    async ({ folder, records, query, authors }) => {
      const report = await s.ingest('chat_server', [folder]);
      expect(report.summary).toMatchObject({
        inputs: 2,
        failed: 0,
        records,
        added: records - 1,
        duplicates_skipped: 1,
        rejected: 0,
      });
      const found = await findSource(2)!.match(
        s.t.container.sourceContext,
        { query },
        { since: s.t.clock.now().getTime() - 1, until: s.t.clock.now().getTime() },
        10,
      );
      expect(found.hits.map((hit) => hit.data.author_name).sort()).toEqual(authors);
    },
  );
});

describe(`sources: the chat-server demo (${testEngine})`, () => {
  // test/sources/demo-examples.test.ts checks the same through `dragnet demo` for every source.
  it('loads once, and the catalog example (server, channel, no bots, unique texts) finds the combo post', async () => {
    const { line, again, hits } = await checkDemo(2);
    expect(line).toMatch(/^Demo chat servers: \d+ Discord messages added/);
    expect(again).toContain(': 0 Discord messages added');
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((hit) => hit.data.is_bot === false && hit.data.channel_name === 'combolists')).toBe(true);
    expect(new Set(hits.map((hit) => hit.data.content)).size).toBe(hits.length);
  });
});
