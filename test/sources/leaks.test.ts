import { copyFileSync, createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { sql } from 'kysely';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  ingestInto,
  payloadOf,
  requestsTo,
  rulePaths,
  rulesUser,
  SMTP_AUTH,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
  type RulesApi,
} from '../support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { startWebhookReceiver, verifyAlertSystemSignature, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The credential sources end to end: stealer logs (a folder and a .zip) and combolists are
 * ingested, filtered-leak and distinct-leak rules run on them, and their notifications arrive
 * by email and signed webhook. All credentials are made up here.
 */
const START = Date.parse('2026-04-01T09:00:00Z');
const DAY = 24 * HOUR;

const stealerPasswords = [
  '*****************************************',
  '*     Telegram: @fresh_logs_seller      *',
  '*****************************************',
  '',
  'URL: https://vpn.northbank-demo.com/remote/',
  'Username: staff.one@northbank-demo.com',
  'Password: Vpn-Staff-Pass-1',
  'Application: Google_[Chrome]_Default',
  '===============',
  'URL: https://vpn.northbank-demo.com/login',
  'Username: staff.one@northbank-demo.com',
  'Password: Vpn-Staff-Pass-1',
  'Application: Google_[Chrome]_Default',
  '===============',
  'URL: https://shop.northbank-demo.com/account/signin',
  'Username: customer.x@mailbox-demo.org',
  'Password: Customer-Pass-2',
  '===============',
  'URL: https://portal.northbank-demo.com/wp-admin/',
  'Username: admin',
  'Password: Admin-Pass-3',
  '===============',
  'URL: https://www.othersite-demo.net/login',
  'Username: staff.two@northbank-demo.com',
  'Password: Other-Site-Pass-4',
  '===============',
  'URL: https://vpn.northbank-demo.com/login',
  'Username: incomplete@northbank-demo.com',
  '',
].join('\n');

const systemInfo = [
  'Build ID: demo',
  'Country: DE',
  'Log date: 3/15/2026 10:20:30 AM',
  'Windows: Windows 10 Pro x64',
].join('\r\n');

const combolist = [
  'https://vpn.northbank-demo.com:8443/login:combo.staff@northbank-demo.com:Combo-Pass-5',
  'combo.mail@northbank-demo.com:Combo-Pass-6',
  'this line has no separator',
  'https://vpn.northbank-demo.com/login:only-two-parts',
  '',
  'hashed.user@northbank-demo.com:5f4dcc3b5aa765d61d8327deb882cf99',
].join('\n');

