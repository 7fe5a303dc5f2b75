/**
 * Property-based fuzzing of the HTTP API from its own OpenAPI document (issue #15): for every
 * operation, fast-check generates path, query and body values, some shaped by the operation's
 * schemas (to get past validation into services and SQL) and some hostile (huge numbers, empty
 * strings, unicode, __proto__, deep nesting, wrong types). Each case is sent over a real socket;
 * a 5xx, a dropped connection or an error answer without the error body is a finding.
 * Used by test/fuzz.test.ts (a small seeded sample in CI) and bench/fuzz.bench.ts (10,000+).
 */
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { channel, loadCorpus, message } from './corpus.ts';
import { createTestApp } from './test-app.ts';
import { createTestStoreLocation } from './test-store.ts';

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  $ref?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  additionalProperties?: boolean | Schema;
};

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface OpenApiOperation {
  operationId?: string;
  parameters?: { in: string; name: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface FuzzOperation {
  operationId: string;
  method: string;
  /** The OpenAPI path, e.g. /service/alert_system_match_get_match/{id}/ */
  path: string;
  pathParams: { name: string; schema: Schema }[];
  queryParams: { name: string; schema: Schema }[];
  body?: Schema;
}

export interface FuzzCase {
  operationId: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzOutcome {
  status?: number;
  /** Set when no HTTP response came back (connection reset, closed early, timeout). */
  error?: string;
  body?: string;
}

/** The operations of an OpenAPI 3 document, with local $refs resolved. */
export function operationsOf(doc: OpenApiDocument): FuzzOperation[] {
  const resolve = (schema: Schema | undefined): Schema | undefined => {
    if (!schema?.$ref) return schema;
    const name = schema.$ref.split('/').pop()!;
    return doc.components?.schemas?.[name] ?? {};
  };
  const operations: FuzzOperation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const params = operation.parameters ?? [];
      const of = (where: string) =>
        params.filter((p) => p.in === where).map((p) => ({ name: p.name, schema: resolve(p.schema) ?? {} }));
      operations.push({
        operationId: operation.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: of('path'),
        queryParams: of('query'),
        body: resolve(operation.requestBody?.content?.['application/json']?.schema),
      });
    }
  }
  return operations;
}

// A raw JSON number literal (1e400, 2^70) that a JS number cannot hold: marked inside a string
// and put back into the text after JSON.stringify.
const RAW = '\u0000raw:';
const rawNumber = (literal: string) => `${RAW}${literal}\u0000`;
const RAW_PATTERN = /"\\u0000raw:([^"\\]*)\\u0000"/g;
const toJson = (value: unknown) => JSON.stringify(value).replace(RAW_PATTERN, '$1');

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\t\n',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  '{__proto__}',
  '{constructor}',
  '{toString}',
  '__proto__:x',
  'constructor:constructor',
  'prototype:1',
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '\\',
  '%',
  '%25',
  '%00',
  '_',
  '../../etc/passwd',
  '*',
  '?',
  '#',
  'a\u0000b',
  '0',
  '-1',
  '1.5',
  '1e309',
  '-0',
  'NaN',
  'Infinity',
  '9007199254740993',
  '99999999999999999999',
  '0x10',
  ' 1',
  '1 ',
  'null',
  'true',
  '[]',
  '{}',
  '${jndi:x}',
  '{{7*7}}',
  '%s%n',
  '\u202e',
  'ß',
  'İ',
  'ǅ',
  '\uD800',
  '\uDFFF',
  '\uFFFE',
  '😀'.repeat(64),
  'a'.repeat(5000),
  'AND',
  'OR NOT',
  '"',
  '(((',
  ')',
  '" OR "',
];
const HOSTILE_NUMBERS = [
  0,
  -1,
  1.5,
  -1.5,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  2 ** 64,
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
];
const RAW_NUMBERS = [
  '1e400',
  '-1e400',
  '123456789012345678901234567890',
  '9223372036854775808',
  '0.0000000000000000000001',
  '1E2',
  '-0',
];
const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '',
  ' ',
  'a.b',
  '$where',
  '😀',
  'x'.repeat(300),
];

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);
const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...RAW_NUMBERS).map(rawNumber),
);

/** An object with the given own keys, `__proto__` included as a plain key (as JSON.parse makes it). */
function withOwnKeys(entries: [string, unknown][], base: Record<string, unknown> = {}): Record<string, unknown> {
  const target = { ...base };
  for (const [key, value] of entries)
    Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
  return target;
}

