import { screen, waitFor, within } from '@testing-library/react';
import axe from 'axe-core';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { createDeliveryKit, messengerRule, rulesUser, type RulesApi } from '../../../../test/support/rules-api.ts';
import { startHecReceiver, type HecReceiver } from '../../../../test/support/siem-receivers.ts';
import { testCertificate, type TestCertificate } from '../../../../test/support/smtp-test-server.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';
const TOKEN = '0c9a7d55-41b2-4f0e-8a3c-6e2d1b9f7a10';

type Target = { id: number; name: string; kind: string; has_token: boolean };

/**
 * axe-core's serious and critical findings on the page as drawn in jsdom (colour contrast needs a
 * browser's layout: web/e2e/accessibility.e2e.test.ts checks it in Chromium).
 */
async function axeFindings() {
  const { violations, passes } = await axe.run(document.body, {
    resultTypes: ['violations'],
    rules: { 'color-contrast': { enabled: false } },
  });
  // The checks ran on the page (names, roles, attributes), not on an empty document.
  expect(passes.length).toBeGreaterThan(10);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('Settings → SIEM forwarding and the rule form’s SIEM targets', () => {
  let t: TestApp;
  let ana: RulesApi;
  let cert: TestCertificate;
  let hec: HecReceiver;
  beforeAll(async () => {
    cert = await testCertificate();
    [t, hec] = await Promise.all([startTestServer({ env: NO_RATE_LIMITS }), startHecReceiver(cert, TOKEN)]);
    ana = await rulesUser(t, 'Acme', EMAIL);
  });
  afterAll(async () => {
    await t.close();
    await hec.close();
  });

  const targets = async () =>
    (await ana.getJson<{ results: Target[] }>('/service/alert_system_setting_get_siem_target_list/')).results;

  it('creates an HEC target with a write-only token, sends a test event, edits it keeping the token, deletes it', async () => {
    await renderDashboard(t, '/settings/siem', { email: EMAIL });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'New SIEM target' }));
    await user.type(screen.getByLabelText('Name'), 'Splunk');
    await user.type(screen.getByLabelText('Collector URL'), hec.url);
    const token = screen.getByLabelText('HEC token') as HTMLInputElement;
    expect(token.type).toBe('password');
    await user.type(token, TOKEN);
    expect(await axeFindings()).toEqual([]);
    await user.click(screen.getByLabelText('CA certificate (PEM)'));
    await user.paste(cert.cert);
    await user.click(screen.getByRole('button', { name: 'Create the target' }));

    const row = (await screen.findByRole('cell', { name: 'Splunk' })).closest('tr')!;
    expect(within(row).getByRole('cell', { name: hec.url })).toBeTruthy();
    expect(document.body.textContent).not.toContain(TOKEN);
    expect(await targets()).toEqual([expect.objectContaining({ name: 'Splunk', kind: 'splunk_hec', has_token: true })]);

    await user.click(within(row).getByRole('button', { name: 'Test Splunk' }));
    expect((await within(row).findByRole('status')).textContent).toBe('Delivered');
    expect(hec.requests.at(-1)!.authorization).toBe(`Splunk ${TOKEN}`);
    expect(await axeFindings()).toEqual([]);

    await user.click(within(row).getByRole('button', { name: 'Edit Splunk' }));
    expect((screen.getByLabelText('HEC token') as HTMLInputElement).value).toBe('');
    expect(screen.getByText(/A token is stored and never shown/)).toBeTruthy();
    const name = screen.getByLabelText('Name');
    await user.clear(name);
    await user.type(name, 'Splunk prod');
    await user.click(screen.getByRole('button', { name: 'Save the target' }));
    await screen.findByRole('cell', { name: 'Splunk prod' });
    expect(await targets()).toEqual([expect.objectContaining({ name: 'Splunk prod', has_token: true })]);

    await user.click(screen.getByRole('button', { name: 'Delete Splunk prod' }));
    await user.click(screen.getByRole('button', { name: 'Delete Splunk prod' }));
    await screen.findByText('No SIEM targets yet.');
    expect(await targets()).toEqual([]);
  });

  it("shows a syslog target's own fields, and the server's error beside the field", async () => {
    await renderDashboard(t, '/settings/siem', { email: EMAIL });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'New SIEM target' }));
    await user.selectOptions(screen.getByLabelText('Kind'), 'syslog');
    expect(screen.queryByLabelText('Collector URL')).toBeNull();
    expect(await axeFindings()).toEqual([]);
    await user.type(screen.getByLabelText('Name'), 'rsyslog');
    await user.type(screen.getByLabelText('Host'), 'bad host');
    await user.selectOptions(screen.getByLabelText('Message format'), 'cef');
    await user.click(screen.getByRole('button', { name: 'Create the target' }));
    const host = screen.getByLabelText('Host');
    await waitFor(() => expect(host.getAttribute('aria-invalid')).toBe('true'));
    expect(host.closest('.field')!.textContent).toContain('must be a host name or an IP address');
    await user.clear(host);
    await user.type(host, 'siem.acme.test');
    await user.click(screen.getByRole('button', { name: 'Create the target' }));
    const row = (await screen.findByRole('cell', { name: 'rsyslog' })).closest('tr')!;
    expect(within(row).getByRole('cell', { name: 'siem.acme.test:6514' })).toBeTruthy();
    expect(within(row).getByRole('cell', { name: 'CEF' })).toBeTruthy();
  });

  it('attaches SIEM targets to a rule from the rule form', async () => {
    const [target] = await targets();
    const kit = await createDeliveryKit(ana, { tag: 'siem' });
    const rule = await ana.created(messengerRule(kit, 'Forwarded', 'acme-bank.com'));
    const { history } = await renderDashboard(t, `/rules/${rule.id}/edit`, { email: EMAIL });
    const user = userEvent.setup();
    const box = (await screen.findByRole('checkbox', { name: target!.name })) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(await axeFindings()).toEqual([]);
    await user.click(box);
    await user.click(screen.getByRole('button', { name: 'Save the rule' }));
    await waitFor(() => expect(history.location.pathname).toBe(`/rules/${rule.id}`));
    expect(await ana.find(rule.id)).toMatchObject({ siem_targets: [target!.id] });
    // The rule page names it.
    const term = await screen.findByText('SIEM targets', { selector: 'dt' });
    await waitFor(() => expect(term.nextElementSibling!.textContent).toBe(target!.name));
  });
});
