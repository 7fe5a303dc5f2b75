import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toAppError } from '../../../http/error-handler.ts';
import { AppError, statusByCode, validationError } from '../../../lib/errors.ts';
import type { ObjectFilters, ObjectPage, PageItem } from './taxii-objects.ts';
import { encodeNext } from './taxii-objects.ts';

/** TAXII 2.1 section 1.6.8: every TAXII resource, the objects envelope included. */
export const TAXII_MEDIA_TYPE = 'application/taxii+json;version=2.1';
/** What the collections hold (their media_types, the manifest's media_type). */
export const STIX_MEDIA_TYPE = 'application/stix+json;version=2.1';

/** Default and largest `limit` (objects per page): docs/taxii.md. */
export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 10_000;

/**
 * Whether an Accept header lets us answer with TAXII 2.1 JSON: no header, a wildcard, or
 * `application/taxii+json` without a version or with version 2.1 (section 1.6.8.1). A range
 * with q=0 refuses.
 */
export function acceptsTaxii(header: string | undefined): boolean {
  if (header === undefined || header.trim() === '') return true;
  return header.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const values = new Map(
      params.map((param) => {
        const [name = '', value = ''] = param.split('=').map((part) => part.trim().replace(/^"|"$/g, ''));
        return [name, value] as const;
      }),
    );
    if (values.get('q') !== undefined && Number(values.get('q')) === 0) return false;
    if (type === '*/*' || type === 'application/*') return true;
    if (type !== 'application/taxii+json') return false;
    const version = values.get('version');
    return version === undefined || version === '2.1';
  });
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  503: 'Service unavailable',
};

/** A TAXII 2.1 error message (section 3.6.1), from the service's one error set. */
export function sendTaxiiError(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  for (const [name, value] of Object.entries(error.headers ?? {})) reply.header(name, value);
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  // RFC 7235 4.1: both schemes a TAXII client may use (an API key as a Basic password).
  if (error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="dragnet", Basic realm="dragnet"');
  const status = statusByCode[error.code];
  const body = {
    title: TITLES[status] ?? 'Internal error',
    description: error.message,
    error_id: request.id,
    error_code: error.code,
    http_status: String(status),
    external_details: 'docs/taxii.md of the Dragnet source tree',
    // What the service's JSON error body carries beside code and message (a 429's limit and
    // retry_after_seconds, spec 7) belongs in the details a TAXII client reads.
    details: { request_id: request.id, ...(error.fields ? { fields: error.fields } : {}), ...error.extra },
  };
  return sendJsonText(reply.code(status), JSON.stringify(body));
}

/** The error handler of the /taxii2/ scope: every failure there is an error message. */
export function taxiiErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const appError = toAppError(error);
  if (appError.code === 'internal_error') request.log.error({ err: error }, 'request failed');
  return sendTaxiiError(request, reply, appError);
}

/**
 * Sends a TAXII body under exactly TAXII_MEDIA_TYPE: as a Buffer, since Fastify would add a
 * charset to a string's content type and quote the version ("2.1"), which strict clients refuse.
 */
export const sendJsonText = (reply: FastifyReply, text: string) =>
  reply.header('content-type', TAXII_MEDIA_TYPE).send(Buffer.from(text));

export const sendTaxii = (reply: FastifyReply, body: unknown) => sendJsonText(reply, JSON.stringify(body));

/** The query of the objects, manifest and versions endpoints (section 3.4), as the routes take it. */
export type PageQuery = Partial<
  Record<
    'added_after' | 'limit' | 'next' | 'match[id]' | 'match[type]' | 'match[version]' | 'match[spec_version]',
    string
  >
>;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function timestamp(field: string, value: string): number {
  const ms = TIMESTAMP.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms))
    throw validationError(field, 'must be an RFC 3339 timestamp in UTC, e.g. 2026-03-10T09:00:00.000Z');
  return ms;
}

const list = (value: string | undefined) =>
  value === undefined
    ? null
    : new Set(
        value
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean),
      );

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^[0-9]{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1)) throw validationError('limit', 'must be a positive integer');
  // Section 3.4.1: the server may return fewer than the client asks for.
  return Math.min(limit, MAX_LIMIT);
}

function parseVersions(value: string | undefined): Set<number> | null {
  const versions = list(value);
  if (!versions || ['last', 'first', 'all'].some((word) => versions.has(word))) return null;
  return new Set([...versions].map((version) => timestamp('match[version]', version)));
}

export function parsePageQuery(query: PageQuery) {
  const filters: ObjectFilters = {
    ids: list(query['match[id]']),
    types: list(query['match[type]']),
    versions: parseVersions(query['match[version]']),
    specVersions: list(query['match[spec_version]']),
  };
  return {
    limit: parseLimit(query.limit),
    addedAfter: query.added_after === undefined ? null : timestamp('added_after', query.added_after),
    filters,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Section 3.4.1: the dates the first and last objects of a page were added. */
function dateHeaders(reply: FastifyReply, items: PageItem[]) {
  if (items.length === 0) return;
  reply.header('x-taxii-date-added-first', iso(items[0]!.dateAdded));
  reply.header('x-taxii-date-added-last', iso(items[items.length - 1]!.dateAdded));
}

/** A page's `more` and `next` (section 3.7), before what the page holds. */
const paged = <T extends object>(page: ObjectPage, body: T) => ({
  more: page.next !== null,
  next: page.next ? encodeNext(page.next) : undefined,
  ...body,
});

/**
 * An envelope (section 3.7): one JSON.stringify of the page, the mapper's objects as they are
 * (no schema serializer walks 1,000–10,000 objects first; one call over the page costs about
 * half of one per object and a join).
 */
export function sendEnvelope(reply: FastifyReply, page: ObjectPage) {
  dateHeaders(reply, page.items);
  return sendTaxii(reply, paged(page, { objects: page.items.map((item) => item.object) }));
}

/** A manifest (section 5.6): one record per object of the page. */
export function sendManifest(reply: FastifyReply, page: ObjectPage) {
  dateHeaders(reply, page.items);
  const records = page.items.map((item) => ({
    id: item.object.id,
    date_added: iso(item.dateAdded),
    version: item.version,
    media_type: STIX_MEDIA_TYPE,
  }));
  return sendTaxii(reply, paged(page, { objects: records }));
}

/** The versions of one object (section 5.8). */
export function sendVersions(reply: FastifyReply, page: ObjectPage) {
  dateHeaders(reply, page.items);
  return sendTaxii(reply, paged(page, { versions: [...new Set(page.items.map((item) => item.version))] }));
}

export const refuseWrite = (what: string) =>
  new AppError('forbidden', `this TAXII server is read-only: ${what} (every collection has can_write false)`);
