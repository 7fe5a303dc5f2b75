import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  rulePaths,
  rulesUser,
  type DeliveryKit,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

interface CatalogParam {
  name: string;
  type: string;
  required: boolean;
  hint?: string;
  example?: unknown;
  valid_values?: (string | number)[];
}

interface CatalogRow {
  id: number;
  name: string;
  alias: string;
  args_schema: { params: CatalogParam[] };
  service_type: string;
  excludable_fields: string[];
  filterable_fields: string[];
  sortable_fields: string[];
  frequency: string;
}

/** docs/sources.md "The 15 sources". */
const SOURCES: [number, string, string, 'sync' | 'async', string][] = [
  [1, 'messenger', 'Messenger channels', 'sync', 'daily'],
  [2, 'chat_server', 'Chat servers (Discord)', 'sync', 'daily'],
  [3, 'filtered_leak', 'Filtered credential leaks', 'sync', 'daily'],
  [4, 'raw_leak_extended', 'Raw leak extended search', 'async', 'weekly'],
  [5, 'distinct_leak', 'Distinct leak', 'sync', 'twice_weekly'],
  [6, 'credit_card', 'Credit cards', 'sync', 'daily'],
  [7, 'bin_cvv', 'BIN-CVV', 'sync', 'daily'],
  [8, 'phishing', 'Phishing domains', 'sync', 'daily'],
  [9, 'certificate', 'Certificates (CT logs)', 'sync', 'daily'],
  [10, 'ransomware', 'Ransomware leak sites', 'sync', 'daily'],
  [11, 'hacker_forum', 'Hacker forums', 'sync', 'daily'],
  [12, 'paste_site', 'Paste sites', 'sync', 'daily'],
  [13, 'app_store', 'App stores', 'sync', 'weekly'],
  [14, 'cloud_bucket', 'Cloud storage buckets', 'sync', 'weekly'],
  [15, 'url_shortener', 'URL shorteners', 'sync', 'weekly'],
];

/** spec 3.4, in order from fastest to slowest. */
const FREQUENCIES: [string, number][] = [
  ['daily', 24],
  ['twice_weekly', 84],
  ['weekly', 168],
  ['biweekly', 336],
  ['twice_monthly', 360],
  ['monthly', 720],
];

