import { expect } from 'vitest';

/**
 * A TAXII 2.1 client written from the specification (OASIS taxii-v2.1-os), not from the
 * server: it follows discovery to the API root, the collections and their objects with `next`,
 * and checks at each step the media type, the required fields and the headers the spec asks for.
 */

export const TAXII_21 = 'application/taxii+json;version=2.1';
export const STIX_21 = 'application/stix+json;version=2.1';

export interface TaxiiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An answer of `app.inject` as the checks here take it. */
export const injectedAnswer = (response: {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}): TaxiiResponse => ({
  status: response.statusCode,
  headers: response.headers as TaxiiResponse['headers'],
  body: response.body,
});

/** Sends one request (absolute URL or path) and returns what came back. */
export type TaxiiTransport = (
  url: string,
  init: { method?: string; headers: Record<string, string>; body?: string },
) => Promise<TaxiiResponse>;

export interface TaxiiCollectionResource {
  id: string;
  title: string;
  description?: string;
  can_read: boolean;
  can_write: boolean;
  media_types?: string[];
}

export type StixJson = { type: string; id: string; spec_version?: string; [property: string]: unknown };

export interface ManifestRecord {
  id: string;
  date_added: string;
  version: string;
  media_type?: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * A media type as `type;name=value` with its parameters in order, charset left out: section
 * 1.6.8 compares names case-insensitively, and HTTP allows spaces and quoted values.
 */
function normalizedType(value: string | string[] | undefined): string {
  const [type = '', ...params] = String(value ?? '').split(';');
  const kept = params
    .map((param) =>
      param
        .trim()
        .toLowerCase()
        .replace(/\s*=\s*"?([^"]*)"?$/, '=$1'),
    )
    .filter((param) => param && !param.startsWith('charset='));
  return [type.trim().toLowerCase(), ...kept].join(';');
}

export function expectTaxiiError(response: TaxiiResponse, status: number) {
  expect(response.status, response.body).toBe(status);
  expect(normalizedType(response.headers['content-type'])).toBe(TAXII_21);
  const error = JSON.parse(response.body) as Record<string, unknown>;
  // Section 3.6.1: title is required; the others are optional, typed as listed.
  expect(typeof error.title).toBe('string');
  if ('description' in error) expect(typeof error.description).toBe('string');
  if ('error_id' in error) expect(typeof error.error_id).toBe('string');
  if ('error_code' in error) expect(typeof error.error_code).toBe('string');
  if ('http_status' in error) expect(error.http_status).toBe(String(status));
  if ('details' in error) expect(typeof error.details).toBe('object');
  return error;
}

