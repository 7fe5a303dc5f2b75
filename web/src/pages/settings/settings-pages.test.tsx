import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryKit, messengerRule, rulesUser, type RulesApi } from '../../../../test/support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../../../../test/support/smtp-test-server.ts';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { NO_RATE_LIMITS } from '../../../../test/support/delivery-api.ts';
import { scaled } from '../../../../test/support/wait.ts';
import { renderDashboard, startTestServer } from '../../test/test-server.tsx';

const EMAIL = 'ana@acme.test';

type Listed = { results: Record<string, unknown>[] };

describe('the settings pages', () => {
  let t: TestApp;
  let ana: RulesApi;
  /** Plaintext SMTP without a login, as an SSL sender (spec 2.6) with no authentication speaks it. */
  let smtp: SmtpTestServer;
  beforeAll(async () => {
    [t, smtp] = await Promise.all([
      startTestServer({ env: NO_RATE_LIMITS }),
      startSmtpTestServer({ starttls: 'unsupported', auth: null }),
    ]);
    ana = await rulesUser(t, 'Acme', EMAIL);
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const list = (resource: string) =>
    ana.getJson<Listed>(`/service/alert_system_setting_get_${resource}_list/?page_size=100`);

  it('recipients: adds one (the server judges the address), and a recipient a rule uses cannot go, naming the rule', async () => {
    await renderDashboard(t, '/settings/recipients', { email: EMAIL });
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Email address'), 'not an address');
    await user.click(screen.getByRole('button', { name: 'Add recipient' }));
    const field = screen.getByLabelText('Email address');
    await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
    const expected = (
      await t.request({
        method: 'POST',
        url: '/service/alert_system_setting_create_recipient/',
        token: ana.token,
        body: { email: 'not an address' },
      })
    ).json();
    expect(field.closest('.field')!.textContent).toContain(expected.fields[0].message);

    await user.clear(field);
    await user.type(field, 'soc@acme.test');
    await user.click(screen.getByLabelText('Make it the default'));
    await user.click(screen.getByRole('button', { name: 'Add recipient' }));
    await screen.findByRole('cell', { name: 'soc@acme.test default' });
    expect((await list('recipient')).results).toEqual([
      expect.objectContaining({ email: 'soc@acme.test', is_default: true }),
    ]);

    const kit = await createDeliveryKit(ana, { tag: 'used' });
    await ana.created(messengerRule(kit, 'Uses it', 'acme-bank.com'));
    await renderDashboard(t, '/settings/recipients', { email: EMAIL });
    await user.click(await screen.findByRole('button', { name: `Delete ${kit.recipient.email}` }));
    await user.click(screen.getByRole('button', { name: `Delete ${kit.recipient.email}` }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Not deleted: .*Uses it/);
  });

  it('senders: the password is write-only; a test email goes out through the sender and shows in the delivery log', async () => {
    await renderDashboard(t, '/settings/senders', { email: EMAIL });
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('From address'), 'alerts@acme.test');
    await user.type(screen.getByLabelText('SMTP server'), '127.0.0.1');
    await user.clear(screen.getByLabelText('Port'));
    await user.type(screen.getByLabelText('Port'), String(smtp.port));
    await user.selectOptions(screen.getByLabelText('Encryption'), 'SSL');
    // With a login the password is asked for (and never shown again); without, neither is.
    expect((screen.getByLabelText('Password') as HTMLInputElement).type).toBe('password');
    await user.type(screen.getByLabelText('Password'), 'Secret-smtp-pass-1');
    await user.click(screen.getByLabelText('The server needs a login'));
    expect(screen.queryByLabelText('Password')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Add sender' }));
    await screen.findByRole('cell', { name: /^alerts@acme\.test/ });
    expect(document.body.textContent).not.toContain('Secret-smtp-pass-1');
    expect(JSON.stringify(await list('sender'))).not.toContain('password');

    await user.type(screen.getByLabelText('Send to'), 'soc@acme.test');
    await user.click(screen.getByRole('button', { name: 'Send test email' }));
    expect((await screen.findByRole('status')).textContent).toContain('Test email to soc@acme.test queued');
    const [mail] = await smtp.waitForMessages(1, scaled(15_000));
    expect(mail).toMatchObject({ from: 'alerts@acme.test', to: ['soc@acme.test'] });
    expect(mail!.parsed.subject).toMatch(/^\[Test\]/);
    await user.click(screen.getByRole('button', { name: 'Refresh' }));
    const log = await screen.findByRole('table', { name: 'Recent deliveries' });
    await waitFor(() =>
      expect(within(log).getByText('email · test email').closest('tr')!.textContent).toContain('sent'),
    );
  });

  it('webhooks: the signing secret is shown once, at creation; a test delivery reports how it went', async () => {
    const { view } = await renderDashboard(t, '/settings/webhooks', { email: EMAIL });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'New webhook' }));
    await user.type(screen.getByLabelText('Name'), 'SOC hook');
    await user.type(screen.getByLabelText('URL'), 'https://hooks.acme.test/dragnet');
    await user.type(screen.getByLabelText('Header 1 name'), 'X-Team');
    await user.type(screen.getByLabelText('Header 1 value'), 'soc');
    await user.click(screen.getByRole('button', { name: 'Create webhook' }));
    const secret = (await screen.findByTestId('webhook-secret')).textContent!;
    const [created] = (await list('webhook')).results;
    expect(created).toMatchObject({ name: 'SOC hook', headers: { 'X-Team': 'soc' }, secret });

    await user.click(screen.getByRole('button', { name: 'I stored it' }));
    expect(document.body.textContent).not.toContain(secret);
    view.unmount();
    await renderDashboard(t, '/settings/webhooks', { email: EMAIL });
    await screen.findByRole('cell', { name: /^SOC hook/ });
    expect(document.body.textContent).not.toContain(secret);

    // hooks.acme.test resolves nowhere: the attempt is recorded as failed and the page says why.
    await user.click(screen.getByRole('button', { name: 'Test SOC hook' }));
    expect((await screen.findByRole('status', {}, { timeout: scaled(15_000) })).textContent).toMatch(/^Failed: /);
  });

  it('templates: the preview fills the placeholders and warns of a missing one, which the server then refuses, beside the body', async () => {
    await renderDashboard(t, '/settings/templates', { email: EMAIL });
    const user = userEvent.setup();
    const create = (await screen.findByRole('button', { name: 'New template' })) as HTMLButtonElement;
    // It starts from the default template, once the list has come.
    await waitFor(() => expect(create.disabled).toBe(false));
    await user.click(create);
    await user.type(screen.getByLabelText('Name'), 'Short');
    const subject = screen.getByLabelText('Subject');
    await user.clear(subject);
    // user-event reads { as a key: {{ types one.
    await user.type(subject, '{{alert_rule_name}: {{number_of_hits} hits');
    const body = screen.getByLabelText('Body (HTML)');
    await user.clear(body);
    await user.type(body, '<p>{{alert_rule_name} on {{current_date}: {{number_of_hits} in {{service}</p>');
    await waitFor(() =>
      expect(screen.getByTestId('preview-subject').textContent).toBe('Acme Bank on messenger channels: 12 hits'),
    );
    expect(screen.getByText(/The body lacks \{match_detail_link\}/)).toBeTruthy();
    expect(
      within(screen.getByRole('list', { name: 'Placeholders' }))
        .getByText('{match_detail_link}')
        .closest('li')!.textContent,
    ).toContain('required, missing');

    await user.click(screen.getByRole('button', { name: 'Create template' }));
    const field = screen.getByLabelText('Body (HTML)');
    await waitFor(() => expect(field.getAttribute('aria-invalid')).toBe('true'));
    expect(field.closest('.field')!.textContent).toContain('{match_detail_link}');

    await user.type(field, '<a href="{{match_detail_link}">open</a>');
    await waitFor(() => expect(screen.queryByText(/The body lacks/)).toBeNull());
    await user.click(screen.getByRole('button', { name: 'Create template' }));
    await screen.findByRole('cell', { name: 'Short' });
    expect((await list('template')).results).toContainEqual(
      expect.objectContaining({ name: 'Short', subject: '{alert_rule_name}: {number_of_hits} hits' }),
    );
  });

  it('defaults: switching the default template is one change the server keeps', async () => {
    await renderDashboard(t, '/settings/defaults', { email: EMAIL });
    const user = userEvent.setup();
    const select = (await screen.findByLabelText('Email template')) as HTMLSelectElement;
    await waitFor(() => expect(select.disabled).toBe(false));
    await user.selectOptions(select, 'Short');
    await waitFor(async () => {
      const defaults = (await list('template')).results.filter((template) => template.is_default);
      expect(defaults.map((template) => template.name)).toEqual(['Short']);
    });
    expect(screen.getByText(/of at most 20/)).toBeTruthy();
  });

  it('usage: every limit as a bar with what is used and left', async () => {
    await renderDashboard(t, '/settings/usage', { email: EMAIL });
    const user = userEvent.setup();
    const meters = () =>
      [...document.querySelectorAll('meter')].map((meter) => [
        meter.getAttribute('aria-label'),
        meter.getAttribute('max'),
      ]);
    await waitFor(() =>
      expect(meters()).toContainEqual([expect.stringMatching(/^Messenger search: \d+ of 100 per day used$/), '100']),
    );
    expect(meters()).toContainEqual([expect.stringMatching(/^Whole account: \d+ of 25 per second used$/), '25']);
    await user.type(screen.getByLabelText('Find an endpoint'), 'messenger');
    await waitFor(() => expect(meters().every(([label]) => /^(Whole account|Messenger)/.test(label!))).toBe(true));
    expect(meters().length).toBeGreaterThan(3);
  });
});
