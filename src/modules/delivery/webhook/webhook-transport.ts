import type { Clock } from '../../../lib/clock.ts';
import { BlockedAddressError, type OutboundHttp } from '../../../lib/outbound/index.ts';
import { alertSystemSignature, standardWebhookHeaders } from './signing.ts';

export interface WebhookTarget {
  url: string;
  headers: Record<string, string>;
  secret: string | null;
}

export interface SendOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const USER_AGENT = 'AlertSystem/1.0';

/**
 * spec 6.2: POST with a compact JSON body, a 30-second timeout (configurable for tests), no
 * retry, any 2xx is success. Redirects are not followed (a redirect could point anywhere).
 * `http` goes through the outbound guard: only public addresses or the operator's allow-list.
 */
export function createWebhookTransport(deps: { http: OutboundHttp; timeoutMs: number; clock: Clock }) {
  return {
    async send(target: WebhookTarget, payload: object): Promise<SendOutcome> {
      const started = performance.now();
      const finish = (outcome: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({
        ...outcome,
        durationMs: Math.round(performance.now() - started),
      });
      try {
        const url = new URL(target.url);
        const body = Buffer.from(JSON.stringify(payload));
        const headers: Record<string, string> = {
          ...target.headers,
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
        };
        if (target.secret) {
          headers['x-alertsystem-signature'] = alertSystemSignature(target.secret, body);
          Object.assign(headers, standardWebhookHeaders(target.secret, body, deps.clock.now()));
        }
        const response = await deps.http.request(url, {
          method: 'POST',
          body,
          headers,
          signal: AbortSignal.timeout(deps.timeoutMs),
        });
        await response.body.dump({ limit: 64 * 1024 });
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        return finish({
          ok,
          statusCode: response.statusCode,
          error: ok ? null : `receiver answered ${response.statusCode}`,
        });
      } catch (error) {
        return finish({ ok: false, statusCode: null, error: describe(error, deps.timeoutMs) });
      }
    },
    close: () => deps.http.close(),
  };
}

/** A failed send's error as the delivery log shows it: a refusal, a timeout or the error's own message. */
export function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: unknown };
  if (error instanceof BlockedAddressError) return `refused: ${error.message}`;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  return e.message ?? String(error);
}

export type WebhookTransport = ReturnType<typeof createWebhookTransport>;
