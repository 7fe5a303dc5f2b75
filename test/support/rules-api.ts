import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { ChannelBatch } from '../../src/modules/sources/messenger/index.ts';
import { deliveryApi, relative, senderBody, templateBody, type DeliveryApi, type ListPage } from './delivery-api.ts';
import type { SmtpTestServer } from './smtp-test-server.ts';
import { testCertificate } from './smtp-test-server.ts';
import { createTestApp, type TestApp } from './test-app.ts';
import type { TestStoreLocation } from './test-store.ts';
import type { ManualClock } from '../../src/lib/clock.ts';
import { findIngester, sourceCatalog } from '../../src/modules/sources/index.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/** The monitoring-rule endpoints (spec 4.5 and docs/api.md "Matches and exclusions"). */
export const rulePaths = {
  catalog: '/service/alert_system_service_get_service_list/',
  create: '/service/alert_system_alert_create_alert_rule/',
  list: '/service/alert_system_alert_get_alert_rule_list/',
  get: (id: number | string) => `/service/alert_system_alert_get_alert_rule/${id}/`,
  update: (id: number | string) => `/service/alert_system_alert_update_alert_rule/${id}/`,
  remove: (id: number | string) => `/service/alert_system_alert_delete_alert_rule/${id}/`,
  restore: (id: number | string) => `/service/alert_system_alert_restore_alert_rule/${id}/`,
  matches: (ruleId: number | string) => `/service/alert_system_match_get_match_list/${ruleId}/`,
  match: (matchId: number | string) => `/service/alert_system_match_get_match/${matchId}/`,
  hits: (matchId: number | string) => `/service/alert_system_match_get_match_hits/${matchId}/`,
  createExclusion: (ruleId: number | string) => `/service/alert_system_exclusion_create/${ruleId}/`,
  exclusions: (ruleId: number | string) => `/service/alert_system_exclusion_list/${ruleId}/`,
  deleteExclusion: (exclusionId: number | string) => `/service/alert_system_exclusion_delete/${exclusionId}/`,
  /** The path of the link a notification carries: {dashboard_url}/incidents/<id>?org=<org id>, a dashboard page */
  matchLink: (matchId: number | string, orgId: number) => `/incidents/${matchId}?org=${orgId}`,
} as const;

export interface RuleView {
  id: number;
  name: string;
  service: number;
  args: Record<string, unknown>;
  sender: number | null;
  email_template: number | null;
  recipients: number[];
  webhook: number | null;
  frequency: string;
  tlp: string;
  total_alerts_count: number;
  total_matches_count: number;
  created_at: string;
  updated_at: string;
  last_run: string | null;
  is_deleted: boolean;
  deleted_at: string | null;
  deleted_by: number | null;
  deletion_snapshot: Record<string, unknown> | null;
}

export interface MatchView {
  id: number;
  rule_id: number;
  status: string;
  total_hits: number;
  stored_hits: number;
  excluded_hits: number;
  new_hits: number;
  window_start: string | null;
  window_end: string;
  created_at: string;
  completed_at: string | null;
  progress?: { done: number; total: number; unit: string };
}

export interface HitView {
  id: number;
  is_excluded: boolean;
  [field: string]: unknown;
}

export interface ExclusionView {
  id: number;
  rule_id: number;
  field: string;
  value: string;
  created_at: string;
}

export type Query = Record<string, string | number | boolean | (string | number)[]>;

/** `?a=1&b=2`, with array values repeated (`filter=a&filter=b`). */
export function withQuery(url: string, query?: Query): string {
  if (!query || Object.keys(query).length === 0) return url;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  return `${url}?${params.toString()}`;
}

