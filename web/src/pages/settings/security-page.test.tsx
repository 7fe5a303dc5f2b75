import { screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../test/support/test-app.ts';
import { TOTP_PERIOD_MS, totpCode, wrongCode } from '../../../../test/support/totp.ts';
import { unwrap } from '../../api/client.ts';
import {
  createTestApi,
  DEFAULT_PASSWORD,
  enableTwoFactor,
  renderDashboard,
  startTestServer,
} from '../../test/test-server.tsx';

const NEW_PASSWORD = 'a brand new passphrase 42';

describe('settings → security', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestServer();
    await t.createUser({ org: 'Acme', email: 'ana@acme.test' });
    await t.createUser({ org: 'Acme', email: 'pat@acme.test' });
    await t.createUser({ org: 'Acme', email: 'kim@acme.test' });
  });
  afterAll(() => t.close());

  it('turns 2FA on: the password, QR code and key, a code from the app, then the backup codes shown once and new tokens', async () => {
    const { api } = await renderDashboard(t, '/settings/security', { email: 'ana@acme.test' });
    const before = api.session.get()!;
    const user = userEvent.setup();
    const password = await screen.findByLabelText('Your password');
    await user.type(password, 'not the password at all');
    await user.click(screen.getByRole('button', { name: 'Set up two-factor authentication' }));
    await waitFor(() => expect(password.getAttribute('aria-invalid')).toBe('true'));
    expect(document.getElementById(password.getAttribute('aria-describedby')!)!.textContent).toMatch(
      /current password/,
    );

    await user.clear(password);
    await user.type(password, DEFAULT_PASSWORD);
    await user.click(screen.getByRole('button', { name: 'Set up two-factor authentication' }));

    const qr = await screen.findByRole('img', { name: /QR code/ });
    expect(qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    const seed = screen.getByLabelText('Key for manual entry').textContent!.replaceAll(' ', '');

    const code = screen.getByLabelText('Code from the app');
    await user.type(code, wrongCode(seed, t.clock.now()));
    await user.click(screen.getByRole('button', { name: 'Turn on' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/otp|code/i);

    await user.clear(code);
    await user.type(code, totpCode(seed, t.clock.now()));
    await user.click(screen.getByRole('button', { name: 'Turn on' }));
    const codes = await screen.findByRole('list', { name: 'Backup codes' });
    expect(codes.querySelectorAll('li')).toHaveLength(10);

    expect((await unwrap(api.client.GET('/service/account/'))).two_factor_enabled).toBe(true);
    // Sessions from before the enrolment are signed out; this one carries on with the new tokens.
    expect(api.session.get()!.refresh).not.toBe(before.refresh);
    expect(
      (await t.request({ method: 'POST', url: '/token/refresh/', body: { refresh: before.refresh } })).statusCode,
    ).toBe(401);
    // One of those codes signs in without the app.
    const backup = codes.querySelector('code')!.textContent!;
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/token/',
          body: { email: 'ana@acme.test', password: DEFAULT_PASSWORD, otp: backup },
        })
      ).statusCode,
    ).toBe(200);
  });

  it('renews the backup codes and turns 2FA off, each with the password and a code', async () => {
    const seed = await enableTwoFactor(t, 'kim@acme.test');
    t.clock.advance(TOTP_PERIOD_MS);
    const api = createTestApi(t);
    api.session.signIn(await t.login('kim@acme.test', DEFAULT_PASSWORD, totpCode(seed, t.clock.now())));
    const { view } = await renderDashboard(t, '/settings/security', { api });
    const user = userEvent.setup();
    t.clock.advance(TOTP_PERIOD_MS);
    const password = await screen.findByLabelText('Your password');
    await user.type(password, 'not the password at all');
    await user.type(screen.getByLabelText('Code from the app or a backup code'), totpCode(seed, t.clock.now()));
    await user.click(screen.getByRole('button', { name: 'New backup codes' }));
    await waitFor(() => expect(password.getAttribute('aria-invalid')).toBe('true'));

    await user.clear(password);
    await user.type(password, DEFAULT_PASSWORD);
    await user.click(screen.getByRole('button', { name: 'New backup codes' }));
    const codes = await screen.findByRole('list', { name: 'Backup codes' });
    expect(codes.querySelectorAll('li')).toHaveLength(10);
    const backup = codes.querySelector('code')!.textContent!;

    view.unmount();
    await renderDashboard(t, '/settings/security', { api });
    await user.type(await screen.findByLabelText('Your password'), DEFAULT_PASSWORD);
    await user.type(screen.getByLabelText('Code from the app or a backup code'), backup);
    await user.click(screen.getByRole('button', { name: 'Turn off two-factor authentication' }));
    await screen.findByRole('button', { name: 'Set up two-factor authentication' });
    expect((await unwrap(api.client.GET('/service/account/'))).two_factor_enabled).toBe(false);
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/token/',
          body: { email: 'kim@acme.test', password: DEFAULT_PASSWORD },
        })
      ).statusCode,
    ).toBe(200);
  });

  it("changes the password: the server's field errors beside the fields, then new tokens for this session", async () => {
    const { api } = await renderDashboard(t, '/settings/security', { email: 'pat@acme.test' });
    const before = api.session.get()!;
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Current password'), DEFAULT_PASSWORD);
    await user.type(screen.getByLabelText('New password'), NEW_PASSWORD);
    await user.type(screen.getByLabelText('New password again'), `${NEW_PASSWORD}!`);
    await user.click(screen.getByRole('button', { name: 'Change password' }));

    const confirm = screen.getByLabelText('New password again');
    await waitFor(() => expect(confirm.getAttribute('aria-invalid')).toBe('true'));
    expect(document.getElementById(confirm.getAttribute('aria-describedby')!)!.textContent).toMatch(/match/i);

    await user.clear(confirm);
    await user.type(confirm, NEW_PASSWORD);
    await user.click(screen.getByRole('button', { name: 'Change password' }));
    expect((await screen.findByRole('status')).textContent).toContain('Password changed');

    const after = api.session.get()!;
    expect(after.refresh).not.toBe(before.refresh);
    expect((await unwrap(api.client.GET('/service/account/'))).email).toBe('pat@acme.test');
    // Tokens from before the change no longer work anywhere.
    expect(
      (await t.request({ method: 'POST', url: '/token/refresh/', body: { refresh: before.refresh } })).statusCode,
    ).toBe(401);
    expect(
      (await t.request({ method: 'POST', url: '/token/', body: { email: 'pat@acme.test', password: NEW_PASSWORD } }))
        .statusCode,
    ).toBe(200);
  });
});
