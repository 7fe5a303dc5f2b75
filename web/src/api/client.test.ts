import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/support/test-app.ts';
import { createTestApi, DEFAULT_PASSWORD, startTestServer } from '../test/test-server.tsx';
import { unwrap } from './client.ts';
import { ApiError } from './errors.ts';

describe('the API client against the real server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestServer();
    await t.createUser({ org: 'Acme', email: 'ana@acme.test' });
    await t.container.organizations.create('MSSP');
    await t.container.organizations.create('Client One', { managedBy: 'MSSP' });
    await t.createUser({ org: 'MSSP', email: 'sam@mssp.test' });
  });
  afterAll(() => t.close());

  it('rejects with the error body of the server', async () => {
    const api = createTestApi(t);
    const failure = await api
      .signIn({ email: 'ana@acme.test', password: 'not the password' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 401, code: 'invalid_credentials' });
    expect((failure as ApiError).requestId).toEqual(expect.any(String));
    expect(api.session.get()).toBeNull();
  });

  it('sends the bearer token, and on a 401 exchanges the refresh token once and repeats the request', async () => {
    const api = createTestApi(t);
    await api.signIn({ email: 'ana@acme.test', password: DEFAULT_PASSWORD });
    const signedIn = api.session.get()!;
    // An access token the server no longer takes (as after it expired).
    api.session.setAccess(`${signedIn.access.slice(0, -4)}AAAA`);

    const account = await unwrap(api.client.GET('/service/account/'));
    expect(account.email).toBe('ana@acme.test');
    const refreshed = api.session.get()!;
    expect(refreshed.refresh).toBe(signedIn.refresh);
    expect(refreshed.access).not.toContain('AAAA');
  });

  it('keeps below the account-wide 25 requests per second by itself: a burst of 60 is paced, none refused', async () => {
    const api = createTestApi(t);
    await api.signIn({ email: 'ana@acme.test', password: DEFAULT_PASSWORD });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => api.client.GET('/service/account/').then(({ response }) => response.status)),
    );
    expect(answers.filter((status) => status !== 200)).toEqual([]);
    // 60 at 20 a second: the last ones wait for the third second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });

  it('shares the pace between page loads and tabs of one browser: two bursts of 30 at once, none refused', async () => {
    const [first, second] = [createTestApi(t), createTestApi(t)];
    await first.signIn({ email: 'ana@acme.test', password: DEFAULT_PASSWORD });
    await second.signIn({ email: 'ana@acme.test', password: DEFAULT_PASSWORD });
    const burst = (api: typeof first) =>
      Array.from({ length: 30 }, () => api.client.GET('/service/account/').then(({ response }) => response.status));
    const answers = await Promise.all([...burst(first), ...burst(second)]);
    expect(answers.filter((status) => status !== 200)).toEqual([]);
  });

  it('ends the session when the refresh token is refused too', async () => {
    const api = createTestApi(t);
    api.session.signIn({ access: 'not-a-token', refresh: 'not-a-refresh-token' });
    const failure = await unwrap(api.client.GET('/service/account/')).catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(api.session.get()).toBeNull();
    expect(api.session.lastSignOutReason()).toBe('expired');
  });

  it('refreshes the access token in the background before it expires', async () => {
    const api = createTestApi(t);
    await api.signIn({ email: 'ana@acme.test', password: DEFAULT_PASSWORD });
    const first = api.session.get()!;
    // As if the token had arrived a day ago: it is due now.
    localStorage.setItem('dragnet.session', JSON.stringify({ ...first, receivedAt: Date.now() - 86_400_000 }));
    const reloaded = createTestApi(t);
    const changed = new Promise<void>((resolve) => reloaded.session.subscribe(resolve));
    const stop = reloaded.startBackgroundRefresh();
    await changed;
    stop();
    expect(reloaded.session.get()!.access).not.toBe(first.access);
    expect(reloaded.session.get()!.receivedAt).toBeGreaterThan(Date.now() - 60_000);
    expect((await unwrap(reloaded.client.GET('/service/account/'))).email).toBe('ana@acme.test');
  });

  it('acts for the organization an MSSP account picked (X-Org-Id)', async () => {
    const api = createTestApi(t);
    await api.signIn({ email: 'sam@mssp.test', password: DEFAULT_PASSWORD });
    expect((await unwrap(api.client.GET('/service/organization/', { params: { query: {} } }))).name).toBe('MSSP');
    const managed = (await unwrap(api.client.GET('/service/organizations/'))).items.find(
      (org) => org.name === 'Client One',
    )!;
    api.session.setOrg(managed.id);
    expect((await unwrap(api.client.GET('/service/organization/', { params: { query: {} } }))).name).toBe('Client One');
  });
});