const hostileKey = fc.oneof(fc.constantFrom(...HOSTILE_KEYS), fc.string({ maxLength: 10 }));

/** Any JSON value, hostile in type and content, nested a few levels. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 3 }).map((entries) => withOwnKeys(entries)),
  ),
})).value;

/** The JSON of a value nested `depth` levels deep, too deep for a recursive parser. */
const deepNesting: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(['[', ']'], ['{"a":', '}'], ['{"a":[', ']}']), fc.integer({ min: 65, max: 120_000 }))
  .map(([[open, close], depth]) => open!.repeat(depth) + '1' + close!.repeat(depth));

const WELL_FORMED_STRINGS: Record<string, fc.Arbitrary<string>> = {
  email: fc.oneof(fc.emailAddress(), fc.constantFrom('fuzz@fuzz.test', 'a@b.c')),
  uri: fc.constantFrom(
    'http://127.0.0.1:9/hook',
    'https://example.test/x',
    'http://[::1]/',
    'ftp://x',
    'http://10.0.0.1/',
  ),
  'date-time': fc
    .date({ min: new Date(0), max: new Date('2100-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString()),
};

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const wellFormed = schema.format ? WELL_FORMED_STRINGS[schema.format] : undefined;
  if (wellFormed) return wellFormed;
  if (schema.pattern) {
    // A pattern sets its own length (a 41-character `<uuid>.json`): a cap below it would make
    // the filter refuse every string, and fast-check draw forever.
    const max = schema.maxLength ?? Number.MAX_SAFE_INTEGER;
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= max);
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 40, 40));
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme-ascii' }) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.constant('x'.repeat(Math.min(schema.maxLength ?? 300, 5000))) },
  );
}

function integerFor(schema: Schema, ids: readonly number[]): fc.Arbitrary<unknown> {
  const min = Math.max(schema.minimum ?? -(2 ** 40), Number.MIN_SAFE_INTEGER);
  const max = Math.min(schema.maximum ?? 2 ** 40, Number.MAX_SAFE_INTEGER);
  const edges = [min, max, min - 1, max + 1].filter(Number.isSafeInteger);
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min, max: Math.min(max, min + 20) }) },
    { weight: 2, arbitrary: fc.integer({ min, max }) },
    { weight: 2, arbitrary: fc.constantFrom(...edges) },
    { weight: ids.length ? 3 : 0, arbitrary: ids.length ? fc.constantFrom(...ids) : fc.constant(1) },
  );
}

/**
 * What the generators know beyond the schemas: `ids` known to exist (so integer fields also
 * point at real rows), and `hints`, values for fields and parameters by name that a schema
 * cannot tell (a rule's `args` per catalog service, `field:value` filters, sortable fields).
 */
export interface FuzzContext {
  ids: readonly number[];
  hints: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /** Whole bodies by operationId, for fields that depend on each other (a rule's service and args). */
  bodyHints?: Readonly<Record<string, fc.Arbitrary<unknown>>>;
}

/** Values for a field or parameter: mostly valid-shaped (to reach services and SQL), sometimes hostile. */
function valueFor(schema: Schema, context: FuzzContext, depth = 0, name?: string): fc.Arbitrary<unknown> {
  const shaped = shapedValueFor(schema, context, depth);
  const hint = name !== undefined && Object.hasOwn(context.hints, name) ? context.hints[name] : undefined;
  return fc.oneof(
    { weight: hint ? 6 : 0, arbitrary: hint ?? shaped },
    { weight: 5, arbitrary: shaped },
    { weight: 1, arbitrary: hostileValue },
  );
}

function shapedValueFor(schema: Schema, context: FuzzContext, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches?.length) return fc.oneof(...branches.map((branch) => shapedValueFor(branch, context, depth)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => shapedValueFor({ ...schema, type }, context, depth)));
  switch (types[0]) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return integerFor(schema, context.ids);
    case 'number':
      return fc.oneof(
        integerFor(schema, context.ids),
        fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true }),
      );
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 4
        ? fc.constant([])
        : fc.array(valueFor(schema.items ?? {}, context, depth + 1), { maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case 'object':
      return objectFor(schema, context, depth);
    default:
      return hostileValue;
  }
}

