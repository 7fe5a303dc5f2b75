import createClient, { type Client } from 'openapi-fetch';
import { ApiError } from './errors.ts';
import { createPacer } from './pacing.ts';
import type { paths } from './schema.gen.ts';
import { tokenLifetime, type SessionStore } from './session.ts';

export type ApiClient = Client<paths>;

export interface Api {
  /** Typed calls of every API operation: `api.client.GET('/service/account/')`. */
  client: ApiClient;
  session: SessionStore;
  /** POST /token/; rejects with ApiError (code `otp_required` when the account has 2FA). */
  signIn(credentials: { email: string; password: string; otp?: string }): Promise<void>;
  signOut(): void;
  /** Keeps the access token fresh while the dashboard is open; returns the stop function. */
  startBackgroundRefresh(): () => void;
}

/** Refresh this long before the access token expires (it lives 24 hours). */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** After a refresh that failed for a reason other than an expired refresh token. */
const REFRESH_RETRY_MS = 60_000;
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Below the account-wide 25 per second, leaving room for the organization's other clients. */
const REQUESTS_PER_SECOND = 20;

/**
 * The API client: openapi-fetch over the server's own OpenAPI types, with a fetch that adds the
 * bearer token and the acting organization (X-Org-Id) to every request, and on a 401 exchanges
 * the refresh token once and repeats the request (spec 5.4). When the refresh token is refused
 * too, the session ends and the app shows the sign-in page.
 */
export function createApi(options: { session: SessionStore; baseUrl?: string; fetch?: typeof fetch }): Api {
  const { session } = options;
  const baseUrl = options.baseUrl ?? window.location.origin;
  const nextTurn = createPacer(REQUESTS_PER_SECOND);
  const send = async (request: Request): Promise<Response> => {
    await nextTurn();
    try {
      return await (options.fetch ?? fetch)(request);
    } catch (error) {
      throw ApiError.network(error);
    }
  };

  const authorized = (request: Request): Request => {
    const state = session.get();
    if (!state) return request;
    const headers = new Headers(request.headers);
    headers.set('authorization', `Bearer ${state.access}`);
    if (state.orgId !== null) headers.set('x-org-id', String(state.orgId));
    return new Request(request, { headers });
  };

  let refreshing: Promise<boolean> | null = null;
  /** Exchanges the refresh token for a new access token; false when the session is over. */
  const refresh = (): Promise<boolean> => {
    refreshing ??= (async () => {
      const state = session.get();
      if (!state) return false;
      const { data, error, response } = await client.POST('/token/refresh/', { body: { refresh: state.refresh } });
      if (data) {
        // A sign-out or another sign-in meanwhile wins over this late answer.
        if (session.get()?.refresh === state.refresh) session.setAccess(data.access);
        return true;
      }
      if (response.status === 401 || response.status === 400) {
        if (session.get()?.refresh === state.refresh) session.signOut('expired');
        return false;
      }
      throw ApiError.from(response, error);
    })().finally(() => (refreshing = null));
    return refreshing;
  };

  const authFetch = async (request: Request): Promise<Response> => {
    if (new URL(request.url).pathname.startsWith('/token/') || !session.get()) return send(request);
    const again = request.clone();
    const response = await send(authorized(request));
    if (response.status !== 401) return response;
    return (await refresh()) ? send(authorized(again)) : response;
  };

  const client = createClient<paths>({ baseUrl, fetch: authFetch });

  return {
    client,
    session,
    async signIn(credentials) {
      const { data, error, response } = await client.POST('/token/', { body: credentials });
      if (!data) throw ApiError.from(response, error);
      session.signIn(data);
    },
    signOut: () => session.signOut('user'),
    startBackgroundRefresh() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const schedule = () => {
        clearTimeout(timer);
        const state = session.get();
        const lifetime = state && tokenLifetime(state.access);
        if (!lifetime) return;
        const due = Math.min(
          Math.max(state.receivedAt + lifetime * 1000 - REFRESH_MARGIN_MS - Date.now(), 0),
          MAX_TIMER_MS,
        );
        timer = setTimeout(() => {
          refresh().catch(() => {
            clearTimeout(timer);
            timer = setTimeout(schedule, REFRESH_RETRY_MS);
          });
        }, due);
      };
      schedule();
      const unsubscribe = session.subscribe(schedule);
      return () => {
        unsubscribe();
        clearTimeout(timer);
      };
    },
  };
}

/**
 * The data of an openapi-fetch call, or its error as an ApiError carrying the server's body.
 * Query and mutation functions use it so TanStack Query sees failures as rejections.
 */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw ApiError.from(response, error);
  return data as T;
}
