/** One limit's window as the response headers describe it. */
export interface WindowState {
  limit: number;
  used: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * X-RateLimit-* describe the endpoint's daily window (spec 8.1.5), X-RateLimit-Account-* the
 * account's monthly one (docs/api.md "Rate limits"); `givenBack` units were refunded.
 */
export function rateLimitHeaders(
  endpoint: WindowState | null,
  account: WindowState | null,
  givenBack = 0,
): Record<string, number> {
  const headers: Record<string, number> = {};
  if (endpoint) {
    headers['x-ratelimit-limit'] = endpoint.limit;
    headers['x-ratelimit-remaining'] = Math.min(endpoint.limit, endpoint.remaining + givenBack);
    headers['x-ratelimit-reset'] = endpoint.resetSeconds;
  }
  if (account) {
    headers['x-ratelimit-account-limit'] = account.limit;
    headers['x-ratelimit-account-remaining'] = Math.min(account.limit, account.remaining + givenBack);
    headers['x-ratelimit-account-reset'] = account.resetSeconds;
  }
  return headers;
}
