import { describe, expect, it } from 'vitest';
import { normalizeArgs, validateArgs } from './args-validation.ts';
import { filteredLeakSource } from '../filtered_leak/filtered_leak.source.ts';
import { phishingSource } from '../phishing/phishing.source.ts';
import type { ArgParam } from './arg-params.ts';
import type { SourceDefinition } from './source.ts';

/** A source that declares one param of every type, with and without valid_values. */
const params: ArgParam[] = [
  { name: 'text', type: 'String', required: true },
  { name: 'count', type: 'Int', required: false },
  { name: 'ratio', type: 'Float', required: false },
  { name: 'flag', type: 'Boolean', required: false },
  { name: 'label', type: 'String', required: false },
  { name: 'ids', type: 'Array[Int]', required: false },
  { name: 'weights', type: 'Array[Float]', required: false },
  { name: 'words', type: 'Array[String]', required: false },
  { name: 'switches', type: 'Array[Boolean]', required: false },
  { name: 'platform', type: 'String', required: false, valid_values: ['android', 'ios'] },
  { name: 'level', type: 'Int', required: false, valid_values: [1, 2, 3] },
  { name: 'providers', type: 'Array[String]', required: false, valid_values: ['aws', 'gcp', 'azure'] },
  { name: 'levels', type: 'Array[Int]', required: false, valid_values: [1, 2] },
];
// Validation reads only the declaration; the source finds nothing.
const every: SourceDefinition = {
  hasData: false,
  prepare: (args) => ({ value: args }),
  match: async () => ({ hits: [], total: 0 }),
  id: 99,
  name: 'every_type',
  alias: 'Every type',
  description: 'Test source.',
  serviceType: 'sync',
  frequency: 'daily',
  params,
  excludableFields: [],
  filterableFields: [],
  sortableFields: [],
};
const withRequiredArray: SourceDefinition = {
  ...every,
  params: [{ name: 'bins', type: 'Array[String]', required: true }],
};

const errors = (args: unknown) => validateArgs(every, args);
/** The errors of `{ text: 'x', [name]: value }`. */
const errorsOf = (name: string, value: unknown) => errors({ text: 'x', [name]: value });

describe('validateArgs: args must be a JSON object', () => {
  it.each([null, undefined, 'domain', 42, true, [], [{ text: 'x' }], new Date(0)])('rejects %j', (args) => {
    expect(errors(args)).toEqual([{ field: 'args', message: 'must be an object', rule: 3 }]);
  });

  it('accepts a plain object, including one without a prototype', () => {
    expect(errors({ text: 'x' })).toEqual([]);
    expect(errors(Object.assign(Object.create(null) as object, { text: 'x' }))).toEqual([]);
  });
});

