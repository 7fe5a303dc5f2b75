import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/** A new webhook secret: 32 CSPRNG bytes in the Standard Webhooks form `whsec_<base64>`. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * spec 6.2: `X-AlertSystem-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes>`, keyed
 * with the secret string exactly as the API returned it.
 */
export const alertSystemSignature = (secret: string, body: Buffer): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * Standard Webhooks (standardwebhooks.com): HMAC-SHA256 keyed with the base64-decoded part of
 * `whsec_…`, over `<id>.<timestamp>.<body>`, sent as `v1,<base64>`. Receivers reject replays by
 * the id and a timestamp outside their tolerance.
 */
export function standardWebhookHeaders(secret: string, body: Buffer, now: Date): Record<string, string> {
  const id = `msg_${randomUUID()}`;
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
