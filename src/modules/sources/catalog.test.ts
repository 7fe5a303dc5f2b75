import { describe, expect, it } from 'vitest';
import { isFrequency } from '../../lib/frequency.ts';
import { findSource, sourceCatalog } from './catalog.ts';
import { validateArgs } from './kit/args-validation.ts';
import { catalogRow } from './kit/registry.ts';

const names = [
  'messenger',
  'chat_server',
  'filtered_leak',
  'raw_leak_extended',
  'distinct_leak',
  'credit_card',
  'bin_cvv',
  'phishing',
  'certificate',
  'ransomware',
  'hacker_forum',
  'paste_site',
  'app_store',
  'cloud_bucket',
  'url_shortener',
];

describe('sourceCatalog', () => {
  it('lists the 15 services of spec section 1 with stable ids, in id order', () => {
    expect(sourceCatalog.map((source) => [source.id, source.name])).toEqual(
      names.map((name, index) => [index + 1, name]),
    );
  });

  it('has unique snake_case names and unique aliases', () => {
    for (const source of sourceCatalog) expect(source.name).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(new Set(sourceCatalog.map((source) => source.alias)).size).toBe(15);
  });

  it('finds sources by id', () => {
    expect(findSource(8)?.name).toBe('phishing');
    expect(findSource(1)?.name).toBe('messenger');
    for (const id of [0, 16, -1, 1.5, NaN]) expect(findSource(id)).toBeUndefined();
  });

  it('marks only the raw leak extended search async', () => {
    expect(sourceCatalog.filter((source) => source.serviceType === 'async').map((source) => source.name)).toEqual([
      'raw_leak_extended',
    ]);
  });

  it('uses spec 3.4 frequencies as floors', () => {
    for (const source of sourceCatalog) expect(isFrequency(source.frequency), source.name).toBe(true);
  });

  it('keeps the schemas the spec states', () => {
    const schema = (id: number) => findSource(id)!.params.map(({ name, type, required }) => ({ name, type, required }));
    expect(schema(8)).toEqual([{ name: 'domain', type: 'String', required: true }]);
    expect(schema(3)).toEqual([
      { name: 'domain_url', type: 'String', required: true },
      { name: 'filter_id', type: 'Int', required: true },
      { name: 'filter_parameters', type: 'Array[String]', required: false },
    ]);
    expect(findSource(3)!.params[1]!.valid_values).toEqual([1, 2, 3, 4, 5]);
    expect(schema(1).map(({ name, required }) => [name, required])).toEqual([
      ['query', true],
      ['channel_ids', false],
      ['unique_only', false],
      ['context_chars', false],
    ]);
  });

  describe.each(sourceCatalog.map((source) => [source.name, source] as const))('%s', (_name, source) => {
    it('documents every param with a hint and an example, and params are unique', () => {
      expect(source.description.length).toBeGreaterThan(0);
      expect(new Set(source.params.map((param) => param.name)).size).toBe(source.params.length);
      for (const param of source.params) {
        expect(param.hint, param.name).toBeTruthy();
        expect(param.example, param.name).not.toBeUndefined();
        expect(param.name).not.toBe('createdAt');
      }
    });

    it("refuses args that name no watched asset (a required param, or credit_card's bins or issuer)", () => {
      expect(validateArgs(source, {})).not.toEqual([]);
    });

    it('accepts its own examples', () => {
      const args = Object.fromEntries(source.params.map((param) => [param.name, param.example]));
      expect(validateArgs(source, args)).toEqual([]);
    });

    it('declares valid_values of the param element type', () => {
      for (const param of source.params.filter((p) => p.valid_values)) {
        const expected = /String/.test(param.type) ? 'string' : 'number';
        for (const value of param.valid_values!) expect(typeof value, param.name).toBe(expected);
      }
    });

    it('has unique result-field lists', () => {
      for (const fields of [source.excludableFields, source.filterableFields, source.sortableFields]) {
        expect(fields.length).toBeGreaterThan(0);
        expect(new Set(fields).size).toBe(fields.length);
      }
    });
  });
});

describe('catalogRow', () => {
  it('maps a source to the spec 2.9 API shape', () => {
    expect(catalogRow(findSource(8)!)).toEqual({
      id: 8,
      name: 'phishing',
      alias: 'Phishing domains',
      args_schema: {
        params: [
          { name: 'domain', type: 'String', required: true, hint: expect.any(String), example: 'acme-bank.com' },
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

  it('includes valid_values only when declared and leaves out the matcher', () => {
    const row = catalogRow(findSource(3)!);
    expect(row.args_schema.params.map((param) => 'valid_values' in param)).toEqual([false, true, false]);
    expect(row.args_schema.params[1]!.valid_values).toEqual([1, 2, 3, 4, 5]);
    expect(Object.keys(row)).not.toContain('match');
    expect(JSON.parse(JSON.stringify(row))).toEqual(row);
  });

  it('gives the async service type of the raw leak extended search', () => {
    expect(catalogRow(findSource(4)!).service_type).toBe('async');
  });
});
