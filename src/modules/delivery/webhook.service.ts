import type { Selectable } from 'kysely';
import type { WebhookTable } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { validationError } from '../../lib/errors.ts';
import type { DefaultableStore } from './defaultable-store.ts';
import type { RefuseIfReferenced } from './delivery-references.ts';
import { bool, iso } from './row-values.ts';
import { newWebhookSecret } from './webhook/signing.ts';

export type WebhookRow = Selectable<WebhookTable>;

export interface WebhookInput {
  name: string;
  url: string;
  headers?: Record<string, string>;
  is_default?: boolean;
}

/** Header names a webhook's custom headers cannot set (docs/api.md): Dragnet sets them. */
const RESERVED_WEBHOOK_HEADERS = new Set([
  'content-type',
  'user-agent',
  'x-alertsystem-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);
/**
 * Hop-by-hop and framing headers (RFC 9110 7.6.1, 9112): set by a tenant they would change how
 * the request is framed or routed (a second request smuggled in the body, an Upgrade, a proxy's
 * credentials), not just what the receiver reads.
 */
const FRAMING_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'http2-settings',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space and tab (RFC 9110 5.5 without obs-text): nothing a parser could read as a line end. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** A webhook as the API returns it, and as it is sent to: headers and secret opened. */
export const webhookView = (keys: KeyRing, row: WebhookRow) => ({
  id: Number(row.id),
  name: row.name,
  url: row.url,
  headers: JSON.parse(keys.decryptSecret(row.headers_sealed)) as Record<string, string>,
  secret: keys.decryptSecret(row.secret_sealed),
  is_default: bool(row.is_default),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

/** The URLs an organization's rules notify, with their custom headers and signing secret. */
export function createWebhookService(deps: {
  clock: Clock;
  keys: KeyRing;
  store: DefaultableStore<WebhookRow>;
  refuseIfReferenced: RefuseIfReferenced;
}) {
  const { clock, keys, store: webhooks, refuseIfReferenced } = deps;
  const view = (row: WebhookRow) => webhookView(keys, row);

  function checkedWebhook(input: WebhookInput) {
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      throw validationError('url', 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('url', 'must use http or https');
    if (url.username || url.password) throw validationError('url', 'must not carry credentials; use headers');
    const headers = input.headers ?? {};
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (!HEADER_NAME.test(name)) throw validationError(`headers.${name}`, 'is not a valid header name');
      if (RESERVED_WEBHOOK_HEADERS.has(lower))
        throw validationError(`headers.${name}`, 'is set by Dragnet and cannot be overridden');
      if (FRAMING_HEADERS.has(lower) || lower.startsWith('proxy-'))
        throw validationError(`headers.${name}`, 'is a hop-by-hop or framing header and cannot be set');
      if (!HEADER_VALUE.test(value))
        throw validationError(
          `headers.${name}`,
          'must be printable ASCII: no control characters, line breaks or non-ASCII characters',
        );
    }
    if (!input.name.trim()) throw validationError('name', 'must not be empty');
    return {
      name: input.name.trim(),
      url: input.url,
      headers_sealed: keys.encryptSecret(JSON.stringify(headers)),
      updated_at: clock.now().getTime(),
    };
  }

  return {
    list: async (orgId: number, page: { offset: number; limit: number }) => {
      const { rows, total } = await webhooks.list(orgId, page);
      return { results: rows.map(view), total };
    },
    get: async (orgId: number, id: number) => view(await webhooks.get(orgId, id)),
    async create(orgId: number, input: WebhookInput) {
      // spec 2.8: the secret is always the server's own; any value sent is ignored.
      const values = { ...checkedWebhook(input), secret_sealed: keys.encryptSecret(newWebhookSecret()) };
      return view(await webhooks.create(orgId, values, input.is_default));
    },
    update: async (orgId: number, id: number, input: WebhookInput) =>
      view(await webhooks.update(orgId, id, checkedWebhook(input), input.is_default)),
    delete: (orgId: number, id: number) =>
      webhooks.delete(orgId, id, (_row, tx) => refuseIfReferenced(orgId, 'webhook', id, tx)),
  };
}
