import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import {
  createDeliveryKit,
  messengerRule,
  rulesUser,
  type MatchView,
  type RulesApi,
  type RuleView,
} from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

interface IncidentView {
  id: number;
  incident_status: string;
  assignee: { id: number; email: string } | null;
}

describe('the incident inbox', () => {
  let t: TestApp;
  let ana: RulesApi;
  let ben: RulesApi;
  const rules: RuleView[] = [];
  /** Newest first: hotel, india, juliet (one match each). */
  const ids: Record<'hotel' | 'india' | 'juliet', number> = { hotel: 0, india: 0, juliet: 0 };

  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    ana = await rulesUser(t, 'Acme', EMAIL);
    ben = await rulesUser(t, 'Acme', 'ben@acme.test');
    const kit = await createDeliveryKit(ana, { tag: 'acme' });
    await loadCorpus(t, [
      channel('inbox_leaks', [
        message(1, 'juliet-bank.com dump', { userId: 1 }),
        message(2, 'india-bank.com dump', { userId: 2 }),
        message(3, 'hotel-bank.com dump', { userId: 3 }),
      ]),
    ]);
    for (const name of ['juliet', 'india', 'hotel'] as const) {
      const rule = await ana.created(messengerRule(kit, `Watch ${name}`, `${name}-bank.com`));
      rules.push(rule);
      ids[name] = ((await ana.matches(rule.id)).results as [MatchView])[0].id;
    }
  });
  afterAll(() => t.close());

  const incident = (id: number) => ana.getJson<IncidentView>(`/service/alert_system_incident_get/${id}/`);
  const table = () => screen.getByRole('table', { name: 'Incidents' });
  const listedRules = () =>
    within(table())
      .getAllByRole('row')
      .slice(1)
      .map((row) => within(row).getAllByRole('cell')[2]!.textContent);
  const newCount = () => screen.queryByTestId('new-incidents')?.textContent ?? null;

  it('lists every incident newest first, with the new ones counted in the navigation', async () => {
    await renderDashboard(t, '/incidents', { email: EMAIL });
    expect(await screen.findByRole('heading', { name: 'Incidents' })).toBeTruthy();
    await waitFor(() => expect(listedRules()).toEqual(['Watch hotel', 'Watch india', 'Watch juliet']));
    expect(screen.getByRole('columnheader', { name: 'Status' })).toBeTruthy();
    expect(within(table()).getAllByText('New')).toHaveLength(3);
    await waitFor(() => expect(newCount()).toBe(', 3 new'));
    expect(screen.getByRole('link', { name: /^Incidents\s*, 3 new$/ })).toBeTruthy();
    const link = within(table()).getByRole('link', { name: new RegExp(`^#${ids.india} `) });
    expect(link.getAttribute('href')).toBe(`/incidents/${ids.india}`);
  });

  it('selects incidents and gives them one status; the rows and the count of new ones follow', async () => {
    await renderDashboard(t, '/incidents', { email: EMAIL });
    const user = userEvent.setup();
    await waitFor(() => expect(listedRules()).toHaveLength(3));
    const apply = screen.getByRole('button', { name: 'Apply to selected' }) as HTMLButtonElement;
    expect(apply.disabled).toBe(true);
    await user.click(screen.getByRole('checkbox', { name: `Select incident ${ids.hotel} (Watch hotel)` }));
    await user.click(screen.getByRole('checkbox', { name: `Select incident ${ids.juliet} (Watch juliet)` }));
    expect(screen.getByText('2 incidents selected')).toBeTruthy();
    await user.selectOptions(screen.getByLabelText('Set status to'), 'Resolved');
    await user.click(apply);
    expect(await screen.findByText('2 incidents set to resolved.')).toBeTruthy();
    await waitFor(() => expect(within(table()).getAllByText('Resolved')).toHaveLength(2));
    await waitFor(() => expect(newCount()).toBe(', 1 new'));
    expect((await incident(ids.hotel)).incident_status).toBe('resolved');
    expect((await incident(ids.india)).incident_status).toBe('new');
    expect(screen.getByText('0 incidents selected')).toBeTruthy();
  });

  it('filters by status, rule and assignee, kept in the address', async () => {
    expect(
      (
        await t.request({
          method: 'POST',
          url: `/service/alert_system_incident_update/${ids.india}/`,
          token: ana.token,
          body: { assignee_id: ben.userId },
        })
      ).statusCode,
    ).toBe(200);
    const { history } = await renderDashboard(t, '/incidents', { email: EMAIL });
    const user = userEvent.setup();
    await waitFor(() => expect(listedRules()).toHaveLength(3));

    await user.click(screen.getByRole('checkbox', { name: 'Resolved' }));
    await waitFor(() => expect(listedRules()).toEqual(['Watch hotel', 'Watch juliet']));
    expect(history.location.search).toContain('resolved');

    await user.selectOptions(screen.getByLabelText('Rule'), 'Watch juliet');
    await waitFor(() => expect(listedRules()).toEqual(['Watch juliet']));
    expect(new URLSearchParams(history.location.search).get('rule')).toBe(String(rules[0]!.id));

    await user.click(screen.getByRole('checkbox', { name: 'Resolved' }));
    await user.selectOptions(screen.getByLabelText('Rule'), 'Any rule');
    await user.selectOptions(screen.getByLabelText('Assignee'), 'ben@acme.test');
    await waitFor(() => expect(listedRules()).toEqual(['Watch india']));
    expect(within(table()).getByText('ben@acme.test')).toBeTruthy();
    await user.selectOptions(screen.getByLabelText('Assignee'), 'Nobody (unassigned)');
    await waitFor(() => expect(listedRules()).toEqual(['Watch hotel', 'Watch juliet']));
  });

  it('opens a filtered view from its address', async () => {
    await renderDashboard(t, `/incidents?status=${encodeURIComponent('["new"]')}`, { email: EMAIL });
    await waitFor(() => expect(listedRules()).toEqual(['Watch india']));
    expect((screen.getByRole('checkbox', { name: 'New' }) as HTMLInputElement).checked).toBe(true);
  });

  it('a day range before the incidents lists none', async () => {
    await renderDashboard(t, '/incidents?from=%222001-01-01%22&to=%222001-01-02%22', { email: EMAIL });
    expect(await screen.findByText('0 incidents')).toBeTruthy();
    expect(screen.queryByRole('table', { name: 'Incidents' })).toBeNull();
  });
});
