import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { runCli } from '../support/cli.ts';
import {
  createDeliveryKit,
  createRulesApp,
  rulePaths,
  rulesUser,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

interface CatalogParam {
  name: string;
  example?: unknown;
}
interface CatalogRow {
  id: number;
  name: string;
  has_data: boolean;
  excludable_fields: string[];
  filterable_fields: string[];
  sortable_fields: string[];
  args_schema: { params: CatalogParam[] };
}

/**
 * The promise of `dragnet demo`: for every catalog service, a rule made with the
 * catalog's own example args (every param that has an example) finds a hit on its first run.
 */
describe(`dragnet demo and the catalog examples (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let alice: RulesApi;
  let kit: DeliveryKit;
  let catalog: CatalogRow[];

  beforeAll(async () => {
    location = await createTestStoreLocation();
    const demo = await runCli(['demo'], { env: location.env, timeoutMs: scaled(120_000) });
    expect(demo.code, demo.stderr).toBe(0);
    // The demo dates its data up to the real now; the rules run a minute later.
    t = await createRulesApp({ location, clock: createManualClock(new Date(Date.now() + 60_000).toISOString()) });
    alice = await rulesUser(t, 'Examples', 'alice@examples.test');
    kit = await createDeliveryKit(alice, { tag: 'examples' });
    catalog = await alice.getJson<CatalogRow[]>(rulePaths.catalog);
  }, scaled(180_000));
  afterAll(async () => {
    await t?.close();
    await location?.drop();
  });

  it('every catalog service has data', () => {
    expect(catalog).toHaveLength(15);
    expect(catalog.filter((row) => !row.has_data).map((row) => row.name)).toEqual([]);
  });

  it('a rule with the example args of every catalog service finds a hit on its first run', async () => {
    const found: Record<string, number> = {};
    const fieldsMissing: Record<string, string[]> = {};
    for (const row of catalog) {
      const args = Object.fromEntries(
        row.args_schema.params.filter((p) => p.example !== undefined).map((p) => [p.name, p.example]),
      );
      const rule = await alice.created(sourceRule(kit, `example ${row.name}`, row.id, args));
      await tickAndDeliver(t);
      const [match] = (await alice.matches(rule.id)).results;
      found[row.name] = match?.total_hits ?? 0;
      if (!match) continue;
      // The catalog's excludable, filterable and sortable fields are fields the hits carry.
      const [hit] = (await alice.hits(match.id)).results;
      const declared = new Set([...row.excludable_fields, ...row.filterable_fields, ...row.sortable_fields]);
      const missing = [...declared].filter((field) => !(field in (hit ?? {})));
      if (missing.length) fieldsMissing[row.name] = missing;
    }
    for (const [name, hits] of Object.entries(found))
      expect(hits, `${name}: ${JSON.stringify(found)}`).toBeGreaterThan(0);
    expect(fieldsMissing).toEqual({});
  });
});
