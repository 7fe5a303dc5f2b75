import { screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/support/test-app.ts';
import { renderDashboard, startTestServer } from '../test/test-server.tsx';

describe('the organization switcher', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestServer();
    await t.container.organizations.create('MSSP');
    await t.container.organizations.create('Client One', { managedBy: 'MSSP' });
    await t.createUser({ org: 'MSSP', email: 'sam@mssp.test' });
    await t.createUser({ org: 'Client One', email: 'cleo@client.test' });
    // One search in the MSSP's own history, none in its client's.
    const { access } = await t.login('sam@mssp.test');
    await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: access,
      body: { query: 'mssp own search' },
    });
  });
  afterAll(() => t.close());

  it("lets an MSSP account act for an organization it manages, showing that organization's data", async () => {
    const { api, history } = await renderDashboard(t, '/search/history', { email: 'sam@mssp.test' });
    expect(await screen.findByText('mssp own search')).toBeTruthy();

    const select = await screen.findByLabelText('Organization');
    expect([...select.querySelectorAll('option')].map((option) => option.textContent)).toEqual(
      expect.arrayContaining(['MSSP (yours)', 'Client One']),
    );
    await userEvent.setup().selectOptions(select, 'Client One');

    expect(await screen.findByText(/No searches yet/)).toBeTruthy();
    expect(screen.queryByText('mssp own search')).toBeNull();
    expect(api.session.get()!.orgId).toEqual(expect.any(Number));
    expect(history.location.pathname).toBe('/search/history');

    await userEvent.setup().selectOptions(select, 'MSSP (yours)');
    expect(await screen.findByText('mssp own search')).toBeTruthy();
    expect(api.session.get()!.orgId).toBeNull();
  });

  it('is not shown to an account with one organization', async () => {
    await renderDashboard(t, '/search/history', { email: 'cleo@client.test' });
    await waitFor(() => expect(screen.getAllByText('cleo@client.test').length).toBeGreaterThan(0));
    expect(screen.queryByLabelText('Organization')).toBeNull();
  });
});
