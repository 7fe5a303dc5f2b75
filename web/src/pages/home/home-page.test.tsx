import { screen, waitFor, within } from '@testing-library/react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import {
  createDeliveryKit,
  messengerRule,
  rulesUser,
  type MatchView,
  type RuleView,
} from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { sourceCatalog } from '../../../../src/modules/sources/index.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';
import { formatDateTime } from '../../ui/format.ts';

const EMAIL = 'hana@home.test';

describe('the home page', () => {
  let t: TestApp;
  const rules: RuleView[] = [];
  const matchIds: number[] = [];
  // Whole seconds: the messenger stores dates as posted, which have no milliseconds.
  const newestMessageAt = Math.floor(Date.now() / 1000) * 1000 - 60_000;

  /** Two rules match today: "Watch kilo" twice (two messages), "Watch lima" once. */
  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    const hana = await rulesUser(t, 'Homebank', EMAIL);
    await rulesUser(t, 'Otherbank', 'olga@other.test');
    await t.createUser({ org: 'Operators', email: 'ops@home.test', role: 'system' });
    const kit = await createDeliveryKit(hana, { tag: 'home' });
    await loadCorpus(t, [
      channel('home_leaks', [
        message(1, 'kilo-bank.com dump', { userId: 1, date: newestMessageAt - 120_000 }),
        message(2, 'kilo-bank.com more', { userId: 2, date: newestMessageAt - 60_000 }),
        message(3, 'lima-bank.com combo', { userId: 3, date: newestMessageAt }),
      ]),
    ]);
    for (const name of ['kilo', 'lima']) {
      const rule = await hana.created(messengerRule(kit, `Watch ${name}`, `${name}-bank.com`));
      rules.push(rule);
      matchIds.push(((await hana.matches(rule.id)).results as [MatchView])[0].id);
    }
  });
  afterAll(() => t.close());

  it('lists the new incidents, newest first, each linking to its page', async () => {
    await renderDashboard(t, '/', { email: EMAIL });
    expect(await screen.findByRole('heading', { name: 'Home' })).toBeTruthy();
    await waitFor(() => expect(screen.getByTestId('home-new-count').textContent).toBe('2 new incidents to work.'));
    const links = within(await screen.findByRole('list', { name: 'Newest new incidents' })).getAllByRole('link');
    expect(links.map((link) => link.textContent)).toEqual([`#${matchIds[1]} Watch lima`, `#${matchIds[0]} Watch kilo`]);
    expect(links[0]!.getAttribute('href')).toBe(`/incidents/${matchIds[1]}`);
    expect(screen.getByRole('link', { name: 'All new incidents' }).getAttribute('href')).toMatch(
      /^\/incidents\?status=/,
    );
  });

  it("shows today's matches and the busiest rules, linking to each rule", async () => {
    await renderDashboard(t, '/', { email: EMAIL });
    const days = await screen.findByRole('table', { name: 'Matches by day' });
    const today = new Date().toISOString().slice(0, 10);
    const rows = within(days).getAllByRole('row').slice(1);
    expect(
      rows.map((row) =>
        within(row)
          .getAllByRole('cell')
          .map((cell) => cell.textContent?.trim()),
      ),
    ).toEqual([[today, '2', '3']]);
    const busiest = screen.getByRole('table', { name: 'Busiest rules' });
    const ruleLinks = within(busiest).getAllByRole('link');
    expect(ruleLinks.map((link) => link.textContent)).toEqual(['Watch kilo', 'Watch lima']);
    expect(ruleLinks[0]!.getAttribute('href')).toBe(`/rules/${rules[0]!.id}`);
    expect(screen.queryByRole('heading', { name: 'Collectors' })).toBeNull();
  });

  it("shows each source's newest record: the messenger's newest message, and no data yet where none is stored", async () => {
    await renderDashboard(t, '/', { email: EMAIL });
    const table = await screen.findByRole('table', { name: 'Newest data per source' });
    const rowOf = (alias: string) =>
      within(within(table).getByRole('cell', { name: alias }).closest('tr')!).getAllByRole('cell');
    expect(within(table).getAllByRole('row')).toHaveLength(sourceCatalog.length + 1);
    expect(rowOf('Messenger channels')[1]!.textContent).toBe(formatDateTime(new Date(newestMessageAt).toISOString()));
    expect(rowOf('Ransomware leak sites')[1]!.textContent).toBe('No data yet');
    const watch = within(rowOf('Messenger channels')[2]!).getByRole('link');
    expect(watch.getAttribute('href')).toBe('/rules/new?service=1');
  });

  it("another organization's home page has none of them", async () => {
    await renderDashboard(t, '/', { email: 'olga@other.test' });
    await waitFor(() => expect(screen.getByTestId('home-new-count').textContent).toBe('No new incidents.'));
    expect(await screen.findByText('No matches in the last 30 days.')).toBeTruthy();
    expect(screen.getByText('No rule matched in the last 30 days.')).toBeTruthy();
  });

  it('shows a system account the collectors', async () => {
    await renderDashboard(t, '/', { email: 'ops@home.test' });
    expect(await screen.findByRole('heading', { name: 'Collectors' })).toBeTruthy();
    const table = await screen.findByRole('table', { name: 'Collectors' });
    const inbox = within(table).getByRole('cell', { name: 'inbox' }).closest('tr')!;
    const cells = within(inbox)
      .getAllByRole('cell')
      .map((cell) => cell.textContent);
    expect(cells.slice(1, 4)).toEqual(['every source', 'Not run yet', 'never']);
  });
});