describe(`rules: the source catalog and the frequency table (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let kit: DeliveryKit;
  let catalog: CatalogRow[];

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    // Every source times every frequency is more rules than the default limit of 20.
    await t.container.organizations.update('Acme', { alertRuleLimit: 500 });
    kit = await createDeliveryKit(alice, { tag: 'catalog' });
    catalog = await alice.getJson<CatalogRow[]>(rulePaths.catalog);
    // The examples name stored data (the messenger example's channel ids are demo channels).
    await findSource(1)!.demo!(t.container.sourceContext, t.clock.now().getTime());
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET alert_system_service_get_service_list/ returns the 15 rows, unpaged, in id order', async () => {
    expect(Array.isArray(catalog)).toBe(true);
    expect(catalog).toHaveLength(15);
    expect(catalog.map((row) => [row.id, row.name, row.alias, row.service_type, row.frequency])).toEqual(SOURCES);
    for (const row of catalog) {
      expect(Object.keys(row).sort()).toEqual([
        'alias',
        'args_schema',
        'excludable_fields',
        'filterable_fields',
        'frequency',
        'has_data',
        'id',
        'name',
        'service_type',
        'sortable_fields',
      ]);
      expect(row.args_schema.params.length).toBeGreaterThan(0);
      for (const param of row.args_schema.params) {
        expect(param).toMatchObject({
          name: expect.any(String),
          type: expect.stringMatching(/^(Int|Float|Boolean|String|Array\[(Int|Float|Boolean|String)\])$/),
          required: expect.any(Boolean),
        });
        // docs/sources.md: hint and example always, valid_values only for closed sets.
        expect(typeof param.hint).toBe('string');
        expect(param.example).not.toBeUndefined();
        if ('valid_values' in param) expect(param.valid_values!.length).toBeGreaterThan(0);
      }
      expect(row.excludable_fields.length).toBeGreaterThan(0);
      expect(row.filterable_fields.length).toBeGreaterThan(0);
      expect(row.sortable_fields.length).toBeGreaterThan(0);
    }
    // It is not a paged list: no page parameters change it.
    expect(await alice.getJson(`${rulePaths.catalog}?page=2&page_size=1`)).toEqual(catalog);
  });

  it('the messenger row has exactly the spec 2.9 schema', () => {
    expect(catalog[0]).toEqual({
      id: 1,
      name: 'messenger',
      alias: 'Messenger channels',
      args_schema: {
        params: [
          {
            name: 'query',
            type: 'String',
            required: true,
            hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )',
            example: '"fresh logs" AND (acme-bank.com OR acmebank)',
          },
          {
            name: 'channel_ids',
            type: 'Array[Int]',
            required: false,
            hint: 'Only these channels (ids from messenger-channels)',
            example: [12, 22],
          },
          {
            name: 'unique_only',
            type: 'Boolean',
            required: false,
            hint: 'Count identical texts posted in several channels once',
            example: true,
          },
          {
            name: 'context_chars',
            type: 'Int',
            required: false,
            hint: 'Characters of text around the match in each hit',
            example: 200,
          },
        ],
      },
      service_type: 'sync',
      excludable_fields: ['channel_id', 'channel_username', 'user_id', 'media_type'],
      filterable_fields: ['channel_id', 'channel_username', 'user_id', 'has_media', 'media_type', 'forwarded_from'],
      sortable_fields: ['date', 'channel_id', 'message_id'],
      frequency: 'daily',
      has_data: true,
    });
  });

  it('the phishing row has exactly the spec 2.9 schema (domain only)', () => {
    expect(catalog.find((row) => row.id === 8)).toEqual({
      id: 8,
      name: 'phishing',
      alias: 'Phishing domains',
      args_schema: {
        params: [
          {
            name: 'domain',
            type: 'String',
            required: true,
            hint: 'Registrable domain to protect, without scheme, path or subdomain',
            example: 'acme-bank.com',
          },
        ],
      },
      service_type: 'sync',
      excludable_fields: ['domain', 'registrable', 'registrar', 'ip', 'country'],
      filterable_fields: ['fuzzer', 'registrar', 'country', 'has_mx', 'origin', 'brand_in_subdomain'],
      sortable_fields: ['score', 'distance', 'first_seen', 'registered_at', 'discovered_at', 'domain', 'fuzzer'],
      frequency: 'daily',
      has_data: true,
    });
  });

  it('the filtered-leak row has exactly the spec 2.9 schema, with its filter catalog', () => {
    const row = catalog.find((r) => r.id === 3)!;
    expect(
      row.args_schema.params.map(({ name, type, required, example }) => ({ name, type, required, example })),
    ).toEqual([
      { name: 'domain_url', type: 'String', required: true, example: 'acme-bank.com' },
      { name: 'filter_id', type: 'Int', required: true, example: 2 },
      { name: 'filter_parameters', type: 'Array[String]', required: false, example: ['/login', 'vpn.'] },
    ]);
    // docs/sources.md "Filtered leak filters": every filter is named in the hint.
    expect(row.args_schema.params[1]!.valid_values).toEqual([1, 2, 3, 4, 5]);
    for (const name of [
      'employee_emails',
      'corporate_logins',
      'customer_accounts',
      'all_site_credentials',
      'admin_panels',
    ])
      expect(row.args_schema.params[1]!.hint).toContain(name);
    expect(row).toMatchObject({
      service_type: 'sync',
      excludable_fields: ['email', 'username', 'url', 'host', 'leak_name', 'machine', 'hwid', 'app_id'],
      filterable_fields: [
        'domain',
        'host',
        'login_domain',
        'url_kind',
        'country',
        'software',
        'leak_name',
        'leak_type',
        'machine',
        'hwid',
        'app_id',
        'filter_id',
      ],
      sortable_fields: ['discovered_at', 'leaked_at', 'email', 'domain', 'host'],
      frequency: 'daily',
      has_data: true,
    });
  });

  it('the catalog needs a token', async () => {
    expectError(await t.request({ method: 'GET', url: rulePaths.catalog }), 401, 'unauthorized');
  });

  /**
   * Valid args for a source: every param's documented example (credit_card requires bins or an
   * issuer, neither of which is a required param on its own).
   */
  const exampleArgs = (row: CatalogRow) => Object.fromEntries(row.args_schema.params.map((p) => [p.name, p.example]));

  it('every source accepts its frequency floor and every slower frequency; faster ones are rule 7', async () => {
    for (const row of catalog) {
      const floorHours = FREQUENCIES.find(([name]) => name === row.frequency)![1];
      for (const [frequency, hours] of FREQUENCIES) {
        const body = {
          name: `${row.name} ${frequency}`,
          service: row.id,
          args: exampleArgs(row),
          email_template: kit.template.id,
          recipients: [kit.recipient.id],
          frequency,
        };
        const response = await alice.create(body);
        if (hours >= floorHours) {
          expect(response.statusCode, `${row.name} ${frequency}: ${response.body}`).toBe(201);
          expect(response.json()).toMatchObject({ service: row.id, frequency, args: exampleArgs(row) });
        } else {
          const error = expectError(response, 400, 'validation_failed');
          expect(error.fields, `${row.name} ${frequency}`).toEqual([
            { field: 'frequency', message: expect.stringContaining(row.frequency), rule: 7 },
          ]);
        }
      }
    }
  });

  it('the frequency defaults to the organization setting (daily out of the box)', async () => {
    const rule = await alice.created({
      name: 'default frequency',
      service: 1,
      args: { query: 'acme' },
      email_template: kit.template.id,
      recipients: [kit.recipient.id],
    });
    expect(rule.frequency).toBe('daily');
    await t.container.organizations.update('Acme', { defaultFrequency: 'weekly' });
    try {
      const weekly = await alice.created({
        name: 'org default weekly',
        service: 1,
        args: { query: 'acme' },
        email_template: kit.template.id,
        recipients: [kit.recipient.id],
      });
      expect(weekly.frequency).toBe('weekly');
    } finally {
      await t.container.organizations.update('Acme', { defaultFrequency: 'daily' });
    }
  });

  it('a frequency not in the table is a 400 on frequency', async () => {
    for (const frequency of ['hourly', 'Daily', 'yearly', '', 'twice-weekly']) {
      const response = await alice.create({
        name: `bad ${frequency}`,
        service: 1,
        args: { query: 'acme' },
        email_template: kit.template.id,
        recipients: [kit.recipient.id],
        frequency,
      });
      const error = expectError(response, 400, 'validation_failed');
      expect(
        error.fields?.map((f) => f.field),
        frequency,
      ).toEqual(['frequency']);
    }
  });
});
