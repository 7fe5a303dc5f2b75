import { screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/support/test-app.ts';
import { nextStepCode, wrongCode } from '../../../test/support/totp.ts';
import {
  createTestApi,
  DEFAULT_PASSWORD,
  enableTwoFactor,
  renderDashboard,
  startTestServer,
} from '../test/test-server.tsx';

describe('signing in', () => {
  let t: TestApp;
  let seed: string;
  beforeAll(async () => {
    t = await startTestServer();
    await t.createUser({ org: 'Acme', email: 'ana@acme.test' });
    await t.createUser({ org: 'Acme', email: 'tom@acme.test' });
    seed = await enableTwoFactor(t, 'tom@acme.test');
  });
  afterAll(() => t.close());

  const fillPassword = async (email: string, password: string) => {
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Email'), email);
    await user.type(screen.getByLabelText('Password'), password);
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    return user;
  };

  it('asks a visitor to sign in, then opens the page they asked for', async () => {
    const { history, api } = await renderDashboard(t, '/settings/security');
    await waitFor(() => expect(history.location.pathname).toBe('/sign-in'));
    await fillPassword('ana@acme.test', DEFAULT_PASSWORD);

    expect(await screen.findByRole('heading', { name: 'Security' })).toBeTruthy();
    expect(history.location.pathname).toBe('/settings/security');
    expect(api.session.get()?.refresh).toEqual(expect.any(String));
    expect((await screen.findAllByText('ana@acme.test')).length).toBeGreaterThan(0);
  });

  it("shows the server's message when the password is wrong, and stays on the sign-in page", async () => {
    const expected = (
      await t.request({ method: 'POST', url: '/token/', body: { email: 'ana@acme.test', password: 'wrong password!' } })
    ).json().message;
    const { history, api } = await renderDashboard(t, '/sign-in');
    await fillPassword('ana@acme.test', 'wrong password!');

    expect((await screen.findByRole('alert')).textContent).toContain(expected);
    expect(history.location.pathname).toBe('/sign-in');
    expect(api.session.get()).toBeNull();
  });

  it('asks for the authenticator code of a 2FA account, refuses a wrong one, accepts a right one', async () => {
    const { history } = await renderDashboard(t, '/sign-in?redirect=%2Fsearch%2Fhistory');
    const user = await fillPassword('tom@acme.test', DEFAULT_PASSWORD);

    const code = await screen.findByLabelText('Authentication code');
    expect(screen.queryByRole('alert')).toBeNull();
    await user.type(code, wrongCode(seed, t.clock.now()));
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/code/i);
    // Said once: the message, not also its field's words in a list below it.
    expect(document.body.textContent!.match(/invalid, expired or already used/g)).toHaveLength(1);
    expect(within(alert).queryByRole('list')).toBeNull();
    expect(history.location.pathname).toBe('/sign-in');

    await user.clear(code);
    await user.type(code, nextStepCode(seed, t.clock.now()));
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByRole('heading', { name: 'Search history' })).toBeTruthy();
    expect(history.location.pathname).toBe('/search/history');
  });

  it('while guesses from elsewhere slow a 2FA account down, offers to sign in at once with the password and a code', async () => {
    await t.createUser({ org: 'Acme', email: 'sam@acme.test' });
    const samSeed = await enableTwoFactor(t, 'sam@acme.test');
    // Enrolment signed in from this browser's address; 91 days later it is no longer an address
    // the account is known at, which the account-wide delay would let through (docs/api.md).
    t.clock.advance(91 * 24 * 3600 * 1000);
    // Guesses from other addresses, none from this browser's, past the account-wide limit (5),
    // each after the delay the one before set: the next attempt must wait 16 s.
    for (let i = 1; i <= 9; i++) {
      const guess = () =>
        t.app.inject({
          method: 'POST',
          url: '/token/',
          payload: { email: 'sam@acme.test', password: `guess ${i} of many` },
          remoteAddress: `10.20.0.${i}`,
        });
      let answer = await guess();
      if (answer.statusCode === 429) {
        t.clock.advance(Number(answer.headers['retry-after']) * 1000);
        answer = await guess();
      }
      expect(answer.statusCode).toBe(401);
    }
    const { history } = await renderDashboard(t, '/sign-in');
    const user = await fillPassword('sam@acme.test', DEFAULT_PASSWORD);
    expect((await screen.findByRole('alert')).textContent).toMatch(/too many/i);

    await user.click(screen.getByRole('button', { name: 'Sign in now with a 2FA code' }));
    await user.type(await screen.findByLabelText('Authentication code'), nextStepCode(samSeed, t.clock.now()));
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByRole('heading', { name: 'Search' })).toBeTruthy();
    expect(history.location.pathname).toBe('/search');
  });

  it('signs out: the tokens are forgotten, pages ask to sign in again, and no request goes out without a token', async () => {
    const sent: Request[] = [];
    const { history, api } = await renderDashboard(t, '/settings/security', {
      email: 'ana@acme.test',
      api: createTestApi(t, { sent }),
    });
    await screen.findByRole('heading', { name: 'Two-factor authentication' });
    await waitFor(() => expect(screen.getAllByText('ana@acme.test').length).toBeGreaterThan(0));
    const before = sent.length;
    await userEvent.setup().click(await screen.findByRole('button', { name: 'Sign out' }));

    await waitFor(() => expect(history.location.pathname).toBe('/sign-in'));
    await screen.findByRole('button', { name: 'Sign in' });
    expect(api.session.get()).toBeNull();
    expect(localStorage.getItem('dragnet.session')).toBeNull();
    expect(screen.queryByText(/session has expired/)).toBeNull();
    // The account query of the page just left used to run again without a token: a 401 each time.
    expect(sent.slice(before).map((request) => `${request.method} ${new URL(request.url).pathname}`)).toEqual([]);
    expect(before).toBeGreaterThan(0);
  });

  it('when the session can no longer be refreshed, says so and returns to the page after signing in', async () => {
    const { history, api } = await renderDashboard(t, '/search/history');
    api.session.signIn({ access: 'expired.access.token', refresh: 'expired.refresh.token' });
    history.push('/search/history?page=2');

    expect(await screen.findByText(/session has expired/)).toBeTruthy();
    expect(history.location.pathname).toBe('/sign-in');
    await fillPassword('ana@acme.test', DEFAULT_PASSWORD);
    await waitFor(() => expect(history.location.href).toBe('/search/history?page=2'));
  });
});