describe('validateArgs: rule 1, unknown keys', () => {
  it('rejects each unknown key, naming the source alias', () => {
    expect(validateArgs(phishingSource, { domain: 'acme.com', url: 'x', depth: 2 })).toEqual([
      { field: 'args.url', message: 'is not a parameter of Phishing domains', rule: 1 },
      { field: 'args.depth', message: 'is not a parameter of Phishing domains', rule: 1 },
    ]);
  });

  it('rejects an unknown key even when its value is null', () => {
    expect(errors({ text: 'x', extra: null })).toEqual([
      { field: 'args.extra', message: 'is not a parameter of Every type', rule: 1 },
    ]);
  });

  it('matches keys exactly (case-sensitive)', () => {
    expect(validateArgs(phishingSource, { Domain: 'acme.com' })).toEqual([
      { field: 'args.Domain', message: 'is not a parameter of Phishing domains', rule: 1 },
      { field: 'args.domain', message: 'is required', rule: 2 },
    ]);
  });

  it('treats a JSON "__proto__" key as an ordinary unknown key', () => {
    const args: unknown = JSON.parse('{"domain":"acme.com","__proto__":{"polluted":true}}');
    expect(validateArgs(phishingSource, args)).toEqual([
      { field: 'args.__proto__', message: 'is not a parameter of Phishing domains', rule: 1 },
    ]);
    expect(normalizeArgs(phishingSource, args)).toEqual({ domain: 'acme.com' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('validateArgs: rule 2, required params', () => {
  it('rejects missing required params, each once', () => {
    expect(validateArgs(filteredLeakSource, {})).toEqual([
      { field: 'args.domain_url', message: 'is required', rule: 2 },
      { field: 'args.filter_id', message: 'is required', rule: 2 },
    ]);
  });

  it('treats null and undefined for a required param as missing', () => {
    expect(errors({ text: null })).toEqual([{ field: 'args.text', message: 'is required', rule: 2 }]);
    expect(errors({ text: undefined })).toEqual([{ field: 'args.text', message: 'is required', rule: 2 }]);
  });

  it('rejects a required String that is empty after trim', () => {
    expect(errors({ text: '' })).toEqual([{ field: 'args.text', message: 'must not be empty', rule: 3 }]);
    expect(errors({ text: ' \t\n ' })).toEqual([{ field: 'args.text', message: 'must not be empty', rule: 3 }]);
  });

  it('rejects an empty required Array, accepts an empty optional one', () => {
    expect(validateArgs(withRequiredArray, { bins: [] })).toEqual([
      { field: 'args.bins', message: 'must not be empty', rule: 3 },
    ]);
    expect(validateArgs(withRequiredArray, { bins: ['414720'] })).toEqual([]);
    expect(errorsOf('words', [])).toEqual([]);
  });

  it('accepts the spec schemas with only their required params', () => {
    expect(validateArgs(phishingSource, { domain: 'acme-bank.com' })).toEqual([]);
    expect(validateArgs(filteredLeakSource, { domain_url: 'https://acme-bank.com/login', filter_id: 3 })).toEqual([]);
    expect(
      validateArgs(filteredLeakSource, {
        domain_url: 'acme-bank.com',
        filter_id: 2,
        filter_parameters: ['vpn.', '/sso'],
      }),
    ).toEqual([]);
  });
});

describe('validateArgs: null for an optional param', () => {
  it('is allowed for every type and means absent', () => {
    const allNull = Object.fromEntries(params.filter((param) => !param.required).map((param) => [param.name, null]));
    expect(errors({ text: 'x', ...allNull })).toEqual([]);
    expect(normalizeArgs(every, { text: 'x', ...allNull })).toEqual({ text: 'x' });
  });

  it('is not allowed inside an array', () => {
    expect(errorsOf('ids', [1, null])).toEqual([{ field: 'args.ids[1]', message: 'must be an integer', rule: 3 }]);
  });
});

describe('validateArgs: rule 3, types', () => {
  describe('Int (a safe integer)', () => {
    it.each([0, -5, 42, 1e3, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER])('accepts %s', (value) => {
      expect(errorsOf('count', value)).toEqual([]);
    });
    it.each([1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, '3', true, [3], { value: 3 }])('rejects %j', (value) => {
      expect(errorsOf('count', value)).toEqual([{ field: 'args.count', message: 'must be an integer', rule: 3 }]);
    });
  });

  describe('Float (a finite number, integers included)', () => {
    it.each([0, 3, -2.5, 0.1, 1e-9, 1e300])('accepts %s', (value) => {
      expect(errorsOf('ratio', value)).toEqual([]);
    });
    it.each([NaN, Infinity, -Infinity, '2.5', false, [2.5]])('rejects %j', (value) => {
      expect(errorsOf('ratio', value)).toEqual([{ field: 'args.ratio', message: 'must be a number', rule: 3 }]);
    });
  });

  describe('Boolean', () => {
    it.each([true, false])('accepts %s', (value) => {
      expect(errorsOf('flag', value)).toEqual([]);
    });
    it.each(['true', 0, 1, [true], {}])('rejects %j', (value) => {
      expect(errorsOf('flag', value)).toEqual([{ field: 'args.flag', message: 'must be a boolean', rule: 3 }]);
    });
  });

  describe('String', () => {
    it('accepts any string for an optional String, a blank one meaning absent', () => {
      expect(errorsOf('label', 'hello')).toEqual([]);
      expect(errorsOf('label', '   ')).toEqual([]);
      expect(normalizeArgs(every, { text: 'x', label: '   ' })).toEqual({ text: 'x' });
    });
    it.each([5, true, ['a'], { a: 1 }])('rejects %j', (value) => {
      expect(errorsOf('label', value)).toEqual([{ field: 'args.label', message: 'must be a string', rule: 3 }]);
      expect(errors({ text: value })).toEqual([{ field: 'args.text', message: 'must be a string', rule: 3 }]);
    });
  });

  describe('Array[T] (an array whose every element is a T)', () => {
    it('accepts arrays of the element type', () => {
      expect(
        errors({ text: 'x', ids: [1, 2], weights: [1, 2.5], words: ['a', ' b '], switches: [true, false] }),
      ).toEqual([]);
    });

    it('rejects a non-array value, naming the element type', () => {
      expect(errorsOf('ids', 1)).toEqual([{ field: 'args.ids', message: 'must be an array of integers', rule: 3 }]);
      expect(errorsOf('weights', '1.5')).toEqual([
        { field: 'args.weights', message: 'must be an array of numbers', rule: 3 },
      ]);
      expect(errorsOf('words', 'a,b')).toEqual([
        { field: 'args.words', message: 'must be an array of strings', rule: 3 },
      ]);
      expect(errorsOf('switches', { 0: true })).toEqual([
        { field: 'args.switches', message: 'must be an array of booleans', rule: 3 },
      ]);
    });

    it('names each bad element by its index', () => {
      expect(errorsOf('ids', [1, 2.5, 3, '4'])).toEqual([
        { field: 'args.ids[1]', message: 'must be an integer', rule: 3 },
        { field: 'args.ids[3]', message: 'must be an integer', rule: 3 },
      ]);
      expect(errorsOf('weights', [1, NaN])).toEqual([
        { field: 'args.weights[1]', message: 'must be a number', rule: 3 },
      ]);
      expect(errorsOf('words', ['a', 7, ['b']])).toEqual([
        { field: 'args.words[1]', message: 'must be a string', rule: 3 },
        { field: 'args.words[2]', message: 'must be a string', rule: 3 },
      ]);
      expect(errorsOf('switches', [true, 'false'])).toEqual([
        { field: 'args.switches[1]', message: 'must be a boolean', rule: 3 },
      ]);
    });

    it('rejects blank String elements', () => {
      expect(errorsOf('words', ['a', '  '])).toEqual([
        { field: 'args.words[1]', message: 'must not be empty', rule: 3 },
      ]);
    });

    it('rejects nested arrays', () => {
      expect(errorsOf('ids', [[1]])).toEqual([{ field: 'args.ids[0]', message: 'must be an integer', rule: 3 }]);
    });
  });
});

describe('validateArgs: valid_values', () => {
  it('accepts a declared value, compared after trimming for Strings', () => {
    expect(errorsOf('platform', 'ios')).toEqual([]);
    expect(errorsOf('platform', ' android ')).toEqual([]);
    expect(errorsOf('level', 2)).toEqual([]);
  });

  it('rejects any other value, listing the allowed ones', () => {
    expect(errorsOf('platform', 'windows')).toEqual([
      { field: 'args.platform', message: 'must be one of: android, ios', rule: 3 },
    ]);
    expect(errorsOf('platform', 'IOS')).toEqual([
      { field: 'args.platform', message: 'must be one of: android, ios', rule: 3 },
    ]);
    expect(errorsOf('level', 4)).toEqual([{ field: 'args.level', message: 'must be one of: 1, 2, 3', rule: 3 }]);
  });

  it('checks the type before the set', () => {
    expect(errorsOf('level', '2')).toEqual([{ field: 'args.level', message: 'must be an integer', rule: 3 }]);
    expect(errorsOf('platform', 1)).toEqual([{ field: 'args.platform', message: 'must be a string', rule: 3 }]);
  });

  it('applies to every array element', () => {
    expect(errorsOf('providers', ['aws', 'azure'])).toEqual([]);
    expect(errorsOf('providers', ['aws', 'ibm', 'gcp', 'oracle'])).toEqual([
      { field: 'args.providers[1]', message: 'must be one of: aws, gcp, azure', rule: 3 },
      { field: 'args.providers[3]', message: 'must be one of: aws, gcp, azure', rule: 3 },
    ]);
    expect(errorsOf('levels', [1, 3])).toEqual([{ field: 'args.levels[1]', message: 'must be one of: 1, 2', rule: 3 }]);
  });

  it('enforces the filtered leak filter_id set', () => {
    for (const filterId of [1, 2, 3, 4, 5])
      expect(validateArgs(filteredLeakSource, { domain_url: 'acme.com', filter_id: filterId })).toEqual([]);
    expect(validateArgs(filteredLeakSource, { domain_url: 'acme.com', filter_id: 6 })).toEqual([
      { field: 'args.filter_id', message: 'must be one of: 1, 2, 3, 4, 5', rule: 3 },
    ]);
  });
});

describe('validateArgs: rule 4, createdAt is reserved', () => {
  it('rejects createdAt with its own message, whatever its value', () => {
    for (const value of ['2024-01-01', 0, null]) {
      expect(validateArgs(phishingSource, { domain: 'acme.com', createdAt: value })).toEqual([
        { field: 'args.createdAt', message: 'createdAt is reserved', rule: 4 },
      ]);
    }
  });

  it('does not also report it as an unknown key; other spellings are merely unknown', () => {
    expect(validateArgs(phishingSource, { domain: 'acme.com', createdAt: 1, created_at: 1 })).toEqual([
      { field: 'args.createdAt', message: 'createdAt is reserved', rule: 4 },
      { field: 'args.created_at', message: 'is not a parameter of Phishing domains', rule: 1 },
    ]);
  });
});

describe('validateArgs: several errors at once', () => {
  it('reports every error: keys in input order, then params in declared order', () => {
    expect(
      validateArgs(filteredLeakSource, { zeta: 1, createdAt: 'x', filter_id: 9, filter_parameters: ['ok', 3] }),
    ).toEqual([
      { field: 'args.zeta', message: 'is not a parameter of Filtered credential leaks', rule: 1 },
      { field: 'args.createdAt', message: 'createdAt is reserved', rule: 4 },
      { field: 'args.domain_url', message: 'is required', rule: 2 },
      { field: 'args.filter_id', message: 'must be one of: 1, 2, 3, 4, 5', rule: 3 },
      { field: 'args.filter_parameters[1]', message: 'must be a string', rule: 3 },
    ]);
  });
});

describe('normalizeArgs', () => {
  it('keeps only declared keys, trims strings and string elements, copies arrays', () => {
    const words = [' a ', 'b'];
    const normalized = normalizeArgs(every, {
      text: '  acme.com ',
      count: 3,
      flag: false,
      words,
      ids: [1],
      createdAt: 'x',
      extra: 1,
    });
    expect(normalized).toEqual({ text: 'acme.com', count: 3, flag: false, words: ['a', 'b'], ids: [1] });
    expect(normalized.words).not.toBe(words);
    expect(words).toEqual([' a ', 'b']);
  });

  it('returns an empty object for non-object args', () => {
    expect(normalizeArgs(phishingSource, null)).toEqual({});
    expect(normalizeArgs(phishingSource, ['acme.com'])).toEqual({});
  });

  it('gives args that validate again unchanged', () => {
    const args = { domain_url: ' acme-bank.com ', filter_id: 2, filter_parameters: [' /login '] };
    expect(validateArgs(filteredLeakSource, args)).toEqual([]);
    const normalized = normalizeArgs(filteredLeakSource, args);
    expect(normalized).toEqual({ domain_url: 'acme-bank.com', filter_id: 2, filter_parameters: ['/login'] });
    expect(validateArgs(filteredLeakSource, normalized)).toEqual([]);
    expect(normalizeArgs(filteredLeakSource, normalized)).toEqual(normalized);
  });
});