function objectFor(schema: Schema, context: FuzzContext, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const record = fc.record(
    Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [name, valueFor(property, context, depth + 1, name)]),
    ),
    { requiredKeys: (schema.required ?? []).filter((name) => name in properties) },
  );
  const extraValue =
    typeof schema.additionalProperties === 'object'
      ? valueFor(schema.additionalProperties, context, depth + 1)
      : hostileValue;
  const extras = fc.array(fc.tuple(hostileKey, extraValue), { maxLength: 3 });
  return fc
    .tuple(record, fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extras }))
    .map(([base, entries]) => withOwnKeys(entries as [string, unknown][], base as Record<string, unknown>));
}

/** Percent-encoded UTF-8; a lone surrogate (not encodable) goes as U+FFFD. */
const encode = (text: string) => encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'));

/** A value as text for a path segment or a query string. */
const asText = (value: unknown): string =>
  typeof value === 'string'
    ? value.startsWith(RAW)
      ? value.slice(RAW.length, -1)
      : value
    : typeof value === 'object'
      ? toJson(value)
      : String(value);

function pathValueFor(schema: Schema, context: FuzzContext): fc.Arbitrary<string> {
  return fc
    .oneof({ weight: 4, arbitrary: shapedValueFor(schema, context, 0) }, { weight: 1, arbitrary: hostileValue })
    .map(asText);
}

