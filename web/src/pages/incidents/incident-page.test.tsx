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
import { downloadedBy } from '../../test/downloads.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

describe('the incident page (where a notification links)', () => {
  let t: TestApp;
  let ana: RulesApi;
  let rule: RuleView;
  let match: MatchView;
  /** Five hits: golf_a has three (users 11, 11, 12; one photo), golf_b two (user 14). */
  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    ana = await rulesUser(t, 'Acme', EMAIL);
    const kit = await createDeliveryKit(ana, { tag: 'acme' });
    await loadCorpus(t, [
      channel('golf_a', [
        message(1, 'golf-bank.com logins', { userId: 11 }),
        message(2, 'golf-bank.com cookies', { userId: 11, hasMedia: true, mediaType: 'photo', fileName: 'shot.jpg' }),
        message(3, 'golf-bank.com admin panel', { userId: 12 }),
      ]),
      channel('golf_b', [
        message(4, 'golf-bank.com db', { userId: 14 }),
        message(5, 'golf-bank.com db part 2', { userId: 14 }),
      ]),
    ]);
    rule = await ana.created(messengerRule(kit, 'Golf bank', 'golf-bank.com'));
    [match] = (await ana.matches(rule.id)).results as [MatchView];
  });
  afterAll(() => t.close());

  const count = (label: 'New hits' | 'Excluded') =>
    within(screen.getByRole('region', { name: 'Counts' })).getByText(label).nextElementSibling!.textContent;
  const hitTexts = () => screen.getAllByRole('article').map((hit) => within(hit).getByLabelText('Text').textContent);

  it('shows the counts and the hits, newest first; excluding one hit changes the counts at once, and "count again" undoes it', async () => {
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    expect(await screen.findByRole('heading', { name: 'Incident: Golf bank' })).toBeTruthy();
    await waitFor(() => expect(screen.getAllByRole('article')).toHaveLength(5));
    expect(count('New hits')).toBe('5');
    expect(count('Excluded')).toBe('0');
    expect(hitTexts()).toEqual([
      'golf-bank.com db part 2',
      'golf-bank.com db',
      'golf-bank.com admin panel',
      'golf-bank.com cookies',
      'golf-bank.com logins',
    ]);

    const user = userEvent.setup();
    const newest = screen.getAllByRole('article')[0]!;
    await user.click(within(newest).getByRole('button', { name: 'False positive: exclude this hit' }));
    expect(await screen.findByText(/^Excluded one hit \(.+\)\. The counts are updated\.$/)).toBeTruthy();
    await waitFor(() => expect(count('New hits')).toBe('4'));
    expect(count('Excluded')).toBe('1');
    expect(within(screen.getAllByRole('article')[0]!).getByText('excluded')).toBeTruthy();
    expect((await ana.find(rule.id))!.total_matches_count).toBe(4);
    // The rule's exclusions name it; the hit next to it in the same channel still counts.
    const exclusions = screen.getByRole('region', { name: 'Exclusions of this rule' });
    expect(within(exclusions).getByText(/^one hit/)).toBeTruthy();

    await user.click(within(screen.getAllByRole('article')[0]!).getByRole('button', { name: /^Count again/ }));
    await waitFor(() => expect(count('New hits')).toBe('5'));
    expect(await ana.exclusions(rule.id)).toEqual([]);
  });

  it('downloads the hits as CSV, JSON and a STIX 2.1 bundle under the names the server gives', async () => {
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    const group = await screen.findByRole('group', { name: 'Export hits' });
    const download = (format: 'CSV' | 'JSON' | 'STIX') => downloadedBy(format, within(group));
    const stix = await download('STIX');
    expect(stix.name).toBe(`dragnet-incident-${match.id}.stix.json`);
    const bundle = JSON.parse(stix.text) as { type: string; objects: { type: string }[] };
    expect(bundle.type).toBe('bundle');
    expect(bundle.objects.filter((object) => object.type === 'note')).toHaveLength(5);
    const json = await download('JSON');
    expect(json.name).toBe(`dragnet-incident-${match.id}.json`);
    expect((JSON.parse(json.text) as { hits: unknown[] }).hits).toHaveLength(5);
    const csv = await download('CSV');
    expect(csv.name).toBe(`dragnet-incident-${match.id}.csv`);
    expect(csv.text.trim().split('\n')).toHaveLength(6);
  });

  it('excludes every hit with a value, hides excluded hits, filters and sorts by the service fields, all kept in the address', async () => {
    const { history } = await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    const user = userEvent.setup();
    await waitFor(() => expect(screen.getAllByRole('article')).toHaveLength(5));

    const golfB = screen.getAllByRole('article')[0]!;
    await user.click(within(golfB).getByText('Exclude every hit with…'));
    await user.click(within(golfB).getByRole('button', { name: 'Channel username golf_b' }));
    await waitFor(() => expect(count('Excluded')).toBe('2'));
    expect(count('New hits')).toBe('3');

    await user.click(screen.getByLabelText('Show excluded hits'));
    await waitFor(() => expect(screen.getAllByRole('article')).toHaveLength(3));
    expect(history.location.search).toContain('hide_excluded=true');

    await user.selectOptions(screen.getByLabelText('Filter on'), 'user_id');
    await user.type(screen.getByLabelText('equal to'), '11');
    await user.click(screen.getByRole('button', { name: 'Add filter' }));
    await waitFor(() => expect(hitTexts()).toEqual(['golf-bank.com cookies', 'golf-bank.com logins']));
    await user.selectOptions(screen.getByLabelText('Sort'), 'Oldest first');
    await waitFor(() => expect(hitTexts()).toEqual(['golf-bank.com logins', 'golf-bank.com cookies']));
    expect(new URLSearchParams(history.location.search).get('sort')).toBe('date');

    await user.click(screen.getByRole('button', { name: 'Remove the filter user_id:11' }));
    await waitFor(() => expect(screen.getAllByRole('article')).toHaveLength(3));
    expect((await ana.deleteExclusion((await ana.exclusions(rule.id))[0]!.id)).statusCode).toBe(204);
  });

  it('opens a view of the hits from its address', async () => {
    const filter = encodeURIComponent(JSON.stringify(['user_id:11']));
    await renderDashboard(t, `/incidents/${match.id}?filter=${filter}&sort=%22date%22`, { email: EMAIL });
    await waitFor(() => expect(hitTexts()).toEqual(['golf-bank.com logins', 'golf-bank.com cookies']));
    expect(screen.getByRole('button', { name: 'Remove the filter user_id:11' })).toBeTruthy();
    expect((screen.getByLabelText('Sort') as HTMLSelectElement).value).toBe('date');
  });

  it('says why when the server refuses a filter', async () => {
    await renderDashboard(t, `/incidents/${match.id}?filter=${encodeURIComponent(JSON.stringify(['text:golf']))}`, {
      email: EMAIL,
    });
    expect((await screen.findByText(/use field:value with one of/)).className).toContain('error');
  });

  it("another organization's match is not found", async () => {
    await rulesUser(t, 'Globex', 'gina@globex.test');
    await renderDashboard(t, `/incidents/${match.id}`, { email: 'gina@globex.test' });
    expect((await screen.findByRole('alert')).textContent).toMatch(/not found/i);
    expect(screen.queryByText('golf-bank.com logins')).toBeNull();
  });

  it("a notification's link (with ?org=) opened by an MSSP analyst acts for the client it belongs to", async () => {
    await t.container.organizations.create('Watchers');
    await t.container.organizations.update('Acme', { managedBy: 'Watchers' });
    await t.createUser({ org: 'Watchers', email: 'sam@watchers.test' });
    const { api, history } = await renderDashboard(t, `/incidents/${match.id}?org=${ana.orgId}&sort=%22date%22`, {
      email: 'sam@watchers.test',
    });
    expect(await screen.findByRole('heading', { name: 'Incident: Golf bank' })).toBeTruthy();
    await waitFor(() => expect(screen.getAllByRole('article')).toHaveLength(5));
    expect(api.session.get()!.orgId).toBe(ana.orgId);
    expect((await screen.findByLabelText<HTMLSelectElement>('Organization')).value).toBe(String(ana.orgId));
    // The organization is dropped from the address once acted on; the rest of the view stays.
    expect(history.location.search).toBe('?sort=date');
  });

  it('the same link opened by an account that does not manage the organization is not found, and changes nothing', async () => {
    await rulesUser(t, 'Initech', 'ian@initech.test');
    const { api } = await renderDashboard(t, `/incidents/${match.id}?org=${ana.orgId}`, { email: 'ian@initech.test' });
    expect((await screen.findByRole('alert')).textContent).toMatch(/not found/i);
    expect(api.session.get()!.orgId).toBeNull();
    expect(screen.queryByText('golf-bank.com logins')).toBeNull();
  });

  it('a link of the earlier /matches/<id> form opens the incident page', async () => {
    const { history } = await renderDashboard(t, `/matches/${match.id}`, { email: EMAIL });
    await screen.findByRole('heading', { name: 'Incident: Golf bank' });
    expect(history.location.pathname).toBe(`/incidents/${match.id}`);
  });

  it('shows the rule’s matches over time, with the figures in words', async () => {
    await renderDashboard(t, `/incidents/${match.id}`, { email: EMAIL });
    const { new_hits } = await ana.getJson<MatchView>(`/service/alert_system_match_get_match/${match.id}/`);
    const figure = await screen.findByRole('figure', { name: 'Matches over time' });
    await waitFor(() =>
      expect(within(figure).getByText(/^1 run with hits/).textContent).toContain(`the most new hits, ${new_hits},`),
    );
  });
});
