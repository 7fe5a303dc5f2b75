import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import { ingestInto, rulesUser, withQuery, type RulesApi } from '../support/rules-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/** The quick searches over the credential store (docs/api.md "Quick searches"), with their spec 8.1 limits. */
const paths = {
  domain: '/service/domain_quick_search/',
  email: '/service/email_quick_search/',
  accounts: '/service/accounts_database_search/',
  capacity: '/service/live_search_capacity/',
};

const combolist = [
  'https://vpn.quickbank-demo.com/login:staff@quickbank-demo.com:Staff-Pass-1',
  'https://shop.quickbank-demo.com/account:buyer@mail-demo.org:Buyer-Pass-2',
  'https://portal.quickbank-demo.com/wp-admin/:admin:Admin-Pass-3',
  'https://social-demo.net/login:staff@quickbank-demo.com:Staff-Pass-1',
  'other@elsewhere-demo.com:x12345',
].join('\n');

describe(`quick searches (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let dir: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'on' } });
    alice = await rulesUser(t, 'Quickbank', 'alice@quickbank.test');
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-quick-'));
    writeFileSync(path.join(dir, 'quick-combo.txt'), combolist);
    const logs = path.join(dir, 'logs', 'PL[1]');
    mkdirSync(logs, { recursive: true });
    writeFileSync(
      path.join(logs, 'Passwords.txt'),
      'URL: https://vpn.quickbank-demo.com/login\nUSER: staff@quickbank-demo.com\nPASS: Staff-Pass-1\n',
    );
    await ingestInto(t, 'filtered_leak', [path.join(dir, 'quick-combo.txt'), path.join(dir, 'logs')]);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('domain_quick_search: counts by source, leak type and filter, and the newest sightings with masked passwords', async () => {
    const response = await alice.get(withQuery(paths.domain, { domain: 'https://VPN.quickbank-demo.com/login' }));
    expect(response.statusCode, response.body).toBe(200);
    const report = response.json();
    expect(report).toMatchObject({
      domain: 'quickbank-demo.com',
      total_sightings: 5,
      distinct_credentials: 4,
      by_source: [
        { source: 'filtered_leak', count: 5 },
        { source: 'distinct_leak', count: 4 },
      ],
      by_leak_type: [
        { leak_type: 'combolist', sightings: 4, leaks: 1 },
        { leak_type: 'stealer_log', sightings: 1, leaks: 1 },
      ],
      by_filter: [
        { filter_id: 1, name: 'employee_emails', count: 3 },
        { filter_id: 2, name: 'corporate_logins', count: 2 },
        { filter_id: 3, name: 'customer_accounts', count: 2 },
        { filter_id: 4, name: 'all_site_credentials', count: 4 },
        { filter_id: 5, name: 'admin_panels', count: 1 },
      ],
    });
    expect(report.newest).toHaveLength(5);
    expect(JSON.stringify(report)).not.toContain('Staff-Pass-1');
    expect(report.newest.map((s: { password: string }) => s.password)).toContain('S****1');
    expect(response.headers['x-ratelimit-limit']).toBe('100');
    expectError(await alice.get(withQuery(paths.domain, { domain: 'not a domain' })), 400, 'validation_failed');
  });

  it('email_quick_search: the leaks, the sites and the sightings of one address', async () => {
    const report = await alice.getJson<{
      total_sightings: number;
      leaks: { leak_name: string; sightings: number }[];
      sites: { host: string; sightings: number }[];
    }>(withQuery(paths.email, { email: 'Staff@QuickBank-demo.com' }));
    expect(report.total_sightings).toBe(3);
    expect(report.leaks.map((l) => [l.leak_name, l.sightings]).sort()).toEqual([
      ['logs', 1],
      ['quick-combo.txt', 2],
    ]);
    expect(report.sites).toEqual([
      { host: 'vpn.quickbank-demo.com', sightings: 2 },
      { host: 'social-demo.net', sightings: 1 },
    ]);
    const bad = expectError(await alice.get(withQuery(paths.email, { email: 'nobody' })), 400, 'validation_failed');
    expect(bad.fields?.[0]?.field).toBe('email');
  });

  it('accounts_database_search: fields combine, pages link, a SHA-1 range finds a password without naming it', async () => {
    const byDomain = await alice.getJson<{
      count: number;
      next: string | null;
      results: { login: string; password: string; occurrences: number }[];
    }>(withQuery(paths.accounts, { domain: 'quickbank-demo.com', page_size: 2 }));
    expect(byDomain.count).toBe(4);
    expect(byDomain.results).toHaveLength(2);
    expect(byDomain.next).toContain('domain=quickbank-demo.com');
    const prefix = createHash('sha1').update('Staff-Pass-1').digest('hex').slice(0, 5).toUpperCase();
    const byHash = await alice.getJson<{
      count: number;
      results: { login: string; domain: string; occurrences: number }[];
    }>(withQuery(paths.accounts, { password_sha1_prefix: prefix }));
    expect(byHash.results.map((r) => [r.login, r.domain, r.occurrences]).sort()).toEqual([
      ['staff@quickbank-demo.com', 'quickbank-demo.com', 2],
      ['staff@quickbank-demo.com', 'social-demo.net', 1],
    ]);
    const byUrl = await alice.getJson<{ count: number }>(
      withQuery(paths.accounts, { url: 'WP-ADMIN', login: 'admin' }),
    );
    expect(byUrl.count).toBe(1);
    expectError(await alice.get(paths.accounts), 400, 'validation_failed');
    expectError(await alice.get(withQuery(paths.accounts, { password_sha1_prefix: 'xyz' })), 400, 'validation_failed');
  });

  it('live_search_capacity: remaining quota of each quick search and the background load', async () => {
    const capacity = await alice.getJson<{
      services: {
        service_slug: string;
        limits: { period: string; limit: number; used: number; remaining: number }[];
      }[];
      load: Record<string, number>;
    }>(paths.capacity);
    const domain = capacity.services.find((s) => s.service_slug === 'domain_quick_search')!;
    // One successful domain search so far; the 400 was refunded (spec 7).
    expect(domain.limits).toEqual([expect.objectContaining({ period: '1 Day', limit: 100, used: 1, remaining: 99 })]);
    expect(capacity.services.find((s) => s.service_slug === 'accounts_database_search')!.limits[0]).toMatchObject({
      limit: 10_000,
    });
    expect(capacity.load).toEqual({ queued_jobs: 0, running_jobs: 0, pending_matches: 0 });
  });

  it('needs a token', async () => {
    for (const url of Object.values(paths)) expectError(await t.request({ method: 'GET', url }), 401, 'unauthorized');
  });
});