/** One organization's user, driving the rule endpoints over HTTP (plus its delivery settings). */
export interface RulesApi {
  /** The current access token (replaced by relogin). */
  readonly token: string;
  orgId: number;
  userId: number;
  /** The same user's delivery-settings API (with the current token). */
  readonly delivery: DeliveryApi;
  /**
   * Logs in again at the current (manual) clock time: access tokens live 24 hours, so tests
   * that move the clock by days call this before talking to the API again.
   */
  relogin(): Promise<void>;
  get(url: string): Promise<LightMyRequestResponse>;
  /** GET that must answer 200; returns the JSON body. */
  getJson<T>(url: string): Promise<T>;
  create(body: unknown): Promise<LightMyRequestResponse>;
  /** create that must answer 201; returns the rule. */
  created(body: unknown): Promise<RuleView>;
  list(query?: Query): Promise<ListPage<RuleView>>;
  /** Every rule of a list, following `next` from the first page. */
  listAll(query?: Query): Promise<{ rules: RuleView[]; pages: number }>;
  /** The rule as the list shows it (include_deleted), or undefined. */
  find(id: number): Promise<RuleView | undefined>;
  update(id: number, body: unknown): Promise<LightMyRequestResponse>;
  remove(id: number): Promise<LightMyRequestResponse>;
  restore(id: number): Promise<LightMyRequestResponse>;
  matches(ruleId: number, query?: Query): Promise<ListPage<MatchView>>;
  hits(matchId: number, query?: Query): Promise<ListPage<HitView>>;
  createExclusion(ruleId: number, body: unknown): Promise<LightMyRequestResponse>;
  exclusions(ruleId: number): Promise<ExclusionView[]>;
  deleteExclusion(exclusionId: number): Promise<LightMyRequestResponse>;
}

export function rulesApi(t: TestApp, initialToken: string, orgId: number, userId: number, email?: string): RulesApi {
  let token = initialToken;
  let delivery = deliveryApi(t, token, orgId);
  const get = (url: string) => t.request({ method: 'GET', url, token });
  const getJson = async <T>(url: string): Promise<T> => {
    const response = await get(url);
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json() as T;
  };
  const api: RulesApi = {
    get token() {
      return token;
    },
    orgId,
    userId,
    get delivery() {
      return delivery;
    },
    async relogin() {
      if (!email) throw new Error('relogin needs the email the api was made with');
      token = (await t.login(email)).access;
      delivery = deliveryApi(t, token, orgId);
    },
    get,
    getJson,
    create: (body) => t.request({ method: 'POST', url: rulePaths.create, token, body }),
    async created(body) {
      const response = await api.create(body);
      expect(response.statusCode, response.body).toBe(201);
      return response.json() as RuleView;
    },
    list: (query) => getJson(withQuery(rulePaths.list, query)),
    async listAll(query) {
      const rules: RuleView[] = [];
      let pages = 0;
      let url: string | null = withQuery(rulePaths.list, query);
      while (url) {
        const page: ListPage<RuleView> = await getJson(url);
        pages++;
        rules.push(...page.results);
        url = page.next === null ? null : relative(page.next);
      }
      return { rules, pages };
    },
    async find(id) {
      const { rules } = await api.listAll({ include_deleted: true, page_size: 100 });
      return rules.find((rule) => rule.id === id);
    },
    update: (id, body) => t.request({ method: 'PUT', url: rulePaths.update(id), token, body }),
    remove: (id) => t.request({ method: 'DELETE', url: rulePaths.remove(id), token }),
    restore: (id) => t.request({ method: 'POST', url: rulePaths.restore(id), token }),
    matches: (ruleId, query) => getJson(withQuery(rulePaths.matches(ruleId), query)),
    hits: (matchId, query) => getJson(withQuery(rulePaths.hits(matchId), query)),
    createExclusion: (ruleId, body) =>
      t.request({ method: 'POST', url: rulePaths.createExclusion(ruleId), token, body }),
    exclusions: (ruleId) => getJson(rulePaths.exclusions(ruleId)),
    deleteExclusion: (exclusionId) =>
      t.request({ method: 'DELETE', url: rulePaths.deleteExclusion(exclusionId), token }),
  };
  return api;
}

