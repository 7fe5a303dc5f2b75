import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceCatalog } from '../../src/modules/sources/index.ts';
import { expectError } from '../support/http.ts';
import { ingestInto, rulesUser, withQuery, type RulesApi } from '../support/rules-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/** GET source_freshness (docs/api.md "Quick searches"): each catalog source's newest stored record. */
const FRESHNESS = '/service/source_freshness/';

interface FreshnessRow {
  id: number;
  name: string;
  alias: string;
  newest_record_at: string | null;
}

const LOADED_AT = Date.parse('2026-03-02T10:00:00Z');

describe(`source freshness (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let dir: string | undefined;

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(new Date(LOADED_AT));
    alice = await rulesUser(t, 'Freshbank', 'alice@fresh.test');
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists every catalog source, none with data before anything is stored', async () => {
    const rows = await alice.getJson<FreshnessRow[]>(FRESHNESS);
    expect(rows.map((row) => row.name)).toEqual(sourceCatalog.map((source) => source.name));
    expect(rows.every((row) => row.newest_record_at === null)).toBe(true);
  });

  it('gives each source, once its demo data is stored, the time of its newest record', async () => {
    for (const source of sourceCatalog) await source.demo?.(t.container.sourceContext, LOADED_AT);
    const rows = await alice.getJson<FreshnessRow[]>(FRESHNESS);
    for (const row of rows) {
      expect(row.newest_record_at, row.name).not.toBeNull();
      expect(Date.parse(row.newest_record_at!), row.name).toBeLessThanOrEqual(LOADED_AT);
      // The demo dates its records within the last days before its load.
      expect(Date.parse(row.newest_record_at!), row.name).toBeGreaterThan(LOADED_AT - 30 * 86_400_000);
    }
  });

  it('moves when a source stores a newer record, and only for that source', async () => {
    const before = new Map(
      (await alice.getJson<FreshnessRow[]>(FRESHNESS)).map((row) => [row.name, row.newest_record_at]),
    );
    const later = LOADED_AT + 20 * 3_600_000; // within the sign-in token's day
    t.clock.set(new Date(later));
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-fresh-'));
    writeFileSync(
      path.join(dir, 'fresh-combo.txt'),
      'https://vpn.fresh-demo.com/login:new@fresh-demo.com:Fresh-Pass-1\n',
    );
    await ingestInto(t, 'filtered_leak', [path.join(dir, 'fresh-combo.txt')]);
    const after = await alice.getJson<FreshnessRow[]>(FRESHNESS);
    for (const row of after) {
      const expected = ['filtered_leak', 'distinct_leak'].includes(row.name)
        ? new Date(later).toISOString()
        : before.get(row.name);
      expect(row.newest_record_at, row.name).toBe(expected);
    }
  });

  it('needs a signed-in user, and an organization it may act for', async () => {
    expect((await t.request({ method: 'GET', url: FRESHNESS })).statusCode).toBe(401);
    const other = await rulesUser(t, 'Otherbank', 'olga@other.test');
    expectError(await alice.get(withQuery(FRESHNESS, { org_id: other.orgId })), 403);
  });
});
