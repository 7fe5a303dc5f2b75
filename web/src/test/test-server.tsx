import { createMemoryHistory } from '@tanstack/react-router';
import { render } from '@testing-library/react';
import type { ManualClock } from '../../../src/lib/clock.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from '../../../test/support/test-app.ts';
import { totpCode } from '../../../test/support/totp.ts';
import { createApi, type Api } from '../api/client.ts';
import { createSessionStore } from '../api/session.ts';
import { App } from '../app.tsx';

/**
 * Component tests run the dashboard against a real Dragnet app on a fresh store (SQLite, or
 * PostgreSQL with DRAGNET_TEST_DATABASE_URL), reached through app.inject instead of a socket:
 * every answer, error body and token is the server's own. `env` configures the app (a suite
 * whose setup calls the API in bursts beside the page turns the 25-per-second limit off with
 * DRAGNET_RATE_LIMITS: 'off').
 */
export async function startTestServer(options: { env?: Record<string, string> } = {}): Promise<TestApp> {
  return createTestApp({ clock: realTimeClock(), ...options });
}

/**
 * The browser side runs on real time (token refresh, debounces), so the server does too: tokens,
 * TOTP steps and rate-limit windows move as they would in use. A test may still move it.
 */
function realTimeClock(): ManualClock {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    set: (at) => {
      offset = new Date(at).getTime() - Date.now();
    },
    advance: (milliseconds) => {
      offset += milliseconds;
    },
  };
}

const BASE_URL = 'http://dragnet.test';

/** A fetch that hands each request to the app and its answer back as a Response. */
export function fetchThrough(t: TestApp): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const body = Buffer.from(await request.arrayBuffer());
    const answer = await t.app.inject({
      method: request.method as 'GET',
      url: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      ...(body.length ? { payload: body } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304 || request.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(answer.rawPayload), { status: answer.statusCode, headers });
  };
}

/** `sent`, when given, collects every request the dashboard makes (with its headers). */
export function createTestApi(t: TestApp, options: { sent?: Request[] } = {}): Api {
  const through = fetchThrough(t);
  const fetch: typeof through = (input, init) => {
    const request = new Request(input, init);
    options.sent?.push(request.clone());
    return through(request);
  };
  return createApi({ session: createSessionStore(localStorage), baseUrl: BASE_URL, fetch });
}

/** Renders the whole dashboard at `path`, signed in as `email` when given. */
export async function renderDashboard(t: TestApp, path: string, options: { email?: string; api?: Api } = {}) {
  const api = options.api ?? createTestApi(t);
  if (options.email) api.session.signIn(await t.login(options.email));
  const history = createMemoryHistory({ initialEntries: [path] });
  const view = render(<App api={api} history={history} />);
  return { api, history, view };
}

/** Turns 2FA on for a user through the API, as the security page would; returns the seed. */
export async function enableTwoFactor(t: TestApp, email: string): Promise<string> {
  const { access } = await t.login(email);
  const setup = await t.request({
    method: 'POST',
    url: '/service/setup_2fa/',
    token: access,
    body: { password: DEFAULT_PASSWORD },
  });
  const { seed } = setup.json() as { seed: string };
  const verify = await t.request({
    method: 'POST',
    url: '/service/verify_2fa_enrollment/',
    token: access,
    body: { otp: totpCode(seed, t.clock.now()) },
  });
  if (verify.statusCode !== 200) throw new Error(`2FA enrolment failed: ${verify.body}`);
  return seed;
}

export { DEFAULT_PASSWORD };
