import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  ingestInto,
  payloadOf,
  requestsTo,
  rulesApi,
  rulesUser,
  SMTP_AUTH,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type RulesApi,
} from '../support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { startWebhookReceiver, verifyAlertSystemSignature, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { scaled } from '../support/wait.ts';

/**
 * The raw leak extended search end to end: raw files are stored whole, a rule's run is a
 * background job that scans them (surviving a restart of the process), fills the match, and
 * notifies. The CLI ingests files and reports binary ones.
 */
const START = Date.parse('2026-05-01T09:00:00Z');

const combo = [
  'j.doe@rawbank-demo.com:Secret123',
  'someone@else-demo.org:x1',
  'https://vpn.rawbank-demo.com/login:admin:Adm1nPass',
  'notrawbank-demo.com:zz',
].join('\n');
const sqlDump = "INSERT INTO `users` VALUES (1,'m.roe@rawbank-demo.com','hash','2025-11-02');\n";

describe(`raw leak extended search end to end (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let alice: RulesApi;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let kit: DeliveryKit;
  let dir: string;

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    t.clock.set(new Date(START));
    alice = await rulesUser(t, 'Rawbank', 'alice@rawbank.test');
    kit = await createDeliveryKit(alice, { tag: 'raw', smtp, receiver });
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-raw-'));
    writeFileSync(path.join(dir, 'combo.txt'), combo);
    writeFileSync(path.join(dir, 'shop-users.sql'), sqlDump);
    writeFileSync(path.join(dir, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x0a, 0x00]));
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await Promise.all([smtp?.close(), receiver?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores text files whole, once; binary files are rejected', async () => {
    const first = await ingestInto(t, 'raw_leak_extended', [dir]);
    expect(first).toMatchObject({ inputs: 3, failed: 0, records: 7, added: 5, rejected: 1 });
    expect(first.results.find((r) => r.input.endsWith('image.bin'))!.rejections).toEqual([
      { location: path.join(dir, 'image.bin'), reason: 'binary file (NUL bytes): not a text leak' },
    ]);
    const again = await ingestInto(t, 'raw_leak_extended', [path.join(dir, 'combo.txt')]);
    expect(again).toMatchObject({ added: 0, duplicates_skipped: 4 });
    expect(readdirSync(path.join(location.dataDir, 'raw-leaks')).filter((name) => !name.startsWith('.'))).toHaveLength(
      2,
    );
  });

  it('a run is a background job: pending first, then the scan fills the match, notifies, and survives a restart', async () => {
    t.clock.set(new Date(START + HOUR));
    await alice.relogin();
    const rule = await alice.created(
      sourceRule(kit, 'rawbank raw', 4, { query: 'rawbank-demo.com', term_type: 'domain' }),
    );
    const [pending] = (await alice.matches(rule.id)).results;
    expect(pending).toMatchObject({ status: 'pending', total_hits: 0 });
    expect(pending!.progress).toBeUndefined();

    // The process stops before any worker ran the job; a new one on the same store finishes it.
    await t.close();
    t = await createRulesApp({ location, clock: t.clock });
    alice = rulesApi(t, (await t.login('alice@rawbank.test')).access, alice.orgId, alice.userId, 'alice@rawbank.test');
    const ticked = await tickAndDeliver(t);
    expect(ticked.jobs).toBe(1);
    const [done] = (await alice.matches(rule.id)).results;
    expect(done).toMatchObject({ id: pending!.id, status: 'complete', total_hits: 3, new_hits: 3 });
    expect(done!.progress).toEqual({ done: 208, total: 208, unit: 'bytes' });
    const hits = (await alice.hits(done!.id, { sort: 'line_number', page_size: 10 })).results;
    expect(hits.map((h) => [h.leak_name, h.line_number, h.line])).toEqual([
      // Equal line numbers keep the scan's order: the newest file first.
      ['shop-users.sql', 1, "INSERT INTO `users` VALUES (1,'m.roe@rawbank-demo.com','hash','2025-11-02');"],
      ['combo.txt', 1, 'j.doe@rawbank-demo.com:S****3'],
      ['combo.txt', 3, 'https://vpn.rawbank-demo.com/login:admin:A****s'],
    ]);
    expect(smtp.messages.filter((m) => m.to.includes(kit.recipient.email))).toHaveLength(1);
    const [request] = requestsTo(receiver, kit);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, request!.body, request!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(request!)).toMatchObject({ alert_rule_name: 'rawbank raw', total_matches: 3 });
  });

  it('file types and case sensitivity narrow the scan; a short term is refused', async () => {
    const only = await alice.created(
      sourceRule(kit, 'rawbank sql only', 4, { query: 'RAWBANK-DEMO.COM', file_types: ['sql'] }),
    );
    await tickAndDeliver(t);
    expect((await alice.matches(only.id)).results[0]).toMatchObject({ status: 'complete', total_hits: 1 });
    const exact = await alice.created(
      sourceRule(kit, 'rawbank exact case', 4, { query: 'RAWBANK-DEMO.COM', case_sensitive: true }),
    );
    await tickAndDeliver(t);
    // Nothing matched: the pending match of an empty run is removed (spec 3.3.4).
    expect((await alice.matches(exact.id)).results).toEqual([]);
    const short = await alice.create(sourceRule(kit, 'too short', 4, { query: 'ab' }));
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({ fields: [{ field: 'args.query' }] });
  });
});

describe('dragnet ingest for the leak sources', () => {
  let location: TestStoreLocation;
  let dir: string;
  beforeAll(async () => {
    location = await createTestStoreLocation();
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-leak-cli-'));
  });
  afterAll(async () => {
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'lists the targets, ingests combolists with per-line rejections, and refuses unknown targets and formats',
    async () => {
      const file = path.join(dir, 'combo.txt');
      writeFileSync(file, 'a@clibank-demo.com:pw1\nbroken line\nb@clibank-demo.com:pw2\n');
      const help = await runCli(['ingest', '--help'], { env: location.env });
      for (const target of ['messenger', 'filtered_leak', 'raw_leak_extended']) expect(help.stdout).toContain(target);
      const ingested = await runCli(['ingest', 'filtered_leak', file], { env: location.env });
      expect(ingested.code, ingested.stderr).toBe(0);
      expect(ingested.stdout).toContain(
        '1 inputs (0 failed): 2 credentials read, 2 added, 0 duplicates skipped, 1 rejected',
      );
      expect(ingested.stdout).toMatch(/rejected .*combo\.txt combo\.txt line 2: no login:password separator/);
      const json = await runCli(['--json', 'ingest', 'filtered_leak', file], { env: location.env });
      expect(JSON.parse(json.stdout)).toMatchObject({ records: 2, added: 0, duplicates_skipped: 2, rejected: 0 });
      const stdin = await runCli(['--json', 'ingest', 'raw_leak_extended', '-'], {
        env: location.env,
        input: 'x@clibank-demo.com:pw\n',
      });
      expect(JSON.parse(stdin.stdout)).toMatchObject({ records: 1, added: 1, files_added: 1 });
      const unknown = await runCli(['ingest', 'nosuch', file], { env: location.env });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('unknown ingest target nosuch');
      const format = await runCli(['ingest', 'filtered_leak', '--format', 'xml', file], { env: location.env });
      expect(format.stderr).toContain('--format must be one of: auto, combolist, stealer_log');
      const missing = await runCli(['ingest', 'filtered_leak', path.join(dir, 'nope.txt')], { env: location.env });
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain('no such file or folder');
    },
    scaled(120_000),
  );
});
