import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  runsOf,
  SMTP_AUTH,
  tickAndDeliver,
  writeCorpus,
  type DeliveryKit,
  type MatchView,
  type RulesApi,
} from '../support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { startWebhookReceiver, verifyAlertSystemSignature, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Every test starts at its own hour (a month apart) and uses its own query terms, delivery kit
 * and webhook path, so the rules of one test never see the data or deliveries of another even
 * though every tick evaluates all rules of the store.
 */
const START = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const base = (test: number) => START + test * 30 * DAY;

describe(`rules: runs, schedule and notifications end to end (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let n = 0;
  /** A dashboard build of one page, so the links' pages are served as they are in production. */
  let dashboardDir: string | undefined;
  const DASHBOARD_SHELL = 'Dragnet dashboard shell';

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    dashboardDir = mkdtempSync(path.join(tmpdir(), 'dragnet-dashboard-'));
    writeFileSync(path.join(dashboardDir, 'index.html'), `<!doctype html><title>${DASHBOARD_SHELL}</title>`);
    t = await createRulesApp({ env: { DRAGNET_DASHBOARD_DIR: dashboardDir } });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([smtp?.close(), receiver?.close()]);
    if (dashboardDir) rmSync(dashboardDir, { recursive: true, force: true });
  });

  const newKit = (extra: { webhookHeaders?: Record<string, string> } = {}) =>
    createDeliveryKit(alice, { tag: `k${++n}`, smtp, receiver, ...extra });
  const mailTo = (kit: DeliveryKit) => smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
  const matchesOf = async (ruleId: number) => (await alice.matches(ruleId, { page_size: 100 })).results;
  const hitIds = async (matchId: number) =>
    (await alice.hits(matchId, { page_size: 100, sort: 'date' })).results.map((h) => h.message_id);
  const rule = async (id: number) => (await alice.find(id))!;
  /** Moves the manual clock and logs in again (tokens live 24 hours). */
  const moveTo = async (ms: number) => {
    t.clock.set(new Date(ms));
    await alice.relogin();
  };

  it('create answers 201 with the full rule after its first run; the notification arrives by webhook and by email', async () => {
    await moveTo(base(0));
    const at = base(0);
    await writeCorpus(t, [
      channel('leaks_a', [
        message(101, 'fresh logs for alpha-bank.com, 200 accounts', { date: at - 2 * HOUR, userId: 7 }),
        message(102, 'ALPHA-BANK.COM combo list', { date: at - HOUR, userId: 8 }),
        message(103, 'nothing to see here', { date: at - HOUR }),
        // Dated after the creation time: not in the first run's window.
        message(104, 'alpha-bank.com from the future', { date: at + HOUR }),
      ]),
      channel('leaks_b', [
        message(201, 'alpha-bank.com vpn access for sale', {
          date: at - 3 * HOUR,
          userId: 9,
          hasMedia: true,
          mediaType: 'document',
          fileName: 'vpn.txt',
        }),
      ]),
    ]);
    const kit = await newKit({ webhookHeaders: { 'X-Team': 'soc' } });

    const response = await alice.create(messengerRule(kit, 'Alpha bank watch', 'alpha-bank.com'));
    expect(response.statusCode, response.body).toBe(201);
    const created = response.json();
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Alpha bank watch',
      service: 1,
      args: { query: 'alpha-bank.com' },
      sender: kit.sender!.id,
      email_template: kit.template.id,
      recipients: [kit.recipient.id],
      webhook: kit.webhook!.id,
      siem_targets: [],
      frequency: 'daily',
      tlp: 'amber',
      total_alerts_count: 1,
      total_matches_count: 3,
      created_at: iso(at),
      updated_at: iso(at),
      last_run: iso(at),
      is_deleted: false,
      deleted_at: null,
      deleted_by: null,
      deletion_snapshot: null,
    });

    const matches = await matchesOf(created.id);
    expect(matches).toEqual([
      {
        id: expect.any(Number),
        rule_id: created.id,
        status: 'complete',
        total_hits: 3,
        stored_hits: 3,
        excluded_hits: 0,
        new_hits: 3,
        window_start: null,
        window_end: iso(at),
        created_at: iso(at),
        completed_at: iso(at),
      },
    ]);
    const match = matches[0]!;
    expect(await hitIds(match.id)).toEqual([201, 101, 102]);

    // The notification is in the outbox; the dispatcher delivers it to both channels.
    expect((await notificationsOf(t, created.id)).map((row) => [row.channel, row.status]).sort()).toEqual([
      ['email', 'pending'],
      ['webhook', 'pending'],
    ]);
    expect(await deliverPending(t)).toBe(2);

    const hooks = requestsTo(receiver, kit);
    expect(hooks).toHaveLength(1);
    const hook = hooks[0]!;
    expect(hook.method).toBe('POST');
    expect(hook.headers['content-type']).toMatch(/^application\/json/);
    expect(hook.headers['user-agent']).toBe('AlertSystem/1.0');
    expect(hook.headers['x-team']).toBe('soc');
    expect(verifyAlertSystemSignature(kit.webhook!.secret, hook.body, hook.headers['x-alertsystem-signature'])).toBe(
      true,
    );
    expect(payloadOf(hook)).toEqual({
      alert_rule_name: 'Alpha bank watch',
      service: 'Messenger channels',
      total_matches: 3,
      excluded_matches: 0,
      results_url: `https://dashboard.dragnet.test${rulePaths.matchLink(match.id, alice.orgId)}`,
      timestamp: '2026-03-10T09:00:00.000+00:00',
    });

    const mails = mailTo(kit);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.from).toBe(kit.sender!.email);
    expect(mail.to).toEqual([kit.recipient.email]);
    expect(mail.user).toBe(SMTP_AUTH.user);
    expect(mail.secureAtMailFrom).toBe(true);
    expect(mail.parsed.subject).toBe(`Alert Alpha bank watch (template ${kit.recipient.email.slice(4, -10)})`);
    expect(mail.parsed.html).toContain('Alpha bank watch: 3 hits in Messenger channels on 2026-03-10.');
    expect(mail.parsed.html).toContain(`https://dashboard.dragnet.test${rulePaths.matchLink(match.id, alice.orgId)}`);

    // Both deliveries are recorded against the rule and the match.
    const attempts = await alice.delivery.attempts({ rule_id: created.id });
    expect(attempts.results.map((a) => [a.channel, a.status, a.purpose, a.match_id]).sort()).toEqual([
      ['email', 'success', 'notification', match.id],
      ['webhook', 'success', 'notification', match.id],
    ]);
    expect((await notificationsOf(t, created.id)).map((row) => row.status)).toEqual(['sent', 'sent']);

    // A browser opening the link gets the dashboard's incident page (which asks to sign in), with
    // no token; a link of the earlier /matches/<id> form too (the dashboard sends it on).
    for (const link of [rulePaths.matchLink(match.id, alice.orgId), `/incidents/${match.id}`, `/matches/${match.id}`]) {
      const page = await t.request({
        method: 'GET',
        url: link,
        headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      });
      expect(page.statusCode, link).toBe(200);
      expect(page.headers['content-type'], link).toMatch(/^text\/html/);
      expect(page.body, link).toContain(DASHBOARD_SHELL);
    }

    // Nothing is sent twice.
    expect(await deliverPending(t)).toBe(0);
    expect(requestsTo(receiver, kit)).toHaveLength(1);
    expect(mailTo(kit)).toHaveLength(1);

    // The next run (a day later) reports only the new hit (the message dated after creation).
    const report = await tickAndDeliver(t, new Date(at + DAY));
    expect(report.notifications).toBeGreaterThanOrEqual(2);
    const [second] = await matchesOf(created.id);
    expect(second).toMatchObject({ total_hits: 1, window_start: iso(at), window_end: iso(at + DAY) });
    expect(await hitIds(second!.id)).toEqual([104]);
    expect(payloadOf(requestsTo(receiver, kit)[1]!)).toMatchObject({
      total_matches: 1,
      excluded_matches: 0,
      results_url: `https://dashboard.dragnet.test${rulePaths.matchLink(second!.id, alice.orgId)}`,
    });
    expect(mailTo(kit)).toHaveLength(2);
    expect(await rule(created.id)).toMatchObject({
      total_matches_count: 4,
      total_alerts_count: 2,
      last_run: iso(at + DAY),
    });
  });

  it('effective frequency: a weekly messenger rule is not due after 24 h but is after 168 h', async () => {
    const at = base(1);
    await moveTo(at);
    const kit = await newKit();
    const dailyKit = await newKit();
    const weekly = await alice.created(messengerRule(kit, 'Bravo weekly', 'bravo-bank.com', { frequency: 'weekly' }));
    const daily = await alice.created(messengerRule(dailyKit, 'Bravo daily', 'bravo-bank.com'));
    expect(weekly).toMatchObject({ frequency: 'weekly', last_run: iso(at), total_matches_count: 0 });
    await writeCorpus(t, [channel('bravo_leaks', [message(1, 'bravo-bank.com database dump', { date: at + HOUR })])]);

    await moveTo(at + DAY);
    await tickAndDeliver(t, t.clock.now());
    expect(await rule(daily.id)).toMatchObject({ last_run: iso(at + DAY), total_matches_count: 1 });
    expect(requestsTo(receiver, dailyKit)).toHaveLength(1);
    expect(await rule(weekly.id)).toMatchObject({ last_run: iso(at), total_matches_count: 0 });
    expect(await matchesOf(weekly.id)).toEqual([]);

    await moveTo(at + 167 * HOUR);
    await tickAndDeliver(t, t.clock.now());
    expect((await rule(weekly.id)).last_run).toBe(iso(at));
    expect(requestsTo(receiver, kit)).toHaveLength(0);

    await moveTo(at + 168 * HOUR);
    await tickAndDeliver(t, t.clock.now());
    expect(await rule(weekly.id)).toMatchObject({
      last_run: iso(at + 168 * HOUR),
      total_matches_count: 1,
      total_alerts_count: 1,
    });
    expect(await matchesOf(weekly.id)).toEqual([
      expect.objectContaining({ total_hits: 1, window_start: iso(at), window_end: iso(at + 168 * HOUR) }),
    ]);
    expect(requestsTo(receiver, kit)).toHaveLength(1);
    expect(mailTo(kit)).toHaveLength(1);
    // The daily rule ran at 167 h (143 h after its last run; not again an hour later) and
    // found nothing new after its first hit.
    expect(await rule(daily.id)).toMatchObject({
      last_run: iso(at + 167 * HOUR),
      total_matches_count: 1,
      total_alerts_count: 1,
    });
    expect(requestsTo(receiver, dailyKit)).toHaveLength(1);
  });

  it('evaluation is hourly: a rule created mid-hour is due at the first hour at least 24 h later', async () => {
    const at = base(2) + 30 * 60_000;
    await moveTo(at);
    const kit = await newKit();
    const created = await alice.created(messengerRule(kit, 'Charlie', 'charlie-bank.com'));
    expect(created.last_run).toBe(iso(at));
    // At 24 h 30 min the hourly window ends at 24 h after the top of the creation hour: 23.5 h.
    await tickAndDeliver(t, new Date(at + DAY));
    expect((await rule(created.id)).last_run).toBe(iso(at));
    await tickAndDeliver(t, new Date(at + DAY + 30 * 60_000));
    expect((await rule(created.id)).last_run).toBe(iso(at + DAY + 30 * 60_000));
  });

  it('window edges: a hit exactly at last_run is not new, one 1 ms later is; the window end belongs to its window', async () => {
    const at = base(3);
    await moveTo(at);
    const kit = await newKit();
    const created = await alice.created(messengerRule(kit, 'Delta edges', 'delta-bank.com'));
    expect(created).toMatchObject({ last_run: iso(at), total_matches_count: 0 });
    await writeCorpus(t, [
      channel('delta_leaks', [
        message(1, 'delta-bank.com at last_run', { date: at }),
        message(2, 'delta-bank.com one ms later', { date: at + 1 }),
        message(3, 'delta-bank.com at the window end', { date: at + DAY }),
        message(4, 'delta-bank.com just after the window end', { date: at + DAY + 1 }),
      ]),
    ]);

    await tickAndDeliver(t, new Date(at + DAY));
    const [first] = await matchesOf(created.id);
    expect(first).toMatchObject({ total_hits: 2, window_start: iso(at), window_end: iso(at + DAY) });
    expect(await hitIds(first!.id)).toEqual([2, 3]);

    await tickAndDeliver(t, new Date(at + 2 * DAY));
    const list = await matchesOf(created.id);
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ total_hits: 1, window_start: iso(at + DAY), window_end: iso(at + 2 * DAY) });
    expect(await hitIds(list[0]!.id)).toEqual([4]);
    expect(await rule(created.id)).toMatchObject({ total_matches_count: 3, total_alerts_count: 2 });
    expect(requestsTo(receiver, kit).map((r) => payloadOf(r).total_matches)).toEqual([2, 1]);
  });

  it('an empty run only advances last_run: no match, no notification, no delivery attempt', async () => {
    const at = base(4);
    await moveTo(at);
    const kit = await newKit();
    // Matching text, but dated before the rule existed and loaded only after its first run.
    const created = await alice.created(messengerRule(kit, 'Echo quiet', 'echo-bank.com'));
    expect(created).toMatchObject({ last_run: iso(at), total_matches_count: 0, total_alerts_count: 0 });
    await writeCorpus(t, [channel('echo_old', [message(1, 'echo-bank.com old news', { date: at - DAY })])]);

    await tickAndDeliver(t, new Date(at + DAY));
    expect(await rule(created.id)).toMatchObject({
      last_run: iso(at + DAY),
      total_matches_count: 0,
      total_alerts_count: 0,
    });
    expect(await matchesOf(created.id)).toEqual([]);
    expect(await notificationsOf(t, created.id)).toEqual([]);
    expect((await alice.delivery.attempts({ rule_id: created.id })).results).toEqual([]);
    expect(requestsTo(receiver, kit)).toEqual([]);
    expect(mailTo(kit)).toEqual([]);
    expect((await runsOf(t, created.id)).map((run) => run.status)).toEqual(['empty', 'empty']);

    // A source without data today (phishing) behaves the same from its first run on.
    const phishing = await alice.created({
      ...messengerRule(kit, 'Echo phishing', 'x'),
      service: 8,
      args: { domain: 'echo-bank.com' },
    });
    expect(phishing).toMatchObject({ service: 8, last_run: iso(at), total_matches_count: 0 });
    await tickAndDeliver(t, new Date(at + 2 * DAY));
    expect((await rule(phishing.id)).last_run).toBe(iso(at + 2 * DAY));
    expect(await matchesOf(phishing.id)).toEqual([]);
    expect(requestsTo(receiver, kit)).toEqual([]);
  });

  it('an async source (raw leak extended search) runs through the job queue: pending match until the job completes', async () => {
    const at = base(5);
    await moveTo(at);
    const kit = await newKit();
    const db = t.container.store.db;
    const body = {
      ...messengerRule(kit, 'Foxtrot raw scan', 'x'),
      service: 4,
      args: { query: 'foxtrot-bank.com', term_type: 'domain' },
      frequency: 'weekly',
    };
    const created = await alice.created(body);
    expect(created).toMatchObject({ service: 4, last_run: iso(at), total_matches_count: 0, total_alerts_count: 0 });

    // The run is claimed and its match is pending; a job is queued to fill it.
    const pending = await matchesOf(created.id);
    expect(pending).toEqual([
      expect.objectContaining({
        status: 'pending',
        window_start: null,
        window_end: iso(at),
        completed_at: null,
        total_hits: 0,
      }),
    ]);
    expect(await alice.getJson<MatchView>(rulePaths.match(pending[0]!.id))).toMatchObject({ status: 'pending' });
    expect((await runsOf(t, created.id)).map((run) => run.status)).toEqual(['pending']);
    const jobsBefore = await db.selectFrom('jobs').selectAll().where('type', '=', 'rules.complete-async-run').execute();
    const job = jobsBefore.find((row) => JSON.parse(row.payload).matchId === pending[0]!.id)!;
    expect(job).toMatchObject({ status: 'queued' });

    expect(await t.container.jobs.runDue()).toBe(1);
    expect(await t.container.jobs.runDue()).toBe(0);
    // The source has no data: the job finds nothing, the match goes, the run is empty.
    expect(await matchesOf(created.id)).toEqual([]);
    expectError(await alice.get(rulePaths.match(pending[0]!.id)), 404, 'not_found');
    expect((await runsOf(t, created.id)).map((run) => run.status)).toEqual(['empty']);
    expect(
      await db
        .selectFrom('jobs')
        .select(['status', 'error', 'attempts'])
        .where('id', '=', job.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: 'done', error: null, attempts: 1 });
    expect(await rule(created.id)).toMatchObject({ last_run: iso(at), total_matches_count: 0, total_alerts_count: 0 });
    expect(await notificationsOf(t, created.id)).toEqual([]);
    expect(requestsTo(receiver, kit)).toEqual([]);

    // Weekly: not due a day later; due a week later, through the queue again.
    await t.container.runner.tick(new Date(at + DAY));
    expect(await runsOf(t, created.id)).toHaveLength(1);
    await t.container.runner.tick(new Date(at + 7 * DAY));
    expect(await matchesOf(created.id)).toEqual([
      expect.objectContaining({ status: 'pending', window_start: iso(at), window_end: iso(at + 7 * DAY) }),
    ]);
    expect((await rule(created.id)).last_run).toBe(iso(at + 7 * DAY));
    const report = await tickAndDeliver(t, new Date(at + 7 * DAY));
    expect(report.jobs).toBe(1);
    expect(await matchesOf(created.id)).toEqual([]);
    expect((await runsOf(t, created.id)).map((run) => run.status)).toEqual(['empty', 'empty']);
    expect(requestsTo(receiver, kit)).toEqual([]);
  });
});
