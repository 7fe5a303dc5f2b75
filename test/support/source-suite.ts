import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { findIngester, findSource, type Hit, type IngestReport } from '../../src/modules/sources/index.ts';
import {
  createDeliveryKit,
  createRulesApp,
  rulesUser,
  SMTP_AUTH,
  type DeliveryKit,
  type HitView,
  type MatchView,
  type Query,
  type RulesApi,
} from './rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from './smtp-test-server.ts';
import type { TestApp } from './test-app.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/**
 * The harness of a source's end-to-end suite (as test/sources/cards.test.ts spells out): a
 * rules test app on a manual clock, two organizations' users, a real SMTP server and webhook
 * receiver, a scratch folder for input files, and the real ingesters run on the app's store.
 * Call it at the top of a describe block; the fields are set once beforeAll has run.
 */
export interface SourceSuite {
  t: TestApp;
  alice: RulesApi;
  mallory: RulesApi;
  smtp: SmtpTestServer;
  receiver: WebhookReceiver;
  dir: string;
  /** Writes a file in the scratch folder; returns its path. */
  file(name: string, content: string | Buffer): string;
  /** `dragnet ingest <target>` in-process, so the manual clock dates what it stores. */
  ingest(target: string, inputs: string[], format?: string): Promise<IngestReport>;
  /** Sets the clock and logs alice in again (tokens live 24 hours). */
  moveTo(ms: number): Promise<void>;
  /** A delivery kit of alice's (recipient, template, SMTP sender, webhook) with a fresh tag. */
  newKit(): Promise<DeliveryKit>;
  /** The rule's only match. */
  onlyMatch(ruleId: number): Promise<MatchView>;
  hitsOf(matchId: number, query?: Query): Promise<HitView[]>;
}

export function sourceSuite(name: string): SourceSuite {
  let kits = 0;
  const suite = {
    file(fileName: string, content: string | Buffer) {
      const target = path.join(suite.dir, fileName);
      writeFileSync(target, content);
      return target;
    },
    ingest: (target: string, inputs: string[], format?: string) => {
      const ingester = findIngester(target)!;
      return ingester.run(suite.t.container.sourceContext, inputs, { format: format ?? ingester.formats[0]! });
    },
    async moveTo(ms: number) {
      suite.t.clock.set(new Date(ms));
      await suite.alice.relogin();
    },
    newKit: () =>
      createDeliveryKit(suite.alice, { tag: `${name}${++kits}`, smtp: suite.smtp, receiver: suite.receiver }),
    async onlyMatch(ruleId: number) {
      const { results } = await suite.alice.matches(ruleId, { page_size: 100 });
      expect(results).toHaveLength(1);
      return results[0]!;
    },
    hitsOf: async (matchId: number, query: Query = {}) =>
      (await suite.alice.hits(matchId, { page_size: 100, ...query })).results,
  } as SourceSuite;

  beforeAll(async () => {
    [suite.smtp, suite.receiver] = await Promise.all([
      startSmtpTestServer({ auth: SMTP_AUTH }),
      startWebhookReceiver(),
    ]);
    suite.t = await createRulesApp();
    suite.alice = await rulesUser(suite.t, 'Acme', 'alice@acme.test');
    suite.mallory = await rulesUser(suite.t, 'Other', 'mallory@other.test');
    suite.dir = mkdtempSync(path.join(tmpdir(), `dragnet-${name}-`));
  });
  afterAll(async () => {
    await suite.t?.close();
    await Promise.all([suite.smtp?.close(), suite.receiver?.close()]);
    if (suite.dir) rmSync(suite.dir, { recursive: true, force: true });
  });
  return suite;
}

/**
 * A source's demo on a fresh store: loaded twice at the clock's now (the second adds nothing,
 * its line says 0), and a match with the catalog's example args (every param that has one)
 * finds hits dated before now on a first run. Returns the first load's line and those hits.
 */
export async function checkDemo(sourceId: number): Promise<{ line: string; again: string; hits: Hit[] }> {
  const t = await createRulesApp();
  try {
    const source = findSource(sourceId)!;
    const now = t.clock.now().getTime();
    const line = await source.demo!(t.container.sourceContext, now);
    const again = await source.demo!(t.container.sourceContext, now);
    const args = Object.fromEntries(
      source.params.filter((param) => param.example !== undefined).map((param) => [param.name, param.example]),
    );
    const { hits, total } = await source.match(t.container.sourceContext, args, { since: null, until: now }, 100);
    expect(total).toBeGreaterThan(0);
    for (const hit of hits) expect(hit.date).toBeLessThan(now);
    return { line, again, hits };
  } finally {
    await t.close();
  }
}
