import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import { postSearch } from '../support/messenger-search.ts';
import {
  createDeliveryKit,
  ingestInto,
  messengerRule,
  rulesApi,
  withQuery,
  type RulesApi,
} from '../support/rules-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

// PostgreSQL's statement_timeout; SQLite has no statement timeout to set.
describe.skipIf(testEngine !== 'postgres')('PostgreSQL statement timeouts of searches and rule runs', () => {
  let t: TestApp;
  let token: string;
  let alice: RulesApi;
  let dir: string | undefined;

  beforeAll(async () => {
    // 1 ms: no search or rule run of a few thousand messages finishes in time.
    t = await createTestApp({
      env: { DRAGNET_SEARCH_TIMEOUT_MS: '1', DRAGNET_RULE_RUN_TIMEOUT_MS: '1', DRAGNET_RATE_LIMITS: 'off' },
    });
    const user = await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    token = (await t.login('alice@acme.test')).access;
    alice = rulesApi(t, token, user.org_id, user.id, 'alice@acme.test');
    const messages = Array.from({ length: 3000 }, (_, i) =>
      message(i + 1, `fresh logs ${i} of acme-bank.com and more ${i % 50}`),
    );
    await loadCorpus(t, [channel('bulk', messages)]);
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-timeouts-'));
    const combolist = path.join(dir, 'combo.txt');
    writeFileSync(
      combolist,
      Array.from(
        { length: 3000 },
        (_, i) => `https://vpn${i % 40}.acme-bank.com/login:user${i}@acme-bank.com:pass-${i}`,
      ).join('\n') + '\n',
    );
    await ingestInto(t, 'filtered_leak', [combolist]);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a search past DRAGNET_SEARCH_TIMEOUT_MS answers 503 service_unavailable with Retry-After, not a 500', async () => {
    const response = await postSearch(t, token, { query: 'acme-bank.com OR logs' });
    const body = expectError(response, 503, 'service_unavailable');
    expect(body.message).toMatch(/statement timeout/);
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('a quick search runs under DRAGNET_SEARCH_TIMEOUT_MS too: past it, 503 service_unavailable with Retry-After, not a 200 after minutes', async () => {
    const response = await alice.get(withQuery('/service/domain_quick_search/', { domain: 'acme-bank.com' }));
    const body = expectError(response, 503, 'service_unavailable');
    expect(body.message).toMatch(/statement timeout/);
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('a rule whose first run passes DRAGNET_RULE_RUN_TIMEOUT_MS twice is created (201) with that run recorded as failed', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'timeout' });
    const created = await alice.create(messengerRule(kit, 'Broad rule', 'acme-bank.com OR logs'));
    expect(created.statusCode, created.body).toBe(201);
    const rule = created.json<{ id: number; name: string; last_run: string | null; total_matches_count: number }>();
    expect(rule).toMatchObject({ name: 'Broad rule', last_run: null, total_matches_count: 0 });
    const runs = await t.container.store.db.selectFrom('rule_runs').select(['rule_id', 'status', 'error']).execute();
    expect(runs).toEqual([
      { rule_id: rule.id, status: 'failed', error: expect.stringMatching(/statement timeout .* 2 times/) },
    ]);
    // One rule, so a client has no reason to create it again.
    expect((await alice.list()).results.map((r) => r.name)).toEqual(['Broad rule']);
  });
});
