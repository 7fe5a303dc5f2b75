import { createOutboundHttp, type OutboundGuard } from '../../../lib/outbound/index.ts';
import { describe, type SendOutcome } from '../webhook/webhook-transport.ts';

export interface HecTarget {
  url: string;
  token: string;
  verifyTls: boolean;
  caPem: string | null;
}

/** The most of a collector's answer read: HEC's is a line of JSON. */
const ANSWER_LIMIT = 64 * 1024;

/** Why HEC's answer is not a success, or null when it is (2xx and `"code": 0`). */
function hecRefusal(statusCode: number, text: string): string | null {
  let answer: { text?: unknown; code?: unknown } | null = null;
  try {
    answer = JSON.parse(text) as { text?: unknown; code?: unknown };
  } catch {
    // not JSON: judged by the status alone below
  }
  const said = answer && typeof answer.text === 'string' ? `: ${answer.text} (code ${String(answer.code)})` : '';
  if (statusCode < 200 || statusCode >= 300) return `collector answered ${statusCode}${said}`;
  if (!answer || answer.code !== 0) return `collector answered ${statusCode} without HEC's success code 0${said}`;
  return null;
}

/**
 * Splunk HTTP Event Collector: POST the events (batched, several per body) with
 * `Authorization: Splunk <token>`; a body counts only when HEC answers 2xx with `"code": 0`.
 * Every connection goes through the outbound guard, as webhooks do; no redirect is followed.
 */
export function createHecTransport(deps: { guard: OutboundGuard; timeoutMs: number }) {
  return {
    async send(target: HecTarget, bodies: Buffer[]): Promise<SendOutcome> {
      const started = performance.now();
      const finish = (outcome: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({
        ...outcome,
        durationMs: Math.round(performance.now() - started),
      });
      // A client per send: each target has its own TLS trust (a private CA, verification off).
      const http = createOutboundHttp(deps.guard, {
        timeoutMs: deps.timeoutMs,
        tls: { rejectUnauthorized: target.verifyTls, ...(target.caPem ? { ca: target.caPem } : {}) },
      });
      let statusCode: number | null = null;
      try {
        for (const [i, body] of bodies.entries()) {
          const response = await http.request(new URL(target.url), {
            method: 'POST',
            body,
            headers: {
              authorization: `Splunk ${target.token}`,
              'content-type': 'application/json',
              'user-agent': 'Dragnet',
            },
            signal: AbortSignal.timeout(deps.timeoutMs),
          });
          statusCode = response.statusCode;
          const text = (await response.body.text()).slice(0, ANSWER_LIMIT);
          const refusal = hecRefusal(response.statusCode, text);
          if (refusal) {
            const which = bodies.length > 1 ? ` (batch ${i + 1} of ${bodies.length})` : '';
            return finish({ ok: false, statusCode, error: `${refusal}${which}` });
          }
        }
        return finish({ ok: true, statusCode, error: null });
      } catch (error) {
        return finish({ ok: false, statusCode, error: describe(error, deps.timeoutMs) });
      } finally {
        await http.close();
      }
    },
  };
}

export type HecTransport = ReturnType<typeof createHecTransport>;