/** Creates a user (and its organization when new), logs in, and returns its rules API. */
export async function rulesUser(t: TestApp, org: string, email: string): Promise<RulesApi> {
  const user = await t.createUser({ org, email });
  const { access } = await t.login(email);
  return rulesApi(t, access, user.org_id, user.id, email);
}

/** SMTP credentials of the test server a kit's sender logs in with. */
export const SMTP_AUTH = { user: 'rules-mailer', pass: 'Rules-smtp-pass-7f3a' } as const;

/**
 * Env of every rules suite: no rate limits (the manual clock keeps every request in one
 * second), loopback webhook receivers allowed, short delivery timeouts.
 */
export async function rulesEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const cert = await testCertificate();
  return {
    DRAGNET_RATE_LIMITS: 'off',
    DRAGNET_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    DRAGNET_WEBHOOK_TIMEOUT_MS: '5000',
    DRAGNET_SMTP_CA_FILE: cert.caFile,
    DRAGNET_SMTP_TIMEOUT_MS: '5000',
    DRAGNET_DASHBOARD_URL: 'https://dashboard.dragnet.test',
    ...extra,
  };
}

/** A test app for the rules suites (see rulesEnv). */
export async function createRulesApp(
  options: { env?: Record<string, string>; clock?: ManualClock; location?: TestStoreLocation } = {},
): Promise<TestApp> {
  return createTestApp({ ...options, env: await rulesEnv(options.env) });
}

/** One organization's delivery resources, created over HTTP. */
export interface DeliveryKit {
  recipient: { id: number; email: string };
  sender: { id: number; email: string } | null;
  template: { id: number };
  webhook: { id: number; secret: string; url: string } | null;
}

/**
 * Creates a recipient, a template, and (when given) a sender pointing at the test SMTP server
 * (STARTTLS with the test certificate) and a webhook pointing at the receiver.
 */
export async function createDeliveryKit(
  api: RulesApi,
  options: { tag: string; smtp?: SmtpTestServer; receiver?: WebhookReceiver; webhookHeaders?: Record<string, string> },
): Promise<DeliveryKit> {
  const { tag } = options;
  const recipient = await api.delivery.created<{ email: string }>('recipient', { email: `soc-${tag}@acme.test` });
  const template = await api.delivery.created('template', templateBody(`template ${tag}`));
  const sender = options.smtp
    ? await api.delivery.created<{ email: string }>(
        'sender',
        senderBody(`alerts-${tag}@acme.test`, {
          server_host: '127.0.0.1',
          port: options.smtp.port,
          username: SMTP_AUTH.user,
          password: SMTP_AUTH.pass,
          encryption_method: 'TLS',
        }),
      )
    : null;
  const webhook = options.receiver
    ? await api.delivery.created<{ secret: string; url: string }>('webhook', {
        name: `hook ${tag}`,
        url: options.receiver.url(`/hook/${tag}`),
        headers: options.webhookHeaders ?? {},
      })
    : null;
  return {
    recipient: { id: recipient.id, email: recipient.email },
    template: { id: template.id },
    sender: sender && { id: sender.id, email: sender.email },
    webhook: webhook && { id: webhook.id, secret: webhook.secret, url: webhook.url },
  };
}

/** A rule body for any catalog service, attached to a kit (webhook and email when the kit has them). */
export function sourceRule(
  kit: DeliveryKit,
  name: string,
  service: number,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    name,
    service,
    args,
    sender: kit.sender?.id ?? null,
    email_template: kit.template.id,
    recipients: [kit.recipient.id],
    webhook: kit.webhook?.id ?? null,
    ...extra,
  };
}

/** A source's `example` args from its params (the catalog's args_schema): they find its demo data. */
export const exampleArgs = (params: { name: string; example?: unknown }[]) =>
  Object.fromEntries(params.filter((p) => p.example !== undefined).map((p) => [p.name, p.example]));

/** Every source's demo data in the app's store, dated at the app's clock. */
export async function loadEveryDemo(t: TestApp) {
  const now = t.clock.now().getTime();
  for (const source of sourceCatalog) await source.demo?.(t.container.sourceContext, now);
}