export function taxiiClient(transport: TaxiiTransport, authorization: string) {
  const headers = { accept: TAXII_21, authorization };

  async function get<T>(url: string): Promise<{ body: T; response: TaxiiResponse }> {
    const response = await transport(url, { headers });
    expect(response.status, `${url}: ${response.body}`).toBe(200);
    expect(normalizedType(response.headers['content-type'])).toBe(TAXII_21);
    return { body: JSON.parse(response.body) as T, response };
  }

  /** Section 3.7 / 5.3: an envelope, whose `next` appears exactly when `more` is true. */
  function checkPaged(page: { more?: boolean; next?: string }) {
    if (page.more !== undefined) expect(typeof page.more).toBe('boolean');
    if (page.more) expect(typeof page.next).toBe('string');
  }

  function checkDateHeaders(response: TaxiiResponse, count: number) {
    if (count === 0) return;
    for (const name of ['x-taxii-date-added-first', 'x-taxii-date-added-last']) {
      expect(String(response.headers[name]), name).toMatch(TIMESTAMP);
    }
  }

  const withQuery = (url: string, query: Record<string, string | undefined>) => {
    const params = Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined);
    if (params.length === 0) return url;
    return `${url}?${params.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&')}`;
  };

  const client = {
    /** Section 4.1: discovery; returns the default API root's URL. */
    async discover(url: string): Promise<string> {
      const { body } = await get<{ title: string; default?: string; api_roots?: string[] }>(url);
      expect(typeof body.title).toBe('string');
      expect(Array.isArray(body.api_roots)).toBe(true);
      const root = body.default ?? body.api_roots![0]!;
      expect(body.api_roots).toContain(root);
      return root;
    },

    /** Section 4.2: an API root that speaks TAXII 2.1. */
    async apiRoot(url: string) {
      const { body } = await get<{ title: string; versions: string[]; max_content_length: number }>(url);
      expect(typeof body.title).toBe('string');
      expect(body.versions.map(normalizedType)).toContain(TAXII_21);
      expect(Number.isInteger(body.max_content_length)).toBe(true);
      return body;
    },

    /** Section 5.1: the collections, each with its required fields. */
    async collections(root: string): Promise<TaxiiCollectionResource[]> {
      const { body } = await get<{ collections?: TaxiiCollectionResource[] }>(new URL('collections/', root).href);
      const collections = body.collections ?? [];
      for (const collection of collections) {
        expect(collection.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(typeof collection.title).toBe('string');
        expect(typeof collection.can_read).toBe('boolean');
        expect(typeof collection.can_write).toBe('boolean');
        if (collection.media_types) expect(collection.media_types.map(normalizedType)).toContain(STIX_21);
        const { body: one } = await get<TaxiiCollectionResource>(new URL(`collections/${collection.id}/`, root).href);
        expect(one).toEqual(collection);
      }
      return collections;
    },

    /** Section 5.3: every object of a collection, following `next` from the first page. */
    async objects(root: string, collectionId: string, query: Record<string, string | undefined> = {}) {
      const base = new URL(`collections/${collectionId}/objects/`, root).href;
      const objects: StixJson[] = [];
      let pages = 0;
      let next: string | undefined;
      do {
        const { body, response } = await get<{ more?: boolean; next?: string; objects?: StixJson[] }>(
          withQuery(base, { ...query, next }),
        );
        checkPaged(body);
        const page = body.objects ?? [];
        if (query.limit) expect(page.length).toBeLessThanOrEqual(Number(query.limit));
        for (const object of page) {
          expect(typeof object.type).toBe('string');
          expect(object.id.startsWith(`${object.type}--`)).toBe(true);
        }
        checkDateHeaders(response, page.length);
        objects.push(...page);
        pages++;
        next = body.more ? body.next : undefined;
      } while (next);
      return { objects, pages };
    },

    /** Section 5.2: the manifest, every page of it. */
    async manifest(root: string, collectionId: string, query: Record<string, string | undefined> = {}) {
      const base = new URL(`collections/${collectionId}/manifest/`, root).href;
      const records: ManifestRecord[] = [];
      let next: string | undefined;
      do {
        const { body, response } = await get<{ more?: boolean; next?: string; objects?: ManifestRecord[] }>(
          withQuery(base, { ...query, next }),
        );
        checkPaged(body);
        for (const record of body.objects ?? []) {
          expect(record.date_added).toMatch(TIMESTAMP);
          expect(record.version).toMatch(TIMESTAMP);
          expect(normalizedType(record.media_type)).toBe(STIX_21);
        }
        checkDateHeaders(response, body.objects?.length ?? 0);
        records.push(...(body.objects ?? []));
        next = body.more ? body.next : undefined;
      } while (next);
      return records;
    },

    /** Section 5.5: one object (all its versions the collection holds). */
    async object(root: string, collectionId: string, objectId: string) {
      const { body } = await get<{ objects?: StixJson[] }>(
        new URL(`collections/${collectionId}/objects/${objectId}/`, root).href,
      );
      return body.objects ?? [];
    },

    /** Section 5.8: an object's versions. */
    async versions(root: string, collectionId: string, objectId: string) {
      const { body } = await get<{ more?: boolean; versions?: string[] }>(
        new URL(`collections/${collectionId}/objects/${objectId}/versions/`, root).href,
      );
      checkPaged(body);
      for (const version of body.versions ?? []) expect(version).toMatch(TIMESTAMP);
      return body.versions ?? [];
    },

    /** A raw request with this client's headers (and any others): for the error cases. */
    raw: (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
      transport(url, { method: init.method, headers: { ...headers, ...init.headers }, body: init.body }),
  };
  return client;
}

export type TaxiiClient = ReturnType<typeof taxiiClient>;