function queryFor(operation: FuzzOperation, context: FuzzContext): fc.Arbitrary<string> {
  const declared = operation.queryParams.map(({ name, schema }) =>
    fc.option(
      valueFor(schema, context, 0, name).map((value) =>
        Array.isArray(value) ? value.map((item) => [name, asText(item)]) : [[name, asText(value)]],
      ),
      { freq: 2 },
    ),
  );
  // Parameters the operation does not declare: the organization selector, prototype names.
  const stray = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom('org_id', '__proto__', 'constructor', 'page', 'filter'), hostileKey),
      hostileString,
    ),
    {
      maxLength: 2,
    },
  );
  return fc
    .tuple(fc.tuple(...declared), fc.oneof({ weight: 5, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: stray }))
    .map(([pairs, extra]) => {
      const all = [...pairs.flatMap((p) => p ?? []), ...extra] as [string, string][];
      return all.length ? `?${all.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : '';
    });
}

function bodyFor(operation: FuzzOperation, context: FuzzContext): fc.Arbitrary<string | undefined> {
  const hostileBodies = fc.oneof(
    hostileValue.map(toJson),
    deepNesting,
    fc.constantFrom(
      '',
      '{',
      '{"a":1,}',
      'null',
      '\uFEFF{}',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      'x'.repeat(2000),
    ),
  );
  if (!operation.body) {
    return fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileBodies });
  }
  const hint = context.bodyHints?.[operation.operationId];
  return fc.oneof(
    { weight: hint ? 4 : 0, arbitrary: (hint ?? fc.constant(null)).map(toJson) },
    { weight: 6, arbitrary: valueFor(operation.body, context).map(toJson) },
    { weight: 1, arbitrary: hostileBodies },
  );
}

function headersFor(token: string, hasBody: boolean): fc.Arbitrary<Record<string, string>> {
  const authorization = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${token}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `bearer ${token}`,
        `Bearer ${token}x`,
        'Basic YTpi',
        `Bearer ${'A'.repeat(9000)}`,
      ),
    },
  );
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/json; charset=latin1',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
      ),
    },
  );
  const extra = fc.oneof(
    { weight: 10, arbitrary: fc.constant({}) },
    {
      weight: 1,
      arbitrary: fc.record({ 'x-org-id': fc.constantFrom('', '0', '-1', '1', '2', '9007199254740993', 'abc', '1e3') }),
    },
    { weight: 1, arbitrary: fc.record({ 'x-request-id': fc.constantFrom('__proto__', '', 'x'.repeat(300), 'ä') }) },
  );
  return fc.tuple(authorization, contentType, extra).map(([auth, type, more]) => ({
    ...(auth ? { authorization: auth } : {}),
    ...(hasBody ? { 'content-type': type } : {}),
    ...more,
  }));
}

/** One request against one of `operations`, authenticated with `token` (mostly). */
export function fuzzCases(
  operations: FuzzOperation[],
  options: FuzzContext & { token: string },
): fc.Arbitrary<FuzzCase> {
  const { token, ...context } = options;
  return fc.constantFrom(...operations).chain((operation) => {
    const segments = fc.tuple(...operation.pathParams.map(({ schema }) => pathValueFor(schema, context)));
    return fc
      .tuple(segments, queryFor(operation, context), bodyFor(operation, context))
      .chain(([values, query, body]) =>
        headersFor(token, body !== undefined).map((headers) => {
          let path = operation.path;
          operation.pathParams.forEach(({ name }, i) => {
            // An empty segment would route elsewhere (//): the route's own 404 is not what is fuzzed.
            path = path.replace(`{${name}}`, encode(values[i] || ' '));
          });
          return { operationId: operation.operationId, method: operation.method, url: path + query, headers, body };
        }),
      );
  });
}

/** Sends one case; a missing response is reported in `error`, never thrown. */
export async function sendCase(
  baseUrl: string,
  fuzzCase: FuzzCase,
  dispatcher: Agent,
  timeoutMs = 60_000,
): Promise<FuzzOutcome> {
  try {
    const response = await request(baseUrl + fuzzCase.url, {
      method: fuzzCase.method as 'GET',
      headers: fuzzCase.headers,
      body: fuzzCase.body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { status: response.statusCode, body: await response.body.text() };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return { error: `${code ?? 'error'}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** What is wrong with an outcome, or null: a 5xx, no response, or an error without the error body. */
const ERROR_BODY = ['code', 'message', 'request_id'];

export function findingOf(fuzzCase: FuzzCase, outcome: FuzzOutcome): string | null {
  if (outcome.error !== undefined) return `no response: ${outcome.error}`;
  const status = outcome.status!;
  if (status >= 500) return `${status}: ${outcome.body?.slice(0, 300)}`;
  if (status >= 400 && fuzzCase.method !== 'HEAD') {
    let body: unknown;
    try {
      body = JSON.parse(outcome.body ?? '');
    } catch {
      body = undefined;
    }
    // TAXII answers its errors in the TAXII 2.1 error envelope (docs/taxii.md), title required;
    // a request refused before routing (a path segment too long) gets the server's error body.
    const shapes = new URL(fuzzCase.url, 'http://fuzz.invalid').pathname.startsWith('/taxii2/')
      ? [ERROR_BODY, ['title', 'http_status']]
      : [ERROR_BODY];
    const shaped =
      body &&
      typeof body === 'object' &&
      shapes.some((keys) => keys.every((key) => typeof (body as Record<string, unknown>)[key] === 'string'));
    if (!shaped) return `${status} without the error body: ${outcome.body?.slice(0, 300)}`;
  }
  return null;
}

/** A case as a line a developer can replay with curl. */
export function describeCase(fuzzCase: FuzzCase): string {
  const body = fuzzCase.body === undefined ? '' : ` body(${fuzzCase.body.length}): ${fuzzCase.body.slice(0, 200)}`;
  const headers = Object.entries(fuzzCase.headers)
    .filter(([name]) => name !== 'authorization' || !fuzzCase.headers.authorization?.startsWith('Bearer ey'))
    .map(([name, value]) => `${name}: ${value.slice(0, 60)}`)
    .join('; ');
  return `${fuzzCase.method} ${fuzzCase.url.slice(0, 300)}${headers ? ` [${headers}]` : ''}${body}`;
}

export interface FuzzReport {
  cases: number;
  byStatus: Map<number, number>;
  serverErrors: string[];
  dropped: string[];
  unshapedErrors: string[];
}

/**
 * Runs `count` cases drawn from `arbitrary` with `seed`, `concurrency` at a time, and counts
 * every finding instead of stopping at the first (the benchmark's figures).
 */
export async function runFuzz(options: {
  baseUrl: string;
  arbitrary: fc.Arbitrary<FuzzCase>;
  count: number;
  seed: number;
  concurrency: number;
  onProgress?: (done: number) => void;
}): Promise<FuzzReport> {
  const report: FuzzReport = { cases: 0, byStatus: new Map(), serverErrors: [], dropped: [], unshapedErrors: [] };
  const dispatcher = new Agent({ connections: options.concurrency, pipelining: 1 });
  // Drawn in batches (batch i from seed + i): some cases carry bodies of hundreds of kilobytes.
  const BATCH = 500;
  let batch: FuzzCase[] = [];
  let drawn = 0;
  const nextCase = (): FuzzCase | undefined => {
    if (batch.length === 0 && drawn < options.count) {
      const size = Math.min(BATCH, options.count - drawn);
      batch = fc.sample(options.arbitrary, { seed: options.seed + drawn / BATCH, numRuns: size }).reverse();
      drawn += size;
    }
    return batch.pop();
  };
  const worker = async () => {
    for (let fuzzCase = nextCase(); fuzzCase; fuzzCase = nextCase()) {
      const outcome = await sendCase(options.baseUrl, fuzzCase, dispatcher);
      report.cases++;
      if (outcome.status !== undefined)
        report.byStatus.set(outcome.status, (report.byStatus.get(outcome.status) ?? 0) + 1);
      const finding = findingOf(fuzzCase, outcome);
      if (finding) {
        const list =
          outcome.error !== undefined
            ? report.dropped
            : outcome.status! >= 500
              ? report.serverErrors
              : report.unshapedErrors;
        list.push(`${finding}\n    ${describeCase(fuzzCase)}`);
      }
      if (report.cases % 500 === 0) options.onProgress?.(report.cases);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    await dispatcher.close();
  }
  return report;
}

interface CatalogRow {
  id: number;
  args_schema: {
    params: { name: string; type: string; required: boolean; example?: unknown; valid_values?: unknown[] }[];
  };
  excludable_fields: string[];
  filterable_fields: string[];
  sortable_fields: string[];
}

const argOfType = (type: string): fc.Arbitrary<unknown> => {
  const item = type.replace(/^Array\[(.*)\]$/, '$1');
  const scalar =
    item === 'Int'
      ? fc.oneof(fc.integer(), hostileNumber)
      : item === 'Float'
        ? fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hostileNumber)
        : item === 'Boolean'
          ? fc.boolean()
          : hostileString;
  return type.startsWith('Array[') ? fc.array(scalar, { maxLength: 4 }) : scalar;
};

/**
 * Hints from the rule catalog (GET /service/alert_system_service_get_service_list/): rule bodies
 * whose args fit their service (its examples, valid values, or hostile values of the declared
 * type), and the source fields that filters, sorts and exclusions name.
 */
function catalogHints(catalog: CatalogRow[], ids: readonly number[]): Pick<FuzzContext, 'hints' | 'bodyHints'> {
  const argsFor = (row: CatalogRow) =>
    fc.record(
      Object.fromEntries(
        row.args_schema.params.map((param) => [
          param.name,
          fc.oneof(
            {
              weight: 3,
              arbitrary: param.valid_values?.length
                ? fc.constantFrom(...param.valid_values)
                : fc.constant(param.example ?? 'acme.com'),
            },
            { weight: 2, arbitrary: argOfType(param.type) },
            { weight: 1, arbitrary: hostileValue },
          ),
        ]),
      ),
      { requiredKeys: row.args_schema.params.filter((param) => param.required).map((param) => param.name) },
    );
  const id = ids.length ? fc.constantFrom(...ids) : fc.constant(1);
  const ruleBody = fc.oneof(
    ...catalog.map((row) =>
      fc.record(
        {
          name: fc.string({ minLength: 1, maxLength: 30 }),
          service: fc.constant(row.id),
          args: argsFor(row),
          email_template: id,
          recipients: fc.array(id, { maxLength: 2 }),
        },
        { requiredKeys: ['name', 'service', 'args', 'email_template'] },
      ),
    ),
  );
  const fields = (pick: (row: CatalogRow) => string[]) => [...new Set(catalog.flatMap(pick))];
  const filterable = fields((row) => row.filterable_fields);
  const sortable = fields((row) => row.sortable_fields);
  return {
    hints: {
      service: fc.constantFrom(...catalog.map((row) => row.id)),
      field: fc.constantFrom(...fields((row) => row.excludable_fields)),
      filter: fc.array(
        fc
          .tuple(
            fc.constantFrom(...filterable, '__proto__', 'constructor'),
            fc.oneof(hostileString, fc.constant('acme_leaks')),
          )
          .map(([field, value]) => `${field}:${value}`),
        { maxLength: 3 },
      ),
      sort: fc
        .tuple(fc.constantFrom('', '-'), fc.constantFrom(...sortable, '__proto__'))
        .map(([sign, field]) => sign + field),
    },
    bodyHints: { createAlertRule: ruleBody, updateAlertRule: ruleBody },
  };
}

export interface FuzzTarget {
  baseUrl: string;
  operations: FuzzOperation[];
  /** The cases to draw: every operation, as the member or (1 in 4) the system account. */
  arbitrary: fc.Arbitrary<FuzzCase>;
  close(): Promise<void>;
}

/**
 * A real server on 127.0.0.1 (app.listen on an ephemeral port) on a fresh store, with a small
 * world to fuzz: messages, a template, recipient, webhook, a messenger rule whose first run
 * matched, an exclusion, a search in the history, and a second organization whose ids must
 * answer 404. The rate limits are off (the fuzz is not a load test) and the per-address login
 * slow-down is set out of reach, so every case is judged rather than refused.
 */
export async function startFuzzTarget(options: { adminUrl?: string } = {}): Promise<FuzzTarget> {
  const location = await createTestStoreLocation(options.adminUrl ? { adminUrl: options.adminUrl } : {});
  const t = await createTestApp({
    location,
    env: { DRAGNET_RATE_LIMITS: 'off', DRAGNET_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000000' },
  });
  try {
    await t.createUser({ org: 'Fuzz', email: 'fuzz@fuzz.test' });
    await t.createUser({ org: 'Other', email: 'other@other.test' });
    await t.createUser({ org: 'Operators', email: 'root@ops.test', role: 'system' });
    const [member, other, system] = await Promise.all(
      ['fuzz@fuzz.test', 'other@other.test', 'root@ops.test'].map((email) => t.login(email)),
    );
    await loadCorpus(t, [
      channel(
        'acme_leaks',
        [message(1, 'acme.com admin:hunter2'), message(2, 'dump of acme.com users'), message(3, 'nothing here')],
        { category: 'leaks' },
      ),
      channel('__proto__', [message(4, 'constructor toString acme.com')], { category: 'constructor' }),
    ]);
    const ids = new Set<number>();
    const post = async (token: string, url: string, body: unknown) => {
      const response = await t.request({ method: 'POST', url, token, body });
      if (response.statusCode >= 300) throw new Error(`seeding ${url}: ${response.statusCode} ${response.body}`);
      const created = response.json() as { id?: number; search_history_id?: number };
      for (const id of [created.id, created.search_history_id]) if (id) ids.add(id);
      return created;
    };
    for (const token of [member!.access, other!.access]) {
      const template = await post(token, '/service/alert_system_setting_create_template/', {
        name: 'fuzz template',
        subject: 'Alert {alert_rule_name} {__proto__}',
        body: '{alert_rule_name}: {number_of_hits} hits in {service} on {current_date}: {match_detail_link}',
      });
      const recipient = await post(token, '/service/alert_system_setting_create_recipient/', {
        email: 'soc@fuzz.test',
      });
      await post(token, '/service/alert_system_setting_create_webhook/', {
        name: 'fuzz hook',
        url: 'https://hooks.example.test/x',
        headers: { 'X-Team': 'soc' },
      });
      const rule = await post(token, '/service/alert_system_alert_create_alert_rule/', {
        name: 'acme watch',
        service: 1,
        args: { query: 'acme.com' },
        email_template: template.id,
        recipients: [recipient.id],
      });
      await post(token, `/service/alert_system_exclusion_create/${rule.id}/`, {
        field: 'channel_username',
        value: 'acme_leaks',
      });
      await post(token, '/service/messenger-search-create/', { query: 'acme.com' });
    }
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address() as AddressInfo;
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument;
    const operations = operationsOf(doc);
    const known = [...ids, 1, 2, 3];
    const catalog = (
      await t.request({ method: 'GET', url: '/service/alert_system_service_get_service_list/', token: member!.access })
    ).json() as CatalogRow[];
    const context = { ids: known, ...catalogHints(catalog, known) };
    const arbitrary = fc.oneof(
      { weight: 3, arbitrary: fuzzCases(operations, { token: member!.access, ...context }) },
      { weight: 1, arbitrary: fuzzCases(operations, { token: system!.access, ...context }) },
    );
    return {
      baseUrl: `http://127.0.0.1:${address.port}`,
      operations,
      arbitrary,
      close: async () => {
        await t.close();
        await location.drop();
      },
    };
  } catch (error) {
    await t.close();
    await location.drop();
    throw error;
  }
}