/** A messenger rule body attached to a kit (webhook and, unless `email: false`, email). */
export const messengerRule = (kit: DeliveryKit, name: string, query: string, extra: Record<string, unknown> = {}) =>
  sourceRule(kit, name, 1, { query }, extra);

/**
 * `dragnet ingest <target>` in-process, on the test app's store and manual clock (so what it
 * stores is dated by the test's time); returns the summary the command prints with --json.
 */
export async function ingestInto(t: TestApp, target: string, inputs: string[], format = 'auto') {
  const ingester = findIngester(target);
  if (!ingester) throw new Error(`no ingester ${target}`);
  return (await ingester.run(t.container.sourceContext, inputs, { format })).summary as unknown as IngestSummary;
}

export interface IngestSummary {
  inputs: number;
  failed: number;
  records: number;
  added: number;
  duplicates_skipped: number;
  rejected: number;
  results: {
    input: string;
    ok: boolean;
    records: number;
    added: number;
    duplicates: number;
    rejected: number;
    rejections: { location: string; reason: string }[];
    error?: string;
  }[];
}

/** The webhook requests a receiver got on one path (each kit has its own path). */
export const requestsTo = (receiver: WebhookReceiver, kit: DeliveryKit) =>
  receiver.requests.filter((r) => kit.webhook && receiver.url(r.url) === kit.webhook.url);

/** The generic webhook payload (spec 6.2). */
export interface GenericPayload {
  alert_rule_name: string;
  service: string;
  total_matches: number;
  excluded_matches: number;
  results_url: string;
  timestamp: string;
}

export const payloadOf = (request: { body: Buffer }) => JSON.parse(request.body.toString('utf8')) as GenericPayload;

/**
 * What the scheduler does once an hour, by hand: evaluate due rules as of `at`, run due async
 * jobs, deliver pending notifications, wait for background deliveries.
 */
export async function tickAndDeliver(t: TestApp, at: Date = t.clock.now()) {
  const report = await t.container.runner.tick(at);
  let jobs = 0;
  for (let n; (n = await t.container.jobs.runDue()) > 0;) jobs += n;
  let notifications = 0;
  for (let n; (n = await t.container.notifier.dispatchPending()) > 0;) notifications += n;
  await t.container.delivery.idle();
  return { ...report, jobs, notifications };
}

/** Delivers pending notifications now. */
export async function deliverPending(t: TestApp): Promise<number> {
  let handled = 0;
  for (let n; (n = await t.container.notifier.dispatchPending()) > 0;) handled += n;
  await t.container.delivery.idle();
  return handled;
}

/** Rows of the notification outbox of a rule, read from the store. */
export const notificationsOf = (t: TestApp, ruleId: number) =>
  t.container.store.db.selectFrom('notifications').selectAll().where('rule_id', '=', ruleId).orderBy('id').execute();

/** Runs of a rule, read from the store. */
export const runsOf = (t: TestApp, ruleId: number) =>
  t.container.store.db.selectFrom('rule_runs').selectAll().where('rule_id', '=', ruleId).orderBy('id').execute();

/** Loads channel batches into the corpus (one transaction). */
export const writeCorpus = (t: TestApp, batches: ChannelBatch[]) => t.container.corpus.write(batches);

export const HOUR = 3_600_000;
export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A rules app with two organizations: Acme (alice), whose receiver `slow` takes a request and
 * never answers (within a 30 s delivery timeout), and Globex (bob), whose `quick` answers 204.
 */
export async function slowAndQuickOrgs() {
  const [slow, quick] = await Promise.all([startWebhookReceiver('127.0.0.1', 'hang'), startWebhookReceiver()]);
  const t = await createRulesApp({ env: { DRAGNET_WEBHOOK_TIMEOUT_MS: '30000' } });
  const alice = await rulesUser(t, 'Acme', 'alice@acme.test');
  const bob = await rulesUser(t, 'Globex', 'bob@globex.test');
  return { t, alice, bob, slow, quick };
}
