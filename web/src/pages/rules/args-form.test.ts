import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.ts';
import { catalogRow, normalizeArgs, sourceCatalog, validateArgs } from '../../../../src/modules/sources/index.ts';
import {
  argFieldNames,
  argsFromValues,
  controlFor,
  exampleText,
  optionLabel,
  serverArgErrors,
  valuesFromArgs,
} from './args-form.ts';
import type { CatalogParam } from './catalog.ts';
import { LEAK_FILTERS } from '../../../../src/modules/sources/common/leaks/leak-filters.ts';

/** The catalog exactly as GET alert_system_service_get_service_list/ serves it. */
const catalog = sourceCatalog.map(catalogRow);
const service = (name: string) => catalog.find((row) => row.name === name)!;
const param = (serviceName: string, name: string) =>
  service(serviceName).args_schema.params.find((entry) => entry.name === name)!;

describe('the args form generated from the catalog', () => {
  it.each(catalog.map((row) => [row.alias, row] as const))(
    "%s: the catalog's own examples go through the form unchanged and the server takes them",
    (_alias, row) => {
      const source = sourceCatalog.find((entry) => entry.id === row.id)!;
      const examples = Object.fromEntries(row.args_schema.params.map((entry) => [entry.name, entry.example]));
      const { args, errors } = argsFromValues(row.args_schema.params, valuesFromArgs(row.args_schema.params, examples));
      expect(errors).toEqual({});
      expect(args).toEqual(normalizeArgs(source, examples));
      expect(validateArgs(source, args)).toEqual([]);
    },
  );

  it('picks a control per type: text, number, yes/no or checkbox, select and choices for valid values, lists', () => {
    expect(controlFor(param('messenger', 'query'))).toEqual({ kind: 'text' });
    expect(controlFor(param('messenger', 'context_chars'))).toEqual({ kind: 'number', integer: true });
    expect(controlFor(param('bin_cvv', 'max_price'))).toEqual({ kind: 'number', integer: false });
    expect(controlFor(param('messenger', 'unique_only'))).toEqual({ kind: 'yes-no' });
    expect(controlFor({ name: 'strict', type: 'Boolean', required: true })).toEqual({ kind: 'checkbox' });
    expect(controlFor(param('filtered_leak', 'filter_id'))).toEqual({ kind: 'select', options: [1, 2, 3, 4, 5] });
    expect(controlFor(param('raw_leak_extended', 'term_type'))).toMatchObject({ kind: 'select' });
    expect(controlFor(param('credit_card', 'brands'))).toMatchObject({
      kind: 'choices',
      options: expect.arrayContaining(['visa', 'mir']),
    });
    expect(controlFor(param('messenger', 'channel_ids'))).toEqual({ kind: 'list', element: 'Int' });
    expect(controlFor(param('certificate', 'ignore_issuers'))).toEqual({ kind: 'list', element: 'String' });
  });

  it("names each filter_id choice by the filter's name, not a bare number; other choices show as they are", () => {
    const filterId = param('filtered_leak', 'filter_id');
    expect(controlFor(filterId)).toMatchObject({ options: LEAK_FILTERS.map((filter) => filter.id) });
    expect(LEAK_FILTERS.map((filter) => optionLabel(filterId, filter.id))).toEqual(
      LEAK_FILTERS.map((filter) => `${filter.name.replaceAll('_', ' ')} (${filter.id})`),
    );
    const termType = param('raw_leak_extended', 'term_type');
    for (const option of termType.valid_values!) expect(optionLabel(termType, option)).toBe(String(option));
    expect(optionLabel({ hint: 'a number' }, 3)).toBe('3');
  });

  it('leaves an optional boolean out unless yes or no is chosen (a default that is on stays on)', () => {
    const params = [param('certificate', 'domain'), param('certificate', 'include_subdomains')];
    expect(argsFromValues(params, { domain: 'acme-bank.com', include_subdomains: '' }).args).toEqual({
      domain: 'acme-bank.com',
    });
    expect(argsFromValues(params, { domain: 'acme-bank.com', include_subdomains: 'false' }).args).toEqual({
      domain: 'acme-bank.com',
      include_subdomains: false,
    });
    expect(valuesFromArgs(params, { domain: 'x.com', include_subdomains: true })).toEqual({
      domain: 'x.com',
      include_subdomains: 'true',
    });
  });

  it('sends valid values in their own type and lists as arrays of their element type', () => {
    const leak = service('filtered_leak').args_schema.params;
    expect(
      argsFromValues(leak, { domain_url: ' acme-bank.com ', filter_id: '2', filter_parameters: '/login\n\n vpn. \n' })
        .args,
    ).toEqual({
      domain_url: 'acme-bank.com',
      filter_id: 2,
      filter_parameters: ['/login', 'vpn.'],
    });
    const messenger = service('messenger').args_schema.params;
    expect(
      argsFromValues(messenger, { query: 'acme', channel_ids: '12, 22\n31', unique_only: 'true', context_chars: '200' })
        .args,
    ).toEqual({
      query: 'acme',
      channel_ids: [12, 22, 31],
      unique_only: true,
      context_chars: 200,
    });
    const cards = service('credit_card').args_schema.params;
    expect(argsFromValues(cards, { brands: ['visa', 'amex'], card_types: [] }).args).toEqual({
      brands: ['visa', 'amex'],
    });
  });

  it('says what is wrong before sending: a missing required param, a number that is not one', () => {
    const messenger = service('messenger').args_schema.params;
    expect(argsFromValues(messenger, { query: '  ', context_chars: '2.5', channel_ids: '12, x' }).errors).toEqual({
      query: 'is required',
      context_chars: 'must be an integer',
      channel_ids: '“x” must be an integer',
    });
    expect(argsFromValues(service('bin_cvv').args_schema.params, { bins: '', max_price: 'cheap' }).errors).toEqual({
      bins: 'is required',
      max_price: 'must be a number',
    });
    expect(
      argsFromValues(service('distinct_leak').args_schema.params, { query: 'acme', query_type: '' }).errors,
    ).toEqual({ query_type: 'is required' });
  });

  it('keeps only the declared params of args it is given (another service, a stale link)', () => {
    const phishing = service('phishing').args_schema.params;
    expect(
      argsFromValues(phishing, valuesFromArgs(phishing, { domain: 'acme-bank.com', query: 'left over' })).args,
    ).toEqual({ domain: 'acme-bank.com' });
  });

  it('shows examples as typed in the form', () => {
    expect(exampleText(param('messenger', 'channel_ids'))).toBe('12, 22');
    expect(exampleText(param('messenger', 'unique_only'))).toBe('yes');
    expect(exampleText({ name: 'x', type: 'String', required: false } satisfies CatalogParam)).toBeUndefined();
  });

  it("places the server's errors on args beside their params, element errors included", () => {
    const messenger = service('messenger').args_schema.params;
    const error = new ApiError(400, {
      code: 'validation_failed',
      message: 'invalid',
      fields: [
        { field: 'args.channel_ids[1]', message: 'must be an integer (rule 3)' },
        { field: 'args.query', message: 'is required (rule 2)' },
        { field: 'args.createdAt', message: 'createdAt is reserved (rule 4)' },
        { field: 'name', message: 'must not be empty' },
      ],
    });
    expect(serverArgErrors(error, messenger)).toEqual({
      channel_ids: '[1] must be an integer (rule 3)',
      query: 'is required (rule 2)',
    });
    // args.createdAt has no input of its own: the error notice lists it.
    expect(argFieldNames(error, messenger)).toEqual(['args.channel_ids[1]', 'args.query']);
  });
});
