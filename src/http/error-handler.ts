import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isConnectionFailure, isStatementTimeout } from '../db/pg.ts';
import { AppError, type ErrorCode, statusByCode } from '../lib/errors.ts';
import { fieldErrorsFrom } from './validation.ts';

/** Framework errors that are the client's fault, mapped onto our codes. */
const frameworkCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'bad_request',
};

/**
 * A store too busy to answer in time is no fault of the request: SQLite's write lock held by
 * another process (an ingest) past DRAGNET_SQLITE_BUSY_TIMEOUT_MS, a PostgreSQL statement
 * cancelled by its statement timeout (SQLSTATE 57014), or PostgreSQL out of reach or of
 * connections. The client may try again.
 */
function storeBusy(error: FastifyError): AppError | null {
  const code = (error as { code?: unknown }).code;
  if (code === 'SQLITE_BUSY')
    return new AppError('service_unavailable', 'the store is busy with another writer; try again shortly', {
      retryAfterSeconds: 5,
      cause: error,
    });
  if (isStatementTimeout(error)) {
    return new AppError(
      'service_unavailable',
      'the query took longer than the statement timeout allows; narrow it or try again later',
      { retryAfterSeconds: 30, cause: error },
    );
  }
  if (isConnectionFailure(error))
    return new AppError(
      'service_unavailable',
      'the database is unreachable or has no free connection; try again shortly',
      {
        retryAfterSeconds: 5,
        cause: error,
      },
    );
  return null;
}

export function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;
  const busy = storeBusy(error);
  if (busy) return busy;
  if (error.validation) {
    const fields = fieldErrorsFrom(error.validation as never, error.validationContext);
    const summary = fields.map((f) => `${f.field} ${f.message}`).join('; ');
    return new AppError('validation_failed', `invalid request: ${summary}`, { fields });
  }
  const mapped = error.code ? frameworkCodes[error.code] : undefined;
  if (mapped) {
    const message =
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError
        ? 'body is not valid JSON'
        : error.message;
    return new AppError(mapped, message);
  }
  if (error instanceof SyntaxError || (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)) {
    return new AppError('bad_request', error instanceof SyntaxError ? 'body is not valid JSON' : error.message);
  }
  return new AppError('internal_error', 'internal error; the request id identifies it in the server log', {
    cause: error,
  });
}

export function sendError(request: FastifyRequest, reply: FastifyReply, appError: AppError) {
  for (const [name, value] of Object.entries(appError.headers ?? {})) reply.header(name, value);
  if (appError.retryAfterSeconds !== undefined) reply.header('retry-after', String(appError.retryAfterSeconds));
  // RFC 6750 3; a route that also takes HTTP Basic (API keys) names both schemes (auth.plugin.ts).
  if (appError.code === 'unauthorized' && !appError.headers?.['www-authenticate'])
    reply.header('www-authenticate', 'Bearer realm="dragnet"');
  return reply.code(statusByCode[appError.code]).send({
    code: appError.code,
    message: appError.message,
    ...(appError.fields ? { fields: appError.fields } : {}),
    ...appError.extra,
    request_id: request.id,
  });
}

/**
 * hasRoute reads its url as a route pattern: `*` and `:` there are a wildcard and a parameter
 * (a `*` before the end throws), and no declared route has them literally, so a path with either
 * is simply not one of ours.
 */
const isConcretePath = (path: string) => !/[*:]/.test(path);

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function registerErrorHandling(
  app: FastifyInstance,
  options: { appShell?: (request: FastifyRequest, reply: FastifyReply) => boolean } = {},
) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'request failed');
    else if (appError.code === 'service_unavailable' && appError.cause) request.log.warn({ err: error }, 'store busy');
    return sendError(request, reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // A path that exists under other methods (TRACE /token/, GET of a POST-only path) is a 405
    // naming them, not a 404 that sends the client looking for another path.
    const allowed = isConcretePath(path) ? METHODS.filter((method) => app.hasRoute({ method, url: path })) : [];
    if (allowed.length) {
      void reply.header('allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new AppError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
        ),
      );
    }
    // The dashboard's own routes (/search, …) are pages its router draws from index.html.
    if (options.appShell?.(request, reply)) return reply;
    const withSlash = path.endsWith('/') ? null : `${path}/`;
    const hint =
      withSlash && isConcretePath(withSlash) && app.hasRoute({ method: request.method as 'GET', url: withSlash })
        ? ` (paths end with a slash: ${withSlash})`
        : '';
    return sendError(request, reply, new AppError('not_found', `no route ${request.method} ${path}${hint}`));
  });
}
