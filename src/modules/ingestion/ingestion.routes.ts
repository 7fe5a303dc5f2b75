import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/auth.plugin.ts';
import { bodyStream } from '../../http/request-deadlines.ts';
import { Nullable, withErrors } from '../../http/schemas.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { findIngester, listIngesters, type SourceContext } from '../sources/index.ts';
import type { CollectorRunner } from './collector-runner.ts';

const TAG = 'ingestion';

/** Errors listed in an ingest answer; the counts cover them all. */
const ERRORS_SHOWN = 20;

const IngestErrorEntry = Type.Object({
  location: Type.String({ description: 'The record: "line 12", "record 3", …' }),
  reason: Type.String(),
});

const IngestAnswer = Type.Object({
  ingester: Type.String(),
  format: Type.String(),
  bytes: Type.Integer({ description: 'Bytes of the (decompressed) body read' }),
  records: Type.Integer(),
  accepted: Type.Integer({ description: 'Records stored' }),
  duplicates: Type.Integer({ description: 'Records already stored (re-sent data adds nothing)' }),
  rejected: Type.Integer(),
  errors: Type.Array(IngestErrorEntry, { description: `The first ${ERRORS_SHOWN} rejections` }),
  warnings: Type.Array(
    Type.Object({
      reason: Type.String({
        description: 'Why values were stored as null rather than guessed: "date in the future", …',
      }),
      count: Type.Integer(),
      examples: Type.Array(Type.String(), { description: 'The first records concerned: "line 12", …' }),
    }),
    { description: 'Values that could not be read unambiguously, per reason, the most frequent first' },
  ),
});

const CollectorStatus = Type.Object({
  name: Type.String(),
  source: Nullable(Type.String({ description: 'The source it feeds; null for the inbox (every source)' })),
  description: Type.String(),
  enabled: Type.Boolean(),
  interval_seconds: Type.Integer(),
  running: Type.Boolean(),
  next_run_at: Nullable(Type.String({ format: 'date-time' })),
  last_run_at: Nullable(Type.String({ format: 'date-time' })),
  last_success_at: Nullable(Type.String({ format: 'date-time' })),
  last_error: Nullable(Type.String()),
  last_error_at: Nullable(Type.String({ format: 'date-time' })),
  consecutive_failures: Type.Integer(),
  runs: Type.Integer(),
  items_last_run: Nullable(Type.Integer()),
  items_total: Type.Integer(),
  cursor: Type.Unknown({ description: "Where the collector stopped (the collector's own shape)" }),
});

function requireSystemAccount(request: FastifyRequest) {
  const auth = requireAuth(request);
  if (auth.user.role !== 'system') throw new AppError('forbidden', 'only system accounts may do this');
  return auth;
}

/**
 * File extensions by body type, for ingesters that tell formats apart by the file name. A Map:
 * the type is the client's header, and "constructor" must not find Object's.
 */
const EXTENSIONS = new Map([
  ['application/x-ndjson', '.jsonl'],
  ['application/jsonl', '.jsonl'],
  ['application/json', '.json'],
  ['application/xml', '.xml'],
  ['text/xml', '.xml'],
  ['text/csv', '.csv'],
  ['text/plain', '.txt'],
  ['application/zip', '.zip'],
]);

/** The name the body is ingested under: `?name=` or `body` with the extension of its type. */
function bodyFileName(name: string | undefined, contentType: string | undefined): string {
  if (name !== undefined) return name;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return `body${EXTENSIONS.get(type) ?? ''}`;
}

/** Counts the bytes passing through and fails the stream once there are more than `limit`. */
function byteLimit(limit: number, counted: { bytes: number }) {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counted.bytes += chunk.length;
      if (counted.bytes > limit) callback(new AppError('payload_too_large', `the body is larger than ${limit} bytes`));
      else callback(null, chunk);
    },
  });
}

/**
 * Feeding Dragnet from other hosts (docs/collectors.md): `POST /ingest/<ingester>/` takes the body
 * in the ingester's own format (NDJSON, a Discord export, a certstream file…), streamed to a file
 * in the data folder and ingested as `dragnet ingest` would; GET /service/collectors/ shows the
 * collectors' health. Both are for system (operator) accounts only.
 */
