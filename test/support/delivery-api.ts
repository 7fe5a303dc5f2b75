import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './test-app.ts';

export type DeliveryResource = 'recipient' | 'sender' | 'template' | 'webhook';

/** spec 4.4: every operation is /service/alert_system_setting_<operation>/ */
export const settingPath = (operation: string, id?: number | string) =>
  `/service/alert_system_setting_${operation}/${id === undefined ? '' : `${id}/`}`;

export interface ListPage<T = Record<string, unknown>> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The delivery-settings operations of one organization's user, at spec 4.4's paths. */
export interface DeliveryApi {
  token: string;
  orgId: number;
  list(resource: DeliveryResource, query?: Record<string, string | number>): Promise<LightMyRequestResponse>;
  /** Every item of a list, following `next`. */
  listAll<T = Record<string, unknown>>(resource: DeliveryResource): Promise<T[]>;
  create(resource: DeliveryResource, body: unknown): Promise<LightMyRequestResponse>;
  /** create that must succeed (201); returns the body. */
  created<T = Record<string, unknown>>(resource: DeliveryResource, body: unknown): Promise<T & { id: number }>;
  update(resource: DeliveryResource, id: number, body: unknown): Promise<LightMyRequestResponse>;
  remove(resource: DeliveryResource, id: number): Promise<LightMyRequestResponse>;
  testEmail(body: unknown): Promise<LightMyRequestResponse>;
  testWebhook(id: number): Promise<LightMyRequestResponse>;
  attempts(query?: Record<string, string | number>): Promise<ListPage<DeliveryAttemptView>>;
}

export interface DeliveryAttemptView {
  id: number;
  channel: string;
  target: string;
  purpose: string;
  status: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  rule_id: number | null;
  match_id: number | null;
  created_at: string;
}

const withQuery = (url: string, query?: Record<string, string | number>) =>
  query ? `${url}?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()}` : url;

/** Creates a user in a (new or existing) organization, logs in and returns its delivery API. */
export async function deliveryUser(t: TestApp, org: string, email: string): Promise<DeliveryApi> {
  const user = await t.createUser({ org, email });
  const { access } = await t.login(email);
  return deliveryApi(t, access, user.org_id);
}

export function deliveryApi(t: TestApp, token: string, orgId: number): DeliveryApi {
  const api: DeliveryApi = {
    token,
    orgId,
    list: (resource, query) =>
      t.request({ method: 'GET', url: withQuery(settingPath(`get_${resource}_list`), query), token }),
    async listAll<T>(resource: DeliveryResource) {
      const items: T[] = [];
      let url: string | null = withQuery(settingPath(`get_${resource}_list`), { page_size: 100 });
      while (url) {
        const response = await t.request({ method: 'GET', url, token });
        expect(response.statusCode, response.body).toBe(200);
        const page = response.json() as ListPage<T>;
        items.push(...page.results);
        url = page.next === null ? null : relative(page.next);
      }
      return items;
    },
    create: (resource, body) => t.request({ method: 'POST', url: settingPath(`create_${resource}`), token, body }),
    async created(resource, body) {
      const response = await api.create(resource, body);
      expect(response.statusCode, response.body).toBe(201);
      return response.json();
    },
    update: (resource, id, body) =>
      t.request({ method: 'PUT', url: settingPath(`update_${resource}`, id), token, body }),
    remove: (resource, id) => t.request({ method: 'DELETE', url: settingPath(`delete_${resource}`, id), token }),
    testEmail: (body) => t.request({ method: 'POST', url: settingPath('test_email'), token, body }),
    testWebhook: (id) => t.request({ method: 'POST', url: settingPath('test_webhook', id), token }),
    async attempts(query) {
      const response = await t.request({
        method: 'GET',
        url: withQuery(settingPath('get_delivery_attempt_list'), query),
        token,
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    },
  };
  return api;
}

/** A `next`/`previous` link as a path+query the app can be asked for (absolute links allowed). */
export function relative(link: string): string {
  const url = new URL(link, 'http://dragnet.invalid');
  return `${url.pathname}${url.search}`;
}

/** A template body carrying every required placeholder (spec 2.7). */
export const VALID_TEMPLATE_BODY =
  '<p>{alert_rule_name}: {number_of_hits} hits in {service} on {current_date}. <a href="{match_detail_link}">open</a></p>';

export const templateBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  subject: `Alert {alert_rule_name} (${name})`,
  body: VALID_TEMPLATE_BODY,
  ...extra,
});

export const webhookBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  url: `https://hooks.example.com/${encodeURIComponent(name)}`,
  headers: {},
  ...extra,
});

export const senderBody = (email: string, extra: Record<string, unknown> = {}) => ({
  email,
  server_host: 'smtp.example.com',
  port: 587,
  username: 'mailer',
  password: 'sender-password',
  encryption_method: 'TLS',
  ...extra,
});

/** Env every delivery test app gets: no rate limits (the manual clock never leaves its second). */
export const NO_RATE_LIMITS = { DRAGNET_RATE_LIMITS: 'off' } as const;
