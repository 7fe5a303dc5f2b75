import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import axe from 'axe-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

type Listed = { results: { id: number; name: string; scope: string; status: string; expires_at: string | null }[] };

/** Serious and critical axe findings of the page (colour contrast needs a browser: the e2e suite checks it). */
async function seriousViolations(): Promise<string[]> {
  const { violations } = await axe.run(document.body, { rules: { 'color-contrast': { enabled: false } } });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

describe('settings → API keys', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer();
    await t.createUser({ org: 'Acme', email: EMAIL });
    token = (await t.login(EMAIL)).access;
  });
  afterAll(() => t.close());

  const listed = async () =>
    (await t.request({ method: 'GET', url: '/service/alert_system_api_key_list/', token })).json() as Listed;

  it('creates a key shown once with a warning and a copy button, lists it, and revokes it after confirmation', async () => {
    await renderDashboard(t, '/settings/api-keys', { email: EMAIL });
    const user = userEvent.setup();
    await screen.findByRole('heading', { name: 'API keys', level: 1 });
    expect(await screen.findByText('No API keys yet.')).toBeTruthy();
    expect(await seriousViolations()).toEqual([]);

    // The server judges the name: an empty one is refused, naming the field.
    await user.click(screen.getByRole('button', { name: 'Create key' }));
    const name = screen.getByLabelText('Name');
    await waitFor(() => expect(name.getAttribute('aria-invalid')).toBe('true'));

    await user.type(name, 'Splunk poller');
    await user.selectOptions(screen.getByLabelText('Scope'), 'read_write');
    await user.selectOptions(screen.getByLabelText('Expires'), '90');
    await user.click(screen.getByRole('button', { name: 'Create key' }));

    const shown = await screen.findByTestId('api-key');
    const key = shown.textContent!;
    expect(key).toMatch(/^dgk_/);
    const notice = screen.getByRole('status');
    expect(notice.textContent).toMatch(/shown only this once/);
    expect(within(notice).getByRole('button', { name: 'Copy the key' })).toBeTruthy();
    // The key works, as the creator.
    const account = await t.request({ method: 'GET', url: '/service/account/', token: key });
    expect(account.json()).toMatchObject({ email: EMAIL });

    const [stored] = (await listed()).results;
    expect(stored).toMatchObject({ name: 'Splunk poller', scope: 'read_write', status: 'active' });
    expect(Date.parse(stored!.expires_at!) - Date.now()).toBeGreaterThan(89 * 24 * 3600 * 1000);
    const row = (await screen.findByRole('cell', { name: 'Splunk poller' })).closest('tr')!;
    expect(row.textContent).toContain(key.slice(0, 12));
    expect(row.textContent).not.toContain(key.slice(12));
    expect(row.textContent).toContain('Never used');
    expect(await seriousViolations()).toEqual([]);

    // Once dismissed, the key is gone from the page for good.
    await user.click(within(notice).getByRole('button', { name: 'I stored it' }));
    expect(screen.queryByTestId('api-key')).toBeNull();
    expect(document.body.textContent).not.toContain(key.slice(12));

    await user.click(within(row).getByRole('button', { name: 'Revoke Splunk poller' }));
    expect((await listed()).results[0]!.status).toBe('active');
    await user.click(within(row).getByRole('button', { name: 'Revoke Splunk poller' }));
    await waitFor(async () => expect((await listed()).results[0]!.status).toBe('revoked'));
    await waitFor(() => expect(row.textContent).toMatch(/Revoked/));
    expect((await t.request({ method: 'GET', url: '/service/account/', token: key })).statusCode).toBe(401);
  });
});