export function ingestionRoutes(deps: {
  context: SourceContext;
  runner: CollectorRunner;
  maxBytes: number;
  metrics: Metrics;
}): FastifyPluginAsyncTypebox {
  const names = listIngesters().map((ingester) => ingester.name);
  return async (app) => {
    // The body is the ingester's input as it comes: no parser reads it into memory.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    app.post(
      '/ingest/:ingester/',
      {
        schema: {
          operationId: 'ingest',
          tags: [TAG],
          summary: "Ingest a body in the ingester's format (system accounts); gzip with Content-Encoding: gzip",
          params: Type.Object({ ingester: Type.String({ description: `One of: ${names.join(', ')}` }) }),
          querystring: Type.Object({
            format: Type.Optional(
              Type.String({ description: "One of the ingester's formats (docs/ingest.md); its first by default" }),
            ),
            shortener: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 200,
                description: 'url_shortener: the shortener of dumps without a #PREFIX: header (v.gd or https://v.gd/)',
              }),
            ),
            name: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 200,
                pattern: '^[^/\\\\]+$',
                description:
                  'The file name the body is ingested under (a leak or dump is named after it; some ingesters tell formats by extension). Default: body.<extension of the Content-Type>',
              }),
            ),
          }),
          response: withErrors({ 200: IngestAnswer }, [400, 401, 403, 404, 413, 415]),
          security: [{ bearerAuth: [] }],
        },
        config: { requiresAuth: true, streamedBody: true },
      },
      async (request) => {
        requireSystemAccount(request);
        const ingester = findIngester(request.params.ingester);
        if (!ingester)
          throw new AppError(
            'not_found',
            `no ingester named "${request.params.ingester}" (known: ${names.join(', ')})`,
          );
        const format = request.query.format ?? ingester.formats[0]!;
        if (!ingester.formats.includes(format))
          throw validationError('format', `must be one of: ${ingester.formats.join(', ')}`);
        const declared = Number(request.headers['content-length']);
        const encoding = request.headers['content-encoding'];
        if (encoding !== undefined && encoding !== 'gzip' && encoding !== 'identity') {
          throw new AppError('unsupported_media_type', 'Content-Encoding must be gzip or identity');
        }
        if (encoding !== 'gzip' && declared > deps.maxBytes)
          throw new AppError('payload_too_large', `the body is larger than ${deps.maxBytes} bytes`);

        const name = bodyFileName(request.query.name, request.headers['content-type']);
        if (name === '.' || name === '..') throw validationError('name', 'must be a file name');
        const folder = path.join(deps.context.dataDir, 'tmp', `ingest-${randomUUID()}`);
        mkdirSync(folder, { recursive: true });
        const file = path.join(folder, name);
        const counted = { bytes: 0 };
        try {
          const body = bodyStream(request);
          const stages =
            encoding === 'gzip'
              ? [body, createGunzip(), byteLimit(deps.maxBytes, counted)]
              : [body, byteLimit(deps.maxBytes, counted)];
          try {
            await pipeline([...stages, createWriteStream(file)]);
          } catch (error) {
            if (error instanceof AppError) throw error;
            throw new AppError('bad_request', `the body could not be read: ${(error as Error).message}`);
          }
          const report = await ingester.run(deps.context, [file], { format, shortener: request.query.shortener });
          deps.metrics.ingested(ingester.name, 'api', report.tally);
          // The ingester names the body by its file name (no server path): a record is told by its place in it.
          const inBody = (location: string) =>
            location === name ? 'body' : location.startsWith(`${name} `) ? location.slice(name.length + 1) : location;
          const errors = report.tally.errors
            .slice(0, ERRORS_SHOWN)
            .map((entry) => ({ location: inBody(entry.location), reason: entry.reason }));
          const warnings = report.tally.warnings.map((entry) => ({ ...entry, examples: entry.examples.map(inBody) }));
          if (report.failed) {
            throw new AppError(
              'validation_failed',
              `the body is not ${ingester.name} input in format ${format}: ${errors[0]?.reason ?? 'unreadable'}`,
              {
                fields: [{ field: 'body', message: errors[0]?.reason ?? 'unreadable' }],
              },
            );
          }
          const { records, added, duplicates, rejected } = report.tally;
          return {
            ingester: ingester.name,
            format,
            bytes: counted.bytes,
            records,
            accepted: added,
            duplicates,
            rejected,
            errors,
            warnings,
          };
        } finally {
          rmSync(folder, { recursive: true, force: true });
        }
      },
    );

    app.get(
      '/service/collectors/',
      {
        schema: {
          operationId: 'listCollectors',
          tags: [TAG],
          summary: 'Collectors with their schedule, cursor and health (system accounts)',
          response: withErrors({ 200: Type.Array(CollectorStatus) }, [401, 403]),
        },
      },
      async (request) => {
        requireSystemAccount(request);
        return deps.runner.status();
      },
    );
  };
}
