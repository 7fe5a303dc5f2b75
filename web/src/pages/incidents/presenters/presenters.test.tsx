import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceCatalog } from '../../../../../src/modules/sources/index.ts';
import { NO_RATE_LIMITS } from '../../../../../test/support/delivery-api.ts';
import {
  createDeliveryKit,
  rulePaths,
  rulesUser,
  sourceRule,
  tickAndDeliver,
  type MatchView,
  type RulesApi,
} from '../../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../../test/support/test-app.ts';
import { renderDashboard, startTestServer } from '../../../test/test-server.tsx';

const EMAIL = 'ivy@presenters.test';

interface CatalogRow {
  id: number;
  name: string;
  args_schema: { params: { name: string; example?: unknown }[] };
}

/**
 * What each source's presenter must show on the incident page: one element a person looks
 * for first. The demo data of every source (`dragnet demo`) and a rule with the catalog's
 * example args give each a real match, as the demo promises.
 */
const looksFor: Record<string, (hit: HTMLElement) => void> = {
  messenger: (hit) => within(hit).getByRole('button', { name: 'Open in context (the channel)' }),
  chat_server: (hit) => within(hit).getByRole('button', { name: 'Open in context (the channel)' }),
  hacker_forum: (hit) => within(hit).getByRole('button', { name: 'Open in context (the thread)' }),
  paste_site: (hit) => within(hit).getByRole('link', { name: 'Open the paste' }),
  filtered_leak: (hit) => within(hit).getByRole('button', { name: /^Reveal the password/ }),
  distinct_leak: (hit) => within(hit).getByRole('button', { name: /^Reveal the password/ }),
  raw_leak_extended: (hit) => within(hit).getByLabelText('Line'),
  credit_card: (hit) => maskedCard(hit),
  bin_cvv: (hit) => maskedCard(hit),
  phishing: (hit) => expect(within(hit).getByText(/imitates/)).toBeTruthy(),
  certificate: (hit) =>
    expect(
      within(within(hit).getByRole('list', { name: 'Names in the certificate' })).getAllByText(
        (_, el) => el?.tagName === 'MARK',
      ).length,
    ).toBeGreaterThan(0),
  ransomware: (hit) => expect(fact(hit, 'Group')).toBeTruthy(),
  app_store: (hit) => expect(fact(hit, 'Developer')).toBeTruthy(),
  cloud_bucket: (hit) => expect(fact(hit, 'Object')).toContain('/'),
  url_shortener: (hit) => expect(fact(hit, 'Leads to')).toMatch(/^https?:\/\//),
};

/** A card shows its masked number, and no full number (13 to 19 digits) anywhere. */
function maskedCard(hit: HTMLElement) {
  expect(fact(hit, 'Card')).toMatch(/^\d{6}\*+\d{4}$/);
  expect(hit.textContent).not.toMatch(/\d{13,19}/);
}

/** The text of a presenter's labelled fact. */
function fact(hit: HTMLElement, label: string): string {
  return within(hit).getByText(label, { selector: 'dt' }).nextElementSibling!.textContent!;
}

/** Field names a person has no use for, which the generic list used to show. */
const INTERNAL = /\b(Text hash|Hit key|Password sealed|text_hash|hit_key|password_sealed)\b/;

describe('the hit presenters of the 15 sources on the incident page', () => {
  let t: TestApp;
  let ivy: RulesApi;
  const matches = new Map<string, MatchView>();

  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    ivy = await rulesUser(t, 'Presenters', EMAIL);
    for (const source of sourceCatalog) await source.demo?.(t.container.sourceContext, Date.now());
    t.clock.advance(60_000);
    await ivy.relogin();
    const kit = await createDeliveryKit(ivy, { tag: 'presenters' });
    const catalog = await ivy.getJson<CatalogRow[]>(rulePaths.catalog);
    for (const row of catalog) {
      const args = Object.fromEntries(
        row.args_schema.params.filter((p) => p.example !== undefined).map((p) => [p.name, p.example]),
      );
      const rule = await ivy.created(sourceRule(kit, `example ${row.name}`, row.id, args));
      await tickAndDeliver(t);
      const [match] = (await ivy.matches(rule.id)).results as MatchView[];
      if (match) matches.set(row.name, match);
    }
  }, 240_000);
  afterAll(() => t?.close());

  it('covers every source of the catalog', () => {
    expect(Object.keys(looksFor).sort()).toEqual(sourceCatalog.map((source) => source.name).sort());
    expect([...matches.keys()].sort()).toEqual(Object.keys(looksFor).sort());
  });

  for (const [name, check] of Object.entries(looksFor)) {
    it(`${name}: the hit shows what it is, and no internal field`, async () => {
      const match = matches.get(name)!;
      const { view } = await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
      await waitFor(() => expect(screen.getAllByRole('article').length).toBeGreaterThan(0), { timeout: 10_000 });
      const [first] = screen.getAllByRole('article');
      check(first!);
      expect(first!.textContent).not.toMatch(INTERNAL);
      view.unmount();
    });
  }

  it('a leaked password is masked until revealed, and the reveal is in the audit log', async () => {
    const match = matches.get('filtered_leak')!;
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    const [first] = await screen.findAllByRole('article', undefined, { timeout: 10_000 });
    const masked = fact(first!, 'Password');
    expect(masked).toContain('*');
    await userEvent.setup().click(within(first!).getByRole('button', { name: /^Reveal the password/ }));
    await waitFor(() => expect(fact(first!, 'Password')).not.toContain('*'));
    const audit = await ivy.getJson<{ results: { event: string; details: { match_id: number } }[] }>(
      '/service/audit_log/?event=hit.revealed',
    );
    expect(audit.results.map((entry) => entry.details.match_id)).toEqual([match.id]);
  });

  it('a message opens in context: its channel around it, the hit marked', async () => {
    const match = matches.get('messenger')!;
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    const [first] = await screen.findAllByRole('article', undefined, { timeout: 10_000 });
    expect(first!.querySelector('mark')).not.toBeNull();
    await userEvent.setup().click(within(first!).getByRole('button', { name: 'Open in context (the channel)' }));
    const context = await within(first!).findByRole('region', { name: /^Context in / }, { timeout: 10_000 });
    expect(within(context).getAllByRole('listitem').length).toBeGreaterThan(1);
    expect(within(context).getByText('this hit')).toBeTruthy();
  });
});
