import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relative } from '../support/delivery-api.ts';
import { channel, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  deliverPending,
  HOUR,
  iso,
  messengerRule,
  notificationsOf,
  payloadOf,
  requestsTo,
  rulePaths,
  rulesUser,
  SMTP_AUTH,
  tickAndDeliver,
  withQuery,
  writeCorpus,
  type DeliveryKit,
  type ExclusionView,
  type HitView,
  type MatchView,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import type { ListPage } from '../support/delivery-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

describe(`rules: matches, hits and exclusions (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let kit: DeliveryKit;
  let rule: RuleView;
  let match: MatchView;

  /**
   * Seven hits at creation: golf_a has four (users 11, 12, 11, 13; one photo), golf_b two
   * (user 14), golf_c one (user 15). Message ids are in date order.
   */
  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    kit = await createDeliveryKit(alice, { tag: 'golf', smtp, receiver });
    const at = (i: number) => T0 - (10 - i) * HOUR;
    await writeCorpus(t, [
      channel('golf_a', [
        message(1, 'golf-bank.com logins', { date: at(1), userId: 11 }),
        message(2, 'golf-bank.com cookies', {
          date: at(2),
          userId: 12,
          hasMedia: true,
          mediaType: 'photo',
          fileName: 'shot.jpg',
        }),
        message(3, 'golf-bank.com admin panel', { date: at(3), userId: 11 }),
        message(4, 'golf-bank.com vpn', { date: at(4), userId: 13 }),
      ]),
      channel('golf_b', [
        message(5, 'golf-bank.com db', { date: at(5), userId: 14 }),
        message(6, 'golf-bank.com db part 2', { date: at(6), userId: 14 }),
      ]),
      channel('golf_c', [message(7, 'golf-bank.com combo', { date: at(7), userId: 15 })]),
      channel('golf_noise', [message(8, 'unrelated chatter', { date: at(8), userId: 16 })]),
    ]);
    rule = await alice.created(messengerRule(kit, 'Golf bank', 'golf-bank.com'));
    [match] = (await alice.matches(rule.id)).results as [MatchView];
    await deliverPending(t);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  const hitIds = (page: ListPage<HitView>) => page.results.map((h) => h.message_id as number);
  const current = async () => (await alice.find(rule.id))!;
  const matchNow = () => alice.getJson<MatchView>(rulePaths.match(match.id));

  it('the first run made one match of the seven hits', async () => {
    expect(rule).toMatchObject({ total_matches_count: 7, total_alerts_count: 1 });
    expect(match).toMatchObject({
      rule_id: rule.id,
      status: 'complete',
      total_hits: 7,
      stored_hits: 7,
      excluded_hits: 0,
      new_hits: 7,
    });
    expect(requestsTo(receiver, kit)).toHaveLength(1);
  });

  it('hits: newest first by default, with id, is_excluded and the messenger hit fields', async () => {
    const page = await alice.hits(match.id);
    expect(page.count).toBe(7);
    expect(page.next).toBeNull();
    expect(page.previous).toBeNull();
    expect(hitIds(page)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    const photo = page.results.find((h) => h.message_id === 2)!;
    expect(photo).toEqual({
      id: expect.any(Number),
      is_excluded: false,
      hit_key: `${photo.channel_id as number}:2`,
      message_id: 2,
      channel_id: expect.any(Number),
      channel_username: 'golf_a',
      user_id: 12,
      date: iso(T0 - 8 * HOUR),
      text: 'golf-bank.com cookies',
      text_preview: 'golf-bank.com cookies',
      text_hash: expect.any(String),
      has_media: true,
      media_type: 'photo',
      file_name: 'shot.jpg',
      links: null,
      forwarded_from: null,
      forwarded_from_id: null,
      via_bot: null,
      reply_to_message_id: null,
      edited_at: null,
    });
  });

  it('a hit opens in context: the messages of its channel around it by date, other channels left out', async () => {
    const { results } = await alice.hits(match.id, { filter: ['channel_username:golf_a'], sort: 'date' });
    const third = (results as HitView[])[2]!;
    expect(third.message_id).toBe(3);
    const around = await alice.getJson<{ hit_id: number; title: string; posts: Record<string, unknown>[] }>(
      `/service/alert_system_match_hit_context/${third.id}/?before=1&after=5`,
    );
    expect(around).toMatchObject({ hit_id: third.id, title: '@golf_a' });
    expect(around.posts).toEqual([
      { id: '2', author: 'user 12', date: iso(T0 - 8 * HOUR), text: 'golf-bank.com cookies', is_hit: false },
      { id: '3', author: 'user 11', date: iso(T0 - 7 * HOUR), text: 'golf-bank.com admin panel', is_hit: true },
      { id: '4', author: 'user 13', date: iso(T0 - 6 * HOUR), text: 'golf-bank.com vpn', is_hit: false },
    ]);
    expectError(await alice.get(`/service/alert_system_match_hit_context/${third.id}/?after=-1`), 400);
    const other = await rulesUser(t, 'Other', 'other@other.test');
    expectError(await other.get(`/service/alert_system_match_hit_context/${third.id}/`), 404, 'not_found');
  });

  it('hits: page and page_size, paged through next and previous', async () => {
    const seen: number[] = [];
    let url: string | null = withQuery(rulePaths.hits(match.id), { page_size: 3 });
    let pages = 0;
    while (url) {
      const page: ListPage<HitView> = await alice.getJson(url);
      expect(page.count).toBe(7);
      seen.push(...hitIds(page));
      pages++;
      url = page.next && relative(page.next);
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1]);
    const third = await alice.hits(match.id, { page: 3, page_size: 3 });
    expect(hitIds(third)).toEqual([1]);
    expect(hitIds(await alice.getJson(relative(third.previous!)))).toEqual([4, 3, 2]);
    expect((await alice.hits(match.id, { page: 9, page_size: 3 })).results).toEqual([]);
  });

  it('hits: sort=date, sort=-date and other sortable fields; an unknown sort is a 400 on sort', async () => {
    expect(hitIds(await alice.hits(match.id, { sort: 'date' }))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(hitIds(await alice.hits(match.id, { sort: '-date' }))).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(hitIds(await alice.hits(match.id, { sort: '-message_id' }))).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(hitIds(await alice.hits(match.id, { sort: 'message_id' }))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const byChannel = await alice.hits(match.id, { sort: 'channel_id' });
    const channelIds = byChannel.results.map((h) => h.channel_id as number);
    expect(channelIds).toEqual([...channelIds].sort((a, b) => a - b));
    for (const sort of ['text', 'user_id', '-', 'date,message_id']) {
      const error = expectError(
        await alice.get(withQuery(rulePaths.hits(match.id), { sort })),
        400,
        'validation_failed',
      );
      expect(
        error.fields?.map((f) => f.field),
        sort,
      ).toEqual(['sort']);
    }
  });

  it('hits: filter=field:value (one filter)', async () => {
    const page = await alice.hits(match.id, { filter: 'channel_username:golf_a' });
    expect(page.count).toBe(4);
    expect(hitIds(page)).toEqual([4, 3, 2, 1]);
    // Case-insensitive, and on other filterable fields.
    expect(hitIds(await alice.hits(match.id, { filter: 'channel_username:GOLF_B' }))).toEqual([6, 5]);
    expect(hitIds(await alice.hits(match.id, { filter: 'has_media:true' }))).toEqual([2]);
    expect(hitIds(await alice.hits(match.id, { filter: 'media_type:photo' }))).toEqual([2]);
  });

  it('hits: repeated filters all apply; a non-filterable field is a 400 on filter', async () => {
    expect(hitIds(await alice.hits(match.id, { filter: ['channel_username:golf_a', 'user_id:11'] }))).toEqual([3, 1]);
    for (const filter of ['text:golf', 'channel_username', 'date:2026-03-10']) {
      const error = expectError(
        await alice.get(withQuery(rulePaths.hits(match.id), { filter: [filter, 'user_id:11'] })),
        400,
        'validation_failed',
      );
      expect(
        error.fields?.map((f) => f.field),
        filter,
      ).toEqual(['filter']);
    }
  });

  it('hits: paging through next keeps the filter and the sort', async () => {
    const first = await alice.hits(match.id, {
      filter: ['channel_username:golf_a', 'user_id:11'],
      sort: 'date',
      page_size: 1,
    });
    expect(first.count).toBe(2);
    expect(hitIds(first)).toEqual([1]);
    expect(first.next).not.toBeNull();
    const second: ListPage<HitView> = await alice.getJson(relative(first.next!));
    expect(second.count).toBe(2);
    expect(hitIds(second)).toEqual([3]);
  });

  it('exclusions: only excludable fields; duplicates are 409', async () => {
    for (const field of ['text', 'has_media', 'date', 'Channel_username']) {
      const error = expectError(await alice.createExclusion(rule.id, { field, value: 'x' }), 400, 'validation_failed');
      expect(
        error.fields?.map((f) => f.field),
        field,
      ).toEqual(['field']);
    }
    expectError(await alice.createExclusion(rule.id, { field: 'channel_username' }), 400, 'validation_failed');
    expectError(
      await alice.createExclusion(rule.id, { field: 'channel_username', value: '' }),
      400,
      'validation_failed',
    );
    expect(await alice.exclusions(rule.id)).toEqual([]);
  });

  it('exclusions: create, list and delete change the counts of the rule and the match at once', async () => {
    const response = await alice.createExclusion(rule.id, { field: 'channel_username', value: 'golf_b' });
    expect(response.statusCode, response.body).toBe(201);
    const exclusion = response.json() as ExclusionView;
    expect(exclusion).toEqual({
      id: expect.any(Number),
      rule_id: rule.id,
      field: 'channel_username',
      value: 'golf_b',
      created_at: iso(T0),
    });
    expectError(await alice.createExclusion(rule.id, { field: 'channel_username', value: 'golf_b' }), 409, 'conflict');
    expect(await alice.exclusions(rule.id)).toEqual([exclusion]);

    expect(await current()).toMatchObject({ total_matches_count: 5, total_alerts_count: 1 });
    expect(await matchNow()).toMatchObject({ total_hits: 7, excluded_hits: 2, new_hits: 5 });
    // Excluded hits are kept, flagged, and left out with include_excluded=false.
    const all = await alice.hits(match.id);
    expect(all.count).toBe(7);
    expect(all.results.filter((h) => h.is_excluded).map((h) => h.message_id)).toEqual([6, 5]);
    const kept = await alice.hits(match.id, { include_excluded: false });
    expect(kept.count).toBe(5);
    expect(hitIds(kept)).toEqual([7, 4, 3, 2, 1]);
    expect((await alice.hits(match.id, { include_excluded: true })).count).toBe(7);

    // Values compare case-insensitively; a numeric field compares by its text.
    const byUser = (await alice.createExclusion(rule.id, { field: 'user_id', value: '11' })).json() as ExclusionView;
    const byChannel = (
      await alice.createExclusion(rule.id, { field: 'channel_username', value: 'GOLF_C' })
    ).json() as ExclusionView;
    expect(await current()).toMatchObject({ total_matches_count: 2, total_alerts_count: 1 });
    expect(hitIds(await alice.hits(match.id, { include_excluded: false }))).toEqual([4, 2]);
    expect((await alice.exclusions(rule.id)).map((e) => e.id)).toEqual([exclusion.id, byUser.id, byChannel.id]);

    // Everything excluded: no hit counts, and the match no longer counts as an alert.
    const rest = (
      await alice.createExclusion(rule.id, { field: 'channel_username', value: 'golf_a' })
    ).json() as ExclusionView;
    expect(await current()).toMatchObject({ total_matches_count: 0, total_alerts_count: 0 });
    expect(await matchNow()).toMatchObject({ excluded_hits: 7, new_hits: 0 });

    // Deleting exclusions makes those hits count again.
    for (const { id } of [rest, byUser, byChannel]) {
      const deleted = await alice.deleteExclusion(id);
      expect(deleted.statusCode, deleted.body).toBe(204);
    }
    expectError(await alice.deleteExclusion(rest.id), 404, 'not_found');
    expect(await alice.exclusions(rule.id)).toEqual([exclusion]);
    expect(await current()).toMatchObject({ total_matches_count: 5, total_alerts_count: 1 });
    expect(await matchNow()).toMatchObject({ excluded_hits: 2, new_hits: 5 });
  });

  it('a run whose new hits are all excluded records its match but sends nothing; a mixed run notifies', async () => {
    // golf_b stays excluded from the previous test.
    expect((await alice.exclusions(rule.id)).map((e) => [e.field, e.value])).toEqual([['channel_username', 'golf_b']]);
    const hooksBefore = requestsTo(receiver, kit).length;
    const mailsBefore = smtp.messages.length;
    const notificationsBefore = (await notificationsOf(t, rule.id)).length;

    await writeCorpus(t, [channel('golf_b', [message(9, 'golf-bank.com db part 3', { date: T0 + HOUR, userId: 14 })])]);
    await tickAndDeliver(t, new Date(T0 + DAY));
    const [excludedOnly] = (await alice.matches(rule.id)).results;
    expect(excludedOnly).toMatchObject({
      window_start: iso(T0),
      window_end: iso(T0 + DAY),
      total_hits: 1,
      excluded_hits: 1,
      new_hits: 0,
    });
    expect((await notificationsOf(t, rule.id)).length).toBe(notificationsBefore);
    expect(requestsTo(receiver, kit)).toHaveLength(hooksBefore);
    expect(smtp.messages).toHaveLength(mailsBefore);
    expect(await current()).toMatchObject({ last_run: iso(T0 + DAY), total_matches_count: 5, total_alerts_count: 1 });

    await writeCorpus(t, [
      channel('golf_b', [message(10, 'golf-bank.com db part 4', { date: T0 + DAY + HOUR, userId: 14 })]),
      channel('golf_c', [message(11, 'golf-bank.com fresh combo', { date: T0 + DAY + 2 * HOUR, userId: 15 })]),
    ]);
    await tickAndDeliver(t, new Date(T0 + 2 * DAY));
    const [mixed] = (await alice.matches(rule.id)).results;
    expect(mixed).toMatchObject({ total_hits: 2, excluded_hits: 1, new_hits: 1 });
    const hooks = requestsTo(receiver, kit);
    expect(hooks).toHaveLength(hooksBefore + 1);
    expect(payloadOf(hooks.at(-1)!)).toMatchObject({
      total_matches: 2,
      excluded_matches: 1,
      results_url: `https://dashboard.dragnet.test${rulePaths.matchLink(mixed!.id, alice.orgId)}`,
    });
    expect(smtp.messages).toHaveLength(mailsBefore + 1);
    expect(smtp.messages.at(-1)!.parsed.html).toContain('Golf bank: 1 hits in Messenger channels');
    expect(await current()).toMatchObject({ total_matches_count: 6, total_alerts_count: 2 });
  });

  it('match list: newest first, paged through next', async () => {
    const all = await alice.matches(rule.id);
    expect(all.count).toBe(3);
    expect(all.results.map((m) => m.window_end)).toEqual([iso(T0 + 2 * DAY), iso(T0 + DAY), iso(T0)]);
    const first = await alice.matches(rule.id, { page_size: 2 });
    expect(first.results.map((m) => m.id)).toEqual(all.results.slice(0, 2).map((m) => m.id));
    expect(first.previous).toBeNull();
    const second: ListPage<MatchView> = await alice.getJson(relative(first.next!));
    expect(second.results.map((m) => m.id)).toEqual([all.results[2]!.id]);
    expect(second.next).toBeNull();
    expect(second.previous).not.toBeNull();
  });

  it('excluding one hit by its hit_key leaves the hits that share its values; deleting the exclusion counts it again', async () => {
    const before = { rule: await current(), match: await matchNow() };
    const target = (await alice.hits(match.id, { filter: ['channel_username:golf_a', 'user_id:11'], sort: 'date' }))
      .results[0]!;
    expect(target.message_id).toBe(1);

    const response = await alice.createExclusion(rule.id, { field: 'hit_key', value: target.hit_key as string });
    expect(response.statusCode, response.body).toBe(201);
    const exclusion = response.json() as ExclusionView;
    expect(await current()).toMatchObject({ total_matches_count: before.rule.total_matches_count - 1 });
    expect(await matchNow()).toMatchObject({
      excluded_hits: before.match.excluded_hits + 1,
      new_hits: before.match.new_hits - 1,
    });
    const hits = await alice.hits(match.id, { filter: ['channel_username:golf_a'] });
    expect(hits.results.filter((h) => h.is_excluded).map((h) => h.message_id)).toEqual([1]);

    expect((await alice.deleteExclusion(exclusion.id)).statusCode).toBe(204);
    expect(await current()).toMatchObject({ total_matches_count: before.rule.total_matches_count });
    expect(await matchNow()).toMatchObject({ excluded_hits: before.match.excluded_hits });
  });

  it('unknown ids are 404', async () => {
    expectError(await alice.get(rulePaths.matches(999_999)), 404, 'not_found');
    expectError(await alice.get(rulePaths.hits(999_999)), 404, 'not_found');
    expectError(await alice.get(rulePaths.match(999_999)), 404, 'not_found');
    expectError(await alice.get(rulePaths.exclusions(999_999)), 404, 'not_found');
    expectError(await alice.createExclusion(999_999, { field: 'channel_username', value: 'x' }), 404, 'not_found');
    expectError(await alice.deleteExclusion(999_999), 404, 'not_found');
  });
});