describe(`credential leak sources end to end (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let bob: RulesApi;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let kit: DeliveryKit;
  let dir: string;

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    t = await createRulesApp();
    t.clock.set(new Date(START));
    alice = await rulesUser(t, 'Northbank', 'alice@northbank.test');
    bob = await rulesUser(t, 'Other', 'bob@other.test');
    kit = await createDeliveryKit(alice, { tag: 'leaks', smtp, receiver });
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-leaks-'));
    const machine = path.join(dir, 'logs-2026-03', 'DE[4F2A]_2026_03_15');
    mkdirSync(machine, { recursive: true });
    writeFileSync(path.join(machine, 'Passwords.txt'), stealerPasswords);
    writeFileSync(path.join(machine, 'System.txt'), systemInfo);
    writeFileSync(path.join(dir, 'combo-northbank.txt'), combolist);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([smtp?.close(), receiver?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const moveTo = async (ms: number) => {
    t.clock.set(new Date(ms));
    await alice.relogin();
    await bob.relogin();
  };
  const mail = () => smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
  const allHits = async (matchId: number, query: Record<string, string> = {}) =>
    (await alice.hits(matchId, { page_size: 100, ...query })).results;

  it('ingests a stealer-log folder and a combolist, reporting bad blocks and lines by location; a second ingest adds nothing', async () => {
    const logs = await ingestInto(t, 'filtered_leak', [
      path.join(dir, 'logs-2026-03'),
      path.join(dir, 'combo-northbank.txt'),
    ]);
    expect(logs).toMatchObject({ inputs: 2, failed: 0, records: 8, added: 8, duplicates_skipped: 0, rejected: 3 });
    expect(logs.results[0]!.rejections).toEqual([
      { location: 'DE[4F2A]_2026_03_15/Passwords.txt line 27', reason: 'block without a password' },
    ]);
    expect(logs.results[1]!.rejections).toEqual([
      { location: 'combo-northbank.txt line 3', reason: 'no login:password separator' },
      { location: 'combo-northbank.txt line 4', reason: 'a URL line needs url:login:password' },
    ]);
    // A file is known by its content: ingested again (renamed, even) it is skipped whole.
    copyFileSync(path.join(dir, 'combo-northbank.txt'), path.join(dir, 'renamed-combo.txt'));
    const again = await ingestInto(t, 'filtered_leak', [
      path.join(dir, 'logs-2026-03'),
      path.join(dir, 'renamed-combo.txt'),
    ]);
    expect(again).toMatchObject({ records: 8, added: 0, duplicates_skipped: 8, rejected: 0 });
  });

  it('stores no password in clear', async () => {
    const db = t.container.store.db;
    const { rows } = await sql<{ text: string }>`select password_sealed as text from leak_credentials`.execute(db);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.text).toMatch(/^v1:/);
    const dump = JSON.stringify((await sql`select * from leak_credentials`.execute(db)).rows);
    expect(dump).not.toContain('Vpn-Staff-Pass-1');
  });

  it('rejects bad filter ids, filter parameters and targets with 400 naming the field', async () => {
    const body = (args: Record<string, unknown>) => sourceRule(kit, `bad ${JSON.stringify(args)}`, 3, args);
    const fieldsOf = async (args: Record<string, unknown>) => {
      const response = await alice.create(body(args));
      expect(response.statusCode, response.body).toBe(400);
      return (response.json() as { fields: { field: string }[] }).fields.map((f) => f.field);
    };
    expect(await fieldsOf({ domain_url: 'northbank-demo.com', filter_id: 9 })).toEqual(['args.filter_id']);
    expect(
      await fieldsOf({ domain_url: 'northbank-demo.com', filter_id: 2, filter_parameters: ['/login', 'has space'] }),
    ).toEqual(['args.filter_parameters[1]']);
    expect(
      await fieldsOf({ domain_url: 'northbank-demo.com', filter_id: 1, filter_parameters: ['/path-is-not-a-site'] }),
    ).toEqual(['args.filter_parameters[0]']);
    expect(await fieldsOf({ domain_url: 'not a domain', filter_id: 4 })).toEqual(['args.domain_url']);
  });

  it('a corporate-logins rule reports staff on the domain’s own login pages, by email and signed webhook, masked in store', async () => {
    await moveTo(START + HOUR);
    const rule = await alice.created(
      sourceRule(kit, 'northbank staff logins', 3, {
        domain_url: 'northbank-demo.com',
        filter_id: 2,
        filter_parameters: ['/login'],
      }),
    );
    const [match] = (await alice.matches(rule.id)).results;
    expect(match).toMatchObject({ status: 'complete', total_hits: 2, new_hits: 2 });
    const hits = await allHits(match!.id, { sort: 'email' });
    // The hits show the mask; the password itself comes one hit at a time, in the audit log.
    expect(hits.map((h) => [h.email, h.host, h.password])).toEqual([
      ['combo.staff@northbank-demo.com', 'vpn.northbank-demo.com', 'C****5'],
      ['staff.one@northbank-demo.com', 'vpn.northbank-demo.com', 'V****1'],
    ]);
    expect(JSON.stringify(hits)).not.toContain('Pass-');
    const reveal = (api: RulesApi, hitId: number) =>
      t.request({ method: 'POST', url: `/service/alert_system_match_hit_reveal/${hitId}/`, token: api.token });
    const revealed = await reveal(alice, hits[1]!.id);
    expect(revealed.statusCode, revealed.body).toBe(200);
    expect(revealed.json()).toEqual({ id: hits[1]!.id, match_id: match!.id, fields: { password: 'Vpn-Staff-Pass-1' } });
    expectError(await reveal(bob, hits[1]!.id), 404);
    const audit = await alice.getJson<{ results: { event: string; actor_email: string; details: object }[] }>(
      '/service/audit_log/?event=hit.revealed',
    );
    expect(audit.results).toEqual([
      expect.objectContaining({
        actor_email: 'alice@northbank.test',
        target_name: 'northbank staff logins',
        details: { match_id: match!.id, hit_id: hits[1]!.id, fields: 'password' },
      }),
    ]);
    expect(hits.find((h) => h.email === 'staff.one@northbank-demo.com')).toMatchObject({
      leak_name: 'logs-2026-03',
      leak_type: 'stealer_log',
      country: 'DE',
      os: 'Windows 10 Pro x64',
      software: 'Google_[Chrome]_Default',
      leaked_at: '2026-03-15T10:20:30.000Z',
      filter_id: 2,
    });
    // The stored hit keeps the password sealed; only the masked form is readable.
    const stored = await t.container.store.db
      .selectFrom('match_hits')
      .select('data')
      .where('match_id', '=', match!.id)
      .execute();
    expect(JSON.stringify(stored)).not.toContain('Vpn-Staff-Pass-1');

    await tickAndDeliver(t);
    expect(mail()).toHaveLength(1);
    const [request] = requestsTo(receiver, kit);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, request!.body, request!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(request!)).toMatchObject({
      alert_rule_name: 'northbank staff logins',
      total_matches: 2,
      excluded_matches: 0,
    });
    expect(JSON.stringify(mail()) + request!.body.toString()).not.toContain('Combo-Pass-5');

    // Another organization cannot read the match or its hits.
    expectError(await bob.get(rulePaths.hits(match!.id)), 404, 'not_found');
  });

  it('each filter selects its own credentials; hit fields filter, sort and exclude', async () => {
    const run = async (name: string, args: Record<string, unknown>) => {
      const rule = await alice.created(sourceRule(kit, name, 3, args));
      const [match] = (await alice.matches(rule.id)).results;
      return { rule, match, hits: match ? await allHits(match.id, { sort: 'email' }) : ([] as HitView[]) };
    };
    const logins = (hits: HitView[]) => hits.map((h) => h.email ?? h.username);
    expect(logins((await run('emails', { domain_url: 'northbank-demo.com', filter_id: 1 })).hits)).toEqual([
      'combo.mail@northbank-demo.com',
      'combo.staff@northbank-demo.com',
      'hashed.user@northbank-demo.com',
      'staff.one@northbank-demo.com',
      'staff.one@northbank-demo.com',
      'staff.two@northbank-demo.com',
    ]);
    expect(
      logins(
        (
          await run('emails on other sites', {
            domain_url: 'northbank-demo.com',
            filter_id: 1,
            filter_parameters: ['othersite-demo.net'],
          })
        ).hits,
      ),
    ).toEqual(['staff.two@northbank-demo.com']);
    expect(logins((await run('customers', { domain_url: 'northbank-demo.com', filter_id: 3 })).hits)).toEqual([
      'admin',
      'customer.x@mailbox-demo.org',
    ]);
    expect(
      logins((await run('admin panels', { domain_url: 'https://portal.northbank-demo.com', filter_id: 5 })).hits),
    ).toEqual(['admin']);
    const all = await run('all site credentials', { domain_url: 'northbank-demo.com', filter_id: 4 });
    expect(all.hits).toHaveLength(5);
    expect(logins(await allHits(all.match!.id, { filter: 'url_kind:admin' }))).toEqual(['admin']);
    expect((await allHits(all.match!.id, { sort: '-host' })).map((h) => h.host)).toEqual([
      'vpn.northbank-demo.com',
      'vpn.northbank-demo.com',
      'vpn.northbank-demo.com',
      'shop.northbank-demo.com',
      'portal.northbank-demo.com',
    ]);
    const excluded = await alice.createExclusion(all.rule.id, { field: 'host', value: 'VPN.northbank-demo.com' });
    expect(excluded.statusCode, excluded.body).toBe(201);
    expect(await alice.getJson(rulePaths.match(all.match!.id))).toMatchObject({
      total_hits: 5,
      excluded_hits: 3,
      new_hits: 2,
    });
  });

  it('distinct leak: one row per credential, reported when first known; a re-sighting in another leak raises occurrences only', async () => {
    const rule = await alice.created(
      sourceRule(kit, 'northbank distinct', 5, { query: 'northbank-demo.com', query_type: 'domain' }),
    );
    const [first] = (await alice.matches(rule.id)).results;
    const hits = await allHits(first!.id, { sort: 'login' });
    // staff.one's two sightings (two pages of the VPN) are one credential; the hashed one is left out.
    expect(hits.map((h) => [h.login, h.occurrences])).toEqual([
      ['admin', 1],
      ['combo.mail@northbank-demo.com', 1],
      ['combo.staff@northbank-demo.com', 1],
      ['customer.x@mailbox-demo.org', 1],
      ['staff.one@northbank-demo.com', 1],
      ['staff.two@northbank-demo.com', 1],
    ]);
    const withHashes = await alice.created(
      sourceRule(kit, 'northbank distinct with hashes', 5, {
        query: 'northbank-demo.com',
        query_type: 'domain',
        include_hashed: true,
      }),
    );
    const hashed = await allHits((await alice.matches(withHashes.id)).results[0]!.id, { filter: 'password_type:hash' });
    expect(hashed.map((h) => [h.login, h.hash_type])).toEqual([['hashed.user@northbank-demo.com', 'md5']]);

    // Days later the same logs arrive again, zipped under another name, with one new machine.
    await moveTo(START + 4 * DAY);
    const zipPath = path.join(dir, 'resold-logs.zip');
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(stealerPasswords), 'DE[4F2A]_2026_03_15/Passwords.txt');
    zip.addBuffer(Buffer.from(systemInfo), 'DE[4F2A]_2026_03_15/System.txt');
    zip.addBuffer(
      Buffer.from(
        'URL: https://vpn.northbank-demo.com/login\nLogin: new.staff@northbank-demo.com\nPassword: New-Pass-7\n',
      ),
      'US[99]/passwords.txt',
    );
    zip.end();
    const out = createWriteStream(zipPath);
    zip.outputStream.pipe(out);
    await once(out, 'close');
    const resold = await ingestInto(t, 'filtered_leak', [zipPath]);
    expect(resold).toMatchObject({ failed: 0, records: 6, added: 6, rejected: 1 });

    await tickAndDeliver(t, new Date(START + 4 * DAY));
    const matches = (await alice.matches(rule.id)).results;
    expect(matches).toHaveLength(2);
    expect((await allHits(matches[0]!.id)).map((h) => [h.login, h.occurrences])).toEqual([
      ['new.staff@northbank-demo.com', 1],
    ]);
    // A rule made now sees the re-sighting: staff.one's credential is in two leak files.
    const later = await alice.created(
      sourceRule(kit, 'northbank distinct later', 5, { query: 'staff.one@northbank-demo.com', query_type: 'email' }),
    );
    const [seen] = (await alice.matches(later.id)).results;
    expect((await allHits(seen!.id)).map((h) => [h.login, h.occurrences, h.first_seen, h.last_seen])).toEqual([
      ['staff.one@northbank-demo.com', 2, new Date(START).toISOString(), new Date(START + 4 * DAY).toISOString()],
    ]);
  });
});
