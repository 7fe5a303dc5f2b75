import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../../../../test/support/corpus.ts';
import {
  createDeliveryKit,
  messengerRule,
  rulesUser,
  type DeliveryKit,
  type RulesApi,
} from '../../../../test/support/rules-api.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { scaled } from '../../../../test/support/wait.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

describe('the rules pages', () => {
  let t: TestApp;
  let ana: RulesApi;
  let kit: DeliveryKit;
  beforeAll(async () => {
    t = await startTestServer({ env: NO_RATE_LIMITS });
    ana = await rulesUser(t, 'Acme', EMAIL);
    kit = await createDeliveryKit(ana, { tag: 'acme' });
    await loadCorpus(t, [
      channel('acme_leaks', [
        message(1, 'fresh logs for acme-bank.com'),
        message(2, 'acme-bank.com combo list'),
        message(3, 'fresh logs elsewhere'),
      ]),
    ]);
  });
  afterAll(() => t.close());

  const rulesNamed = async (name: string) =>
    (await ana.listAll({ include_deleted: true })).rules.filter((rule) => rule.name === name);

  it('"create a rule from this search" opens the messenger form filled in; creating it makes the rule from the search', async () => {
    const search = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: ana.token,
      body: { query: 'acme-bank.com', unique_only: true },
    });
    const { follow_up_token } = search.json() as { follow_up_token: string };
    const address = new URLSearchParams({
      service: '1',
      name: 'Messenger: acme-bank.com',
      args: JSON.stringify({ query: 'acme-bank.com', unique_only: true }),
      follow_up_token,
    });
    const { history } = await renderDashboard(t, `/rules/new?${address}`, { email: EMAIL });

    expect(((await screen.findByLabelText(/^Query/)) as HTMLInputElement).value).toBe('acme-bank.com');
    expect((screen.getByLabelText('Service') as HTMLSelectElement).selectedOptions[0]!.textContent).toBe(
      'Messenger channels',
    );
    expect((screen.getByLabelText(/^Unique only/) as HTMLSelectElement).value).toBe('true');
    expect((screen.getByLabelText('Name') as HTMLInputElement).value).toBe('Messenger: acme-bank.com');
    expect(screen.getByText(/come from your search/)).toBeTruthy();
    // The organization's defaults are picked: its one recipient and template.
    expect((screen.getByLabelText(kit.recipient.email) as HTMLInputElement).checked).toBe(true);

    await userEvent.setup().click(screen.getByRole('button', { name: 'Create the rule' }));
    expect(
      await screen.findByRole('heading', { name: 'Messenger: acme-bank.com' }, { timeout: scaled(15_000) }),
    ).toBeTruthy();
    const [rule] = await rulesNamed('Messenger: acme-bank.com');
    expect(rule).toMatchObject({
      service: 1,
      args: { query: 'acme-bank.com', unique_only: true },
      recipients: [kit.recipient.id],
      email_template: kit.template.id,
    });
    expect(history.location.pathname).toBe(`/rules/${rule!.id}`);
    // The first run found both messages; the page shows it in the run history.
    expect(rule!.total_matches_count).toBe(2);
    expect(await screen.findByRole('link', { name: /Open the match of .*, 2 new hits/ })).toBeTruthy();
  });

  it('a changed argument makes the rule from the values shown instead of the search', async () => {
    const search = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: ana.token,
      body: { query: 'fresh logs' },
    });
    const address = new URLSearchParams({
      service: '1',
      name: 'Fresh logs',
      args: JSON.stringify({ query: 'fresh logs' }),
      follow_up_token: search.json().follow_up_token,
    });
    await renderDashboard(t, `/rules/new?${address}`, { email: EMAIL });
    const user = userEvent.setup();
    const query = await screen.findByLabelText(/^Query/);
    await user.clear(query);
    await user.type(query, '"fresh logs" acme-bank.com');
    expect(screen.queryByText(/come from your search/)).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Create the rule' }));
    await screen.findByRole('heading', { name: 'Fresh logs' }, { timeout: scaled(15_000) });
    const [rule] = await rulesNamed('Fresh logs');
    expect(rule).toMatchObject({ args: { query: '"fresh logs" acme-bank.com' }, total_matches_count: 1 });
  });

  it("generates another service's form from its args_schema, checks it before sending, and shows the server's errors beside the fields", async () => {
    await renderDashboard(t, '/rules/new', { email: EMAIL });
    const user = userEvent.setup();
    await user.selectOptions(await screen.findByLabelText('Service'), 'Filtered credential leaks');
    const domain = screen.getByLabelText(/^Domain url/);
    const filter = screen.getByLabelText(/^Filter id/) as HTMLSelectElement;
    expect(screen.getByText('What to watch (Filtered credential leaks)')).toBeTruthy();
    expect([...filter.options].map((option) => option.value)).toEqual(['', '1', '2', '3', '4', '5']);
    expect(domain.closest('.field')!.textContent).toContain('(required)');
    expect(screen.getByLabelText(/^Filter parameters/).tagName).toBe('TEXTAREA');
    // Frequencies faster than the source's floor cannot be picked (spec 2.10 rule 7).
    await user.selectOptions(screen.getByLabelText('Service'), 'Raw leak extended search');
    const frequency = screen.getByLabelText('Frequency') as HTMLSelectElement;
    expect([...frequency.options].filter((option) => option.disabled).map((option) => option.value)).toEqual([
      'daily',
      'twice_weekly',
    ]);
    await user.selectOptions(screen.getByLabelText('Service'), 'Filtered credential leaks');

    await user.type(screen.getByLabelText('Name'), 'Messenger: acme-bank.com');
    await user.click(screen.getByRole('button', { name: 'Create the rule' }));
    // Missing required args are named before anything is sent.
    expect(screen.getByLabelText(/^Domain url/).getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByLabelText(/^Filter id/).closest('.field')!.textContent).toContain('is required');
    expect(await rulesNamed('Messenger: acme-bank.com')).toHaveLength(1);

    await user.type(screen.getByLabelText(/^Domain url/), 'acme-bank.com');
    await user.selectOptions(screen.getByLabelText(/^Filter id/), '2');
    await user.click(screen.getByRole('button', { name: 'Create the rule' }));
    // The name is taken by the rule of the first test: the server says so, beside the name.
    const name = screen.getByLabelText('Name');
    await waitFor(() => expect(name.getAttribute('aria-invalid')).toBe('true'));
    expect(name.closest('.field')!.textContent).toContain('is already used by another active rule');
    expect(screen.getByRole('alert').textContent).toContain('The rule was not saved');

    await user.clear(name);
    await user.type(name, 'Acme credentials');
    await user.click(screen.getByRole('button', { name: 'Create the rule' }));
    await screen.findByRole('heading', { name: 'Acme credentials' }, { timeout: scaled(15_000) });
    expect((await rulesNamed('Acme credentials'))[0]).toMatchObject({
      service: 3,
      args: { domain_url: 'acme-bank.com', filter_id: 2 },
    });
  });

  it('edits a rule: the form starts from it and saving replaces it', async () => {
    const rule = await ana.created(messengerRule(kit, 'To edit', 'combo', { frequency: 'weekly', tlp: 'green' }));
    const { history } = await renderDashboard(t, `/rules/${rule.id}/edit`, { email: EMAIL });
    const user = userEvent.setup();
    const context = await screen.findByLabelText(/^Context chars/);
    expect((screen.getByLabelText('Frequency') as HTMLSelectElement).value).toBe('weekly');
    expect((screen.getByLabelText('TLP') as HTMLSelectElement).value).toBe('green');
    await user.selectOptions(screen.getByLabelText('TLP'), 'amber+strict');
    expect((screen.getByLabelText('Service') as HTMLSelectElement).disabled).toBe(true);
    await user.type(context, '120');
    await user.click(screen.getByRole('button', { name: 'Save the rule' }));
    await waitFor(() => expect(history.location.pathname).toBe(`/rules/${rule.id}`));
    expect(await screen.findByText('TLP:AMBER+STRICT')).toBeTruthy();
    expect(await ana.find(rule.id)).toMatchObject({
      args: { query: 'combo', context_chars: 120 },
      frequency: 'weekly',
      tlp: 'amber+strict',
    });
  });

  it('lists rules; delete asks first, a deleted rule shows with "include deleted" and comes back with restore', async () => {
    const rule = await ana.created(messengerRule(kit, 'Short-lived', 'acme-bank.com'));
    const { history } = await renderDashboard(t, '/rules', { email: EMAIL });
    const user = userEvent.setup();
    const row = (await screen.findByRole('link', { name: 'Short-lived' })).closest('tr')!;
    await user.click(within(row).getByRole('button', { name: 'Delete Short-lived' }));
    // The first press only asks; focus moves to the confirming button.
    expect(await ana.find(rule.id)).toMatchObject({ is_deleted: false });
    expect(document.activeElement).toBe(within(row).getByRole('button', { name: 'Delete Short-lived' }));
    await user.keyboard('{Enter}');
    await waitFor(() => expect(screen.queryByRole('link', { name: 'Short-lived' })).toBeNull());
    expect(await ana.find(rule.id)).toMatchObject({ is_deleted: true });

    await user.click(screen.getByText('Filters'));
    await user.click(screen.getByLabelText('Include deleted rules'));
    expect(history.location.search).toContain('deleted=true');
    const deletedRow = (await screen.findByRole('link', { name: 'Short-lived' })).closest('tr')!;
    expect(within(deletedRow).getByText('deleted')).toBeTruthy();
    await user.click(within(deletedRow).getByRole('button', { name: 'Restore Short-lived' }));
    await waitFor(() =>
      expect(
        within(screen.getByRole('link', { name: 'Short-lived' }).closest('tr')!).queryByText('deleted'),
      ).toBeNull(),
    );
    expect(await ana.find(rule.id)).toMatchObject({ is_deleted: false, recipients: [kit.recipient.id] });
  });

  it('filters the list by an attached recipient', async () => {
    const other = await ana.delivery.created<{ email: string }>('recipient', { email: 'other@acme.test' });
    await ana.created({ ...messengerRule(kit, 'For the other recipient', 'acme-bank.com'), recipients: [other.id] });
    await renderDashboard(t, `/rules?recipient=${other.id}`, { email: EMAIL });
    await screen.findByRole('link', { name: 'For the other recipient' });
    expect(screen.getAllByRole('row')).toHaveLength(2);
  });

  it("another organization's rule is not found", async () => {
    const gina = await rulesUser(t, 'Globex', 'gina@globex.test');
    const ginaKit = await createDeliveryKit(gina, { tag: 'globex' });
    const theirs = await gina.created(messengerRule(ginaKit, 'Globex watch', 'acme-bank.com'));
    await renderDashboard(t, `/rules/${theirs.id}`, { email: EMAIL });
    expect((await screen.findByRole('alert')).textContent).toMatch(/not found/i);
    expect(screen.queryByText('Globex watch')).toBeNull();
  });
});
